"""The MCP server: six read-only tools over the query layer, and the protocol that teaches an
agent to use them.

There is no write tool, on purpose: agents read untrusted text and can be talked into things,
and a memory that agents can write is a memory one fooled agent can poison for all. The library
grows only from real sessions, ingested by connectors the admin runs.

Every tool asks the query layer with the calling client's source patterns as `allowed`: over
HTTP the client is the one whose key authenticated the request; over stdio (or in memory) it is
the local user, who reads everything unless `client=` names a configured client to act as.
"""

import logging
import os
import time
from typing import Annotated, Any, Literal

import apsw
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, JSONRPCMessage, JSONRPCNotification, TextContent, ToolAnnotations
from mcp_types.methods import SPEC_CLIENT_METHODS
from pydantic import Field

from jezero import __version__
from jezero import query as q
from jezero.config import Config
from jezero.query import ItemNotFound, QueryError
from jezero.server import shape
from jezero.server.auth import ClientKeyVerifier
from jezero.server.clients import ClientRegistry
from jezero.server.library import ConnectionMode, Library
from jezero.store import StoreError, engines

log = logging.getLogger("jezero.server")

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                            open_world_hint=False)

INSTRUCTIONS = """\
Jezero is a read-only memory of past work: each item summarises one session of a coding agent \
(title, summary, questions, atoms such as errors, commands and files), with its project, source \
and date. Use it like a colleague's notebook.

1. Search before non-trivial work: a bug, a feature, a decision, a part of the code you have \
not seen yet. Use two to five distinctive words (tool, file, service, error code); pasting a \
distinctive part of an error message often works best.
2. Matching is literal: words, not meanings. When a search finds nothing useful, retry with a \
synonym, the singular, or a fragment ("migrat" finds migrate and migrations). Use the project, \
source and since filters rather than adding those names to the query; `catalog` lists them. \
search also looks through the sessions' transcripts; recall shows the transcript messages that \
hold your words, with the messages around them.
3. Before you answer with a decision, plan, status or number taken from an item, call \
later(item_id) (with the decision's own words as query) to see whether a newer session changed \
it. If it says matched_by = project_timeline, nothing newer matched the subject: read those \
items as context, not as a change.
4. Cite the item ids you rely on, like [item 42]; open an item with get_item before building on \
it.
5. Never guess. If Jezero has nothing on a question, say so; do not invent what was decided.
6. There is nothing to save: Jezero is read-only. Memory grows from the sessions themselves, \
which are summarised after they end.
"""

# With the semantic lane on, "literal" is only half of it: the server says so, in the instructions
# and in search's description, and keeps the advice (distinctive words still rank best).
LITERAL = "Matching is literal: words, not meanings."
BY_MEANING = ("Matching is on words, and also on meaning: this server's semantic lane is on, so a question "
              "in other words can find a session, but distinctive words still rank best.")

DESCRIPTIONS = {
    "search": """\
Search past sessions. Returns items (id, title, clipped summary, project, source, agent, date, \
score), one per session, best first: the items' summaries (relevance blended with recency) and \
the sessions' transcript messages are ranked apart and fused. Call it before non-trivial work. Matching is \
literal and on words or fragments{meaning}: use two to five distinctive words (names of tools, files, \
services, error codes; quotes for an exact phrase); if nothing fits, retry with a synonym, the \
singular or a shorter fragment. Filter with project, source and since instead of adding those \
words to the query. Then get_item for the full record and later before relying on a decision.""",
    "later": """\
Newer items on the same subject as an item, newest first: what changed since. Call it before \
answering with a decision, plan, status or number taken from an item: a later session may have \
revised it. Pass the decision's own words as query to make the subject precise (they narrow the item's own \
subject, what it decided and touched, and do not replace it). matched_by = "subject": these items match the subject. matched_by = \
"project_timeline": nothing newer matched; these are just the project's newer items, context and \
not evidence of a change.""",
    "timeline": """\
Items in date order, newest first, of one project or one source (give at least one of them; \
catalog lists the names): what happened recently, or between two dates (since inclusive, until \
exclusive). Use it to catch up on a project before working in it; use search to find a subject.""",
    "get_item": """\
One item in full: summary, the questions it answers, its atoms (errors, commands, files, \
decisions, verbatim), project, source, agent, session and dates. Set include_original to also get \
the (redacted) transcript text behind it, clipped to a maximum. Cite the id when you use it.""",
    "recall": """\
Find where something was said: the transcript messages of past sessions that hold your words \
(user and assistant messages; tool calls and output with include_tools), each with a snippet, its \
session, item_id (for get_item) and the messages around it (window). Use it for an exact string \
said once (a name, a flag, an error line) or to read the exchange around a decision; use search \
to find which session is about a subject. Several words: messages holding more of them come \
first. sort=newest|oldest orders by time instead. boolean takes an FTS5 expression \
(a AND (b OR c) NOT d). discover=true lists each matching project's newest hit.""",
    "catalog": """\
The sources and projects you can read, with item counts and last activity: the exact names to \
use in the project and source filters of search and timeline. Call it when you do not know the \
name of a project, or to see what the memory holds.""",
}

ItemId = Annotated[int, Field(description="An item id, as returned by search, timeline or later.")]
Query = Annotated[str, Field(description="Two to five distinctive words or fragments; quotes for an exact phrase.")]
Project = Annotated[str | None, Field(description="Only this project (exact name, see catalog).")]
Source = Annotated[str | None, Field(description="Only this source (exact name, see catalog).")]
Since = Annotated[str | None, Field(description="Only items at or after this date or ISO datetime (UTC unless an offset is given).")]
Until = Annotated[str | None, Field(description="Only items before this date or ISO datetime.")]


def _limit(default: int) -> Any:
    return Annotated[int | None, Field(description=f"How many items (default {default}, capped by the server).")]


class _Tools:
    """What the tools share: the clients, the library, and who the local caller acts as."""

    def __init__(self, registry: ClientRegistry, library: Library, *, http: bool, client: str | None):
        self.registry = registry
        self.library = library
        self.http = http
        self.client = client

    def allowed(self) -> list[str]:
        """The source patterns of the caller of the current request."""
        token = get_access_token()
        if token is not None:
            name = token.client_id
        elif self.http:
            # An HTTP server reached without a verified key (it should have been a 401).
            raise ToolError("no valid client key on this request")
        elif self.client is None:
            return ["*"]
        else:
            name = self.client
        client = self.registry.by_name(name)
        if client is None:
            raise ToolError(f"client {name!r} is not in the server's config any more (revoked)")
        return list(client.sources)

    def options(self):
        return self.registry.config().search

    def semantic(self):
        """The vector lane when the config turns it on (made again when its section changes),
        else None: nothing of it is imported."""
        config = self.registry.config().semantic
        if not config.enabled:
            return None
        lane = getattr(self, "_lane", None)
        if lane is None or lane.config != config:
            from jezero.query.vectors import VectorLane

            lane = self._lane = VectorLane(config)
        return lane

    def run(self, fn, *args, **kwargs):
        return self.run_timed(fn, *args, **kwargs)[0]

    def run_timed(self, fn, *args, item_id: int | None = None, **kwargs) -> tuple[Any, float]:
        """Call a query function with a read-only connection; returns its answer and the seconds
        it ran (not counting the wait for a turn). Every failure the agent can act on becomes a
        ToolError with a plain message."""
        try:
            with self.library.reader() as conn:
                start = time.perf_counter()
                if item_id is not None:
                    answer = fn(conn, item_id, *args, **kwargs)
                else:
                    answer = fn(conn, *args, **kwargs)
                return answer, time.perf_counter() - start
        except ItemNotFound:
            # The same answer whether the item does not exist or belongs to a source this key
            # may not read: a key learns nothing about what it cannot see.
            raise ToolError(f"no item {item_id} (or not visible to this key)") from None
        except QueryError as e:
            raise ToolError(str(e)) from None
        except StoreError:
            raise ToolError("the library does not exist yet on the server: nothing has been ingested") from None
        except apsw.BusyError:
            raise ToolError("the library is busy; try again in a moment") from None
        except (apsw.NotADBError, apsw.CorruptError):
            raise ToolError("the library on the server is damaged: tell the person who runs Jezero") from None
        except apsw.InterruptError:
            raise ToolError("the query took too long: use more distinctive words or a filter") from None
        except apsw.SQLError as e:
            if "no such table" not in str(e):
                raise
            # An empty file where the library should be (made by hand, a copy cut short): no writer
            # has opened it yet. Was a bare "Error executing tool" and a traceback per call.
            raise ToolError("the library on the server is empty: nothing has been ingested yet") from None


def result(answer: dict[str, Any] | tuple[dict[str, Any], str]) -> CallToolResult:
    """A tool result whose text is compact JSON (an agent reads the text; an app the structure);
    given (answer, text) from shape.fitted, the text already made."""
    answer, text = answer if isinstance(answer, tuple) else (answer, shape.dumps(answer))
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=answer)


def build_mcp_server(
    source: ClientRegistry | Config | str | os.PathLike | None = None,
    *,
    client: str | None = None,
    http: bool = False,
    library: Library | None = None,
    connections: ConnectionMode = "thread",
    readers: int | None = None,
) -> MCPServer:
    """The MCP server over the library named by the config.

    source: a config path, a loaded `Config`, or a `ClientRegistry` (None: the usual lookup).
    http: require a client key on every request (streamable HTTP); the key's client decides the
        sources. Without it (stdio, in memory) the caller is the local user: every source, or
        the sources of the configured client named by `client`.
    library / connections / readers: how requests reach the SQLite file: a connection per worker
        thread or per request, and how many calls read at once (see jezero.server.library).
    """
    registry = ClientRegistry.from_source(source)
    if client is not None and registry.by_name(client) is None:
        raise ValueError(f"no client named {client!r} in {registry.path or 'the config'}")
    library = library or Library.for_config(registry.config(), mode=connections, readers=readers)
    tools = _Tools(registry, library, http=http, client=client)
    _open_engine(registry.config().search.engine, library.path)
    # Read at start, like the engine: the texts an agent is given do not change under it.
    semantic_on = registry.config().semantic.enabled

    auth: dict[str, Any] = {}
    if http:
        auth = dict(
            token_verifier=ClientKeyVerifier(registry),
            # Static keys, no authorization server: issuer_url is required by the model but unused,
            # and resource_server_url=None serves no OAuth metadata and checks no audience.
            auth=AuthSettings(issuer_url="http://127.0.0.1", resource_server_url=None),
        )
    server = MCPServer(
        "jezero",
        title="Jezero",
        description="A read-only shared memory of past work for coding agents.",
        instructions=INSTRUCTIONS.replace(LITERAL, BY_MEANING) if semantic_on else INSTRUCTIONS,
        version=__version__,
        # The SDK configures root logging when nothing else has; `jezero serve` configures it
        # first, and anyone else embedding the server gets warnings only, not every request.
        log_level="WARNING",
        **auth,
    )
    _tools_only(server)

    meaning = " (this server's semantic lane also matches meanings)" if semantic_on else ""

    @server.tool(title="Search past work", description=DESCRIPTIONS["search"].format(meaning=meaning),
                 annotations=READ_ONLY)
    def search(
        query: Query,
        project: Project = None,
        source: Source = None,
        since: Since = None,
        # search's default is the config's (`[search] default_limit`), the others' are fixed.
        limit: _limit(registry.config().search.default_limit) = None,
        explain: Annotated[bool, Field(description="Add how each score was made up.")] = False,
        lanes: Annotated[list[Literal["items", "messages", "vectors"]] | None, Field(
            description="Only these rankings: items (the summaries), messages (the transcripts), vectors (the "
                        "semantic lane, where the server has it on); every one that is on by default.")] = None,
    ) -> CallToolResult:
        options = tools.options()
        # The hooks ask for the items alone (their rule reads titles and summaries only).
        chosen = {"lanes": lanes} if lanes else {}
        hits = tools.run(q.search, query, allowed=tools.allowed(), source=source, project=project,
                         since=since, limit=limit, options=options, explain=explain, semantic=tools.semantic(),
                         **chosen)
        answer: dict[str, Any] = {"items": [shape.hit(h) for h in hits]}
        if getattr(hits, "notes", ()):
            answer["lanes_note"] = " ".join(hits.notes)  # e.g. the semantic lane is off, and why
        if getattr(hits, "cut", False):
            # The work budget ran out: these are the best of what was looked at, or nothing; that
            # is not "no match", and the advice to try other words would be wrong.
            answer["cut"] = True
            answer["note"] = ("the search was cut short by its work budget (very common words): these are the best "
                              "of what it looked at; add a project, source or since filter, or use rarer words")
        elif not hits:
            answer["note"] = ("no match. Matching is literal: retry with a synonym, the singular, a shorter "
                              "fragment, or fewer words; check filter names with catalog")
        return result(shape.fitted(answer, "items"))

    @server.tool(title="Newer work on the same subject", description=DESCRIPTIONS["later"], annotations=READ_ONLY)
    def later(
        item_id: ItemId,
        query: Annotated[str | None, Field(description="Words that narrow the subject; the item's own (its decisions and files, else its title) always apply.")] = None,
        limit: _limit(5) = None,
    ) -> CallToolResult:
        found = tools.run(q.later, query, item_id=item_id, allowed=tools.allowed(), limit=limit, options=tools.options())
        answer: dict[str, Any] = {
            "matched_by": found.get("matched_by"),
            "item": shape.hit(found.get("item") or {}),
            "items": [shape.hit(h) for h in found.get("items", [])],
        }
        if not answer["items"]:
            answer["note"] = "nothing newer in this project: as far as Jezero knows, this item is the latest word"
        elif answer["matched_by"] == "project_timeline":
            answer["note"] = ("nothing newer matched this subject; these are the project's newer items by date, "
                              "context rather than a change")
        return result(shape.fitted(answer, "items"))

    @server.tool(title="Items by date", description=DESCRIPTIONS["timeline"], annotations=READ_ONLY)
    def timeline(
        project: Project = None,
        source: Source = None,
        since: Since = None,
        until: Until = None,
        limit: _limit(20) = None,
    ) -> CallToolResult:
        items = tools.run(q.timeline, project=project, source=source, since=since, until=until, limit=limit,
                          allowed=tools.allowed(), options=tools.options())
        answer: dict[str, Any] = {"items": [shape.hit(h) for h in items]}
        if not items:
            answer["note"] = "no items for these filters; check the names with catalog"
        return result(shape.fitted(answer, "items"))

    @server.tool(title="One item in full", description=DESCRIPTIONS["get_item"], annotations=READ_ONLY)
    def get_item(
        item_id: ItemId,
        include_original: Annotated[bool, Field(description="Also return the transcript text behind the item (clipped).")] = False,
    ) -> CallToolResult:
        it = tools.run(q.get_item, item_id=item_id, include_original=include_original, allowed=tools.allowed())
        return result(shape.fit_item(shape.item(it)))

    @server.tool(title="Recall transcript messages", description=DESCRIPTIONS["recall"], annotations=READ_ONLY)
    def recall(
        query: Annotated[str | None, Field(description="Words and \"quoted phrases\", matched literally (whole words).")] = None,
        boolean: Annotated[str | None, Field(description="Instead of query: an FTS5 expression, e.g. deploy AND (rollback OR revert).")] = None,
        role: Annotated[str | None, Field(description="Only messages of this role: user, assistant, tool or system.")] = None,
        include_tools: Annotated[bool, Field(description="Also tool calls and their output.")] = False,
        include_subagents: Annotated[bool, Field(description="Also subagents' sessions.")] = False,
        since: Annotated[str | None, Field(description="Only messages at or after this date or ISO datetime (UTC unless an offset is given).")] = None,
        before: Annotated[str | None, Field(description="Only messages before this ISO datetime (a bare date includes that day).")] = None,
        projects: Annotated[list[str] | None, Field(description="Only these projects (exact names, see catalog).")] = None,
        source: Source = None,
        min_messages: Annotated[int | None, Field(description="Only sessions with at least this many messages.")] = None,
        sort: Annotated[str | None, Field(description="relevance (default), newest or oldest.")] = None,
        limit: Annotated[int | None, Field(description="How many hits (default 10, capped by the server).")] = None,
        window: Annotated[int | None, Field(description="Messages shown either side of each hit (default 2, at most 10, 0 for none).")] = None,
        discover: Annotated[bool, Field(description="One hit per project: each matching project's newest.")] = False,
    ) -> CallToolResult:
        found = tools.run(q.recall, query, boolean=boolean, allowed=tools.allowed(), role=role,
                          include_tools=include_tools, include_subagents=include_subagents, since=since,
                          before=before, projects=projects, source=source, min_messages=min_messages, sort=sort,
                          limit=limit, window=window, discover=discover, options=tools.options())
        answer = dict(found)
        if found.get("timed_out"):
            answer["note"] = "recall ran out of time: use rarer words, or add a project, source or since filter"
        elif not found.get("hits") and not found.get("projects") and "note" not in found:
            answer["note"] = ("no message holds these words (whole words: try the exact form, a synonym, or "
                              "include_tools / include_subagents)")
        return result(shape.recall(answer) if not discover else shape.fit(answer, "projects", "projects"))

    @server.tool(title="Sources and projects", description=DESCRIPTIONS["catalog"], annotations=READ_ONLY)
    def catalog() -> CallToolResult:
        cat = tools.run(q.catalog, allowed=tools.allowed())
        answer = {"sources": list(cat.get("sources", [])), "projects": list(cat.get("projects", []))}
        return result(shape.fitted(answer, "projects", "projects"))

    return server


def _open_engine(name: str, library) -> None:
    """Load the configured search index engine's plugin now rather than in the first search: it
    loads every installed plugin (connectors and summarizers import their libraries), which took
    seconds of the first agent's call on a busy machine (benchmarks/load/README.md). A failure
    is only logged: the first search reports it as before, and FTS5 answers."""
    try:
        engines.engine_for(name, library)
    except Exception as e:  # noqa: BLE001 - a broken plugin must not stop the server
        log.warning("search engine %r could not be opened at start: %s", name, e)


# Requests the SDK answers by default for any server. Jezero has no prompts or resources, so it
# must not advertise them: a client would list them on every connection and show empty menus.
UNSERVED = ("prompts/list", "prompts/get", "resources/list", "resources/read", "resources/templates/list",
            "resources/subscribe", "resources/unsubscribe", "subscriptions/listen")


def _tools_only(server: MCPServer) -> None:
    """Drop the handlers Jezero does not serve; the capabilities the server advertises follow
    from its handlers (tests/test_server_http.py checks what a real client is told)."""
    handlers = server._lowlevel_server._request_handlers
    for method in UNSERVED:
        handlers.pop(method, None)


# The refusal both transports give a request whose id the SDK cannot read (stdio.py, http.py).
REFUSED_ID = "Invalid request: a request's id must be a string or a whole number"


def request_without_id(message: JSONRPCMessage) -> bool:
    """A notification named like a request: a request whose id the SDK could not read (`1.5`,
    `{}`, `[1]`, `true`, none). JSON-RPC 2.0 makes a notification of a message without an id and
    MCP's ids are strings or integers, so the SDK never answers it: the client would wait for
    ever. Both transports refuse it with -32600 and a null id."""
    return isinstance(message, JSONRPCNotification) and message.method in SPEC_CLIENT_METHODS


def serve_stdio(
    source: ClientRegistry | Config | str | os.PathLike | None = None,
    *,
    client: str | None = None,
    connections: ConnectionMode = "thread",
    readers: int | None = None,
) -> None:
    """Serve one local agent over stdin/stdout until it closes them. No key: the local user reads
    every source, or the sources of the configured client named by `client`."""
    from jezero.server import stdio

    stdio.serve(build_mcp_server(source, client=client, connections=connections, readers=readers))
