"""The MCP server in memory and over stdio: the six tools, their annotations, the instructions,
clear errors, bounded answers, and a client's source patterns.

In memory, the SDK's own `Client(server)` talks to the server without a transport; over stdio a
real `jezero serve --transport stdio` subprocess is driven by the SDK's stdio client.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path

import anyio
import apsw
import pytest
from mcp import Client, StdioServerParameters

from jezero.config import Config
from jezero.server import build_mcp_server, shape
from jezero.server.clients import ClientRegistry
from jezero.server.library import Library
from jezero.store import ItemRecord, Store
import pg_support
from jz_support import REPO, jezero_command

TOOLS = {"search", "later", "timeline", "get_item", "catalog", "recall"}
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)


@pytest.fixture
def anyio_backend():
    return "asyncio"


def record(n: int, source: str, project: str | None, title: str, summary: str, *, days: float = 0,
           original: str = "user: hello\nassistant: hi", atoms=None) -> ItemRecord:
    return ItemRecord(
        uid=f"{source}:s{n}:0", source=source, agent=source.split("-")[0], session_id=f"s{n}", segment_index=0,
        occurred_at=T0 + timedelta(days=days), title=title, summary=summary,
        questions=[f"How was {title.lower()} handled?"],
        atoms=atoms if atoms is not None else [{"type": "fact", "text": title}],
        original=original, content_hash=hashlib.sha256(f"{n}{title}".encode()).hexdigest(),
        summarizer="offline", summary_schema=1, project=project,
    )


SAMPLE = [
    record(1, "claude-local", "shop", "Stripe webhook signature check fails",
           "The webhook handler rejected every Stripe event: the signature was computed over the parsed JSON "
           "instead of the raw body. " * 12, days=0, original="x" * 50_000),
    record(2, "claude-local", "shop", "Stripe webhook signature: verify against the raw body",
           "Decided to read the raw request body before parsing, and to keep the webhook secret in STRIPE_SECRET_env.",
           days=5),
    record(3, "agent-ci", "shop", "Flaky checkout test in CI", "The checkout test timed out on the runner.", days=3),
    record(4, "codex-local", "billing", "Invoice rounding to cents", "Rounded invoice totals half-up to cents.",
           days=4),
    record(5, "inbox-anna", None, "ENOSPC while building the docker image", "The runner disk was full.", days=2),
]


def write_library(path: Path, records: list[ItemRecord]) -> Path:
    with Store(path) as store:
        store.write(records)
    return path


# JEZERO_TEST_ENGINE=tantivy runs these tests with that search index engine (default FTS5).
ENGINE = os.environ.get("JEZERO_TEST_ENGINE", "fts5")


def config_for(library: Path, clients: list[dict] | None = None) -> Config:
    return Config.model_validate({"storage": {"path": str(library)}, "search": {"engine": ENGINE},
                                  "clients": clients or []})


@pytest.fixture
def library(tmp_path) -> Path:
    return write_library(tmp_path / "library.sqlite3", SAMPLE)


@pytest.fixture
def cfg(library) -> Config:
    return config_for(library, [
        {"name": "ci", "key_sha256": "a" * 64, "sources": ["agent-*"]},
        {"name": "local", "key_sha256": "b" * 64, "sources": ["claude-*", "codex-*"]},
    ])


async def call(client: Client, tool: str, **args):
    result = await client.call_tool(tool, args)
    assert not result.is_error, result.content[0].text
    # The text an agent reads is the same answer as the structure an app reads, in compact JSON.
    assert json.loads(result.content[0].text) == result.structured_content
    return result.structured_content


async def error_text(client: Client, tool: str, **args) -> str:
    result = await client.call_tool(tool, args)
    assert result.is_error
    text = result.content[0].text
    assert "Traceback" not in text and 'File "' not in text
    return text


# -- the surface ------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_six_read_only_tools_and_the_protocol(cfg):
    async with Client(build_mcp_server(cfg)) as client:
        tools = (await client.list_tools()).tools
        assert {t.name for t in tools} == TOOLS
        for t in tools:
            a = t.annotations
            assert (a.read_only_hint, a.destructive_hint, a.idempotent_hint, a.open_world_hint) == (True, False, True, False)
            assert len(t.description) > 80
        descriptions = {t.name: t.description for t in tools}
        assert "literal" in descriptions["search"] and "synonym" in descriptions["search"]
        assert "meaning" not in descriptions["search"] and "{" not in descriptions["search"]
        assert "decision, plan, status or number" in descriptions["later"]
        assert "project_timeline" in descriptions["later"]
        assert "filter" in descriptions["catalog"]
        text = client.instructions
        for phrase in ("Search before non-trivial work", "literal", "synonym", "singular", "fragment",
                       "later(item_id)", "decision, plan, status or number", "Cite", "Never guess",
                       "nothing to save", "read-only", "words, not meanings"):
            assert phrase in text, phrase
        assert client.server_info.name == "jezero"


@pytest.mark.anyio
async def test_search_says_the_configured_default_limit(library):
    # The tool's schema said "default 10" whatever [search] default_limit held.
    cfg = Config.model_validate({"storage": {"path": str(library)}, "search": {"engine": ENGINE, "default_limit": 3}})
    async with Client(build_mcp_server(cfg)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert "default 3," in tools["search"].input_schema["properties"]["limit"]["description"]
        assert "default 5," in tools["later"].input_schema["properties"]["limit"]["description"]


@pytest.mark.parametrize("mode", ["thread", "request"])
def test_requests_read_through_read_only_connections(library, mode):
    reader = Library(library, mode=mode)
    with reader.reader() as conn:
        assert conn.execute("SELECT count(*) FROM items").fetchone()[0] == 5
        with pytest.raises(apsw.ReadOnlyError):
            conn.execute("DELETE FROM items")


# -- each tool ------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_search_returns_compact_hits(cfg):
    async with Client(build_mcp_server(cfg)) as client:
        answer = await call(client, "search", query="stripe webhook")
        ids = [h["id"] for h in answer["items"]]
        assert set(ids) >= {1, 2}
        first = next(h for h in answer["items"] if h["id"] == 1)
        assert set(first) <= set(shape.HIT_FIELDS)
        assert {"id", "title", "summary", "source", "occurred_at", "score"} <= set(first)
        assert len(first["summary"]) <= shape.HIT_SUMMARY_CHARS and first["summary"].endswith("…")
        assert "original" not in first and "session_id" not in first

        only_shop = await call(client, "search", query="rounding webhook", project="billing")
        assert [h["id"] for h in only_shop["items"]] == [4]
        by_source = await call(client, "search", query="webhook", source="claude-local", limit=1)
        assert len(by_source["items"]) == 1

        nothing = await call(client, "search", query="kubernetes")
        assert nothing["items"] == [] and "literal" in nothing["note"]


@pytest.mark.anyio
async def test_later_finds_the_newer_decision(cfg):
    async with Client(build_mcp_server(cfg)) as client:
        answer = await call(client, "later", item_id=1, query="stripe webhook signature")
        assert answer["item"]["id"] == 1
        assert answer["matched_by"] in ("subject", "project_timeline")
        assert 2 in [h["id"] for h in answer["items"]]
        assert all(h["id"] != 1 for h in answer["items"])

        newest = await call(client, "later", item_id=2)  # the newest item of its project
        assert newest["items"] == [] and "latest" in newest["note"]

        unrelated = await call(client, "later", item_id=1, query="kubernetes helm")  # nothing on that subject
        assert unrelated["matched_by"] == "project_timeline" and "context rather than a change" in unrelated["note"]
        assert all(h["occurred_at"] >= unrelated["item"]["occurred_at"] for h in unrelated["items"])


@pytest.mark.anyio
async def test_timeline_newest_first(cfg):
    async with Client(build_mcp_server(cfg)) as client:
        answer = await call(client, "timeline", project="shop")
        assert [h["id"] for h in answer["items"]] == [2, 3, 1]
        assert [h["id"] for h in (await call(client, "timeline", source="claude-local", limit=1))["items"]] == [2]
        windowed = await call(client, "timeline", project="shop", since="2026-03-02", until="2026-03-06")
        assert [h["id"] for h in windowed["items"]] == [3]
        empty = await call(client, "timeline", project="no-such-project")
        assert empty["items"] == [] and "catalog" in empty["note"]


@pytest.mark.anyio
async def test_get_item_full_and_original_clipped(cfg):
    async with Client(build_mcp_server(cfg)) as client:
        item = await call(client, "get_item", item_id=2)
        assert item["id"] == 2 and item["title"].startswith("Stripe webhook signature")
        assert item["summary"].startswith("Decided to read the raw request body")  # whole, not clipped
        assert item["questions"] and item["atoms"]
        assert "original" not in item and "content_hash" not in item

        with_original = await call(client, "get_item", item_id=1, include_original=True)
        assert len(with_original["original"]) <= shape.MAX_ORIGINAL_CHARS
        assert "50000" in with_original["original_note"]
        assert len(shape.dumps(with_original)) <= shape.MAX_ANSWER_CHARS

        small = await call(client, "get_item", item_id=3, include_original=True)
        assert small["original"] == "user: hello\nassistant: hi" and "original_note" not in small


@pytest.mark.anyio
async def test_catalog_lists_filter_names(cfg):
    async with Client(build_mcp_server(cfg)) as client:
        answer = await call(client, "catalog")
        assert {s["name"] for s in answer["sources"]} == {"claude-local", "agent-ci", "codex-local", "inbox-anna"}
        projects = {p["name"]: p for p in answer["projects"]}
        assert set(projects) == {"shop", "billing"}
        assert projects["shop"]["items"] == 3 and projects["shop"]["last_at"]


@pytest.mark.anyio
async def test_errors_are_plain_messages(cfg):
    async with Client(build_mcp_server(cfg)) as client:
        assert "no item 999 (or not visible to this key)" in await error_text(client, "get_item", item_id=999)
        assert "no item 999 (or not visible to this key)" in await error_text(client, "later", item_id=999)
        # The query layer's own messages come through, word for word.
        assert "needs a project or a source" in await error_text(client, "timeline")
        assert "cannot read 'the day before'" in await error_text(client, "search", query="webhook",
                                                                     since="the day before")


@pytest.mark.anyio
async def test_a_missing_library_is_a_clear_error(tmp_path):
    async with Client(build_mcp_server(config_for(tmp_path / "none.sqlite3"))) as client:
        assert "nothing has been ingested" in await error_text(client, "search", query="webhook")


# -- bounded answers ---------------------------------------------------------------------------


@pytest.mark.anyio
async def test_answers_stay_under_the_cap(tmp_path):
    bulky = [record(n, "claude-local", "shop", f"Webhook retry storm number {n} " + "padding " * 40,
                    "webhook " * 400, days=n, atoms=[{"type": "error", "text": "webhook " * 300}] * 40)
             for n in range(1, 61)]
    cfg = config_for(write_library(tmp_path / "bulky.sqlite3", bulky))
    async with Client(build_mcp_server(cfg)) as client:
        answer = await call(client, "search", query="webhook", limit=50)
        assert len(shape.dumps(answer)) <= shape.MAX_ANSWER_CHARS
        assert 0 < len(answer["items"]) < 50 and "left out" in answer["note"]
        assert all(len(h["title"]) <= shape.HIT_TITLE_CHARS for h in answer["items"])
        for tool, args in (("timeline", {"project": "shop", "limit": 50}), ("get_item", {"item_id": 7}),
                           ("later", {"item_id": 1})):
            assert len(shape.dumps(await call(client, tool, **args))) <= shape.MAX_ANSWER_CHARS


def test_fit_drops_from_the_end_and_says_so():
    answer = {"items": [{"id": i, "text": "x" * 1000} for i in range(100)]}
    fitted = shape.fit(answer, "items")
    assert len(shape.dumps(fitted)) <= shape.MAX_ANSWER_CHARS
    assert [e["id"] for e in fitted["items"]] == list(range(len(fitted["items"])))
    assert f"{100 - len(fitted['items'])} more items left out" in fitted["note"]
    small = {"items": [1, 2]}
    assert shape.fit(small, "items") is small


# -- a client's source patterns ---------------------------------------------------------------


@pytest.mark.anyio
async def test_acting_as_a_client_limits_every_tool(cfg):
    async with Client(build_mcp_server(cfg, client="ci")) as client:
        assert {h["source"] for h in (await call(client, "timeline", project="shop"))["items"]} == {"agent-ci"}
        assert (await call(client, "timeline", source="claude-local"))["items"] == []
        assert (await call(client, "search", query="stripe webhook"))["items"] == []
        assert "not visible to this key" in await error_text(client, "get_item", item_id=1)
        assert "not visible to this key" in await error_text(client, "later", item_id=1)
        assert (await call(client, "get_item", item_id=3))["source"] == "agent-ci"
        cat = await call(client, "catalog")
        assert [s["name"] for s in cat["sources"]] == ["agent-ci"]
        assert all(set(p["sources"]) <= {"agent-ci"} for p in cat["projects"])


def test_unknown_client_is_refused(cfg):
    with pytest.raises(ValueError, match="no client named 'nobody'"):
        build_mcp_server(cfg, client="nobody")


@pytest.mark.anyio
async def test_a_client_removed_from_the_config_loses_access(tmp_path, library):
    path = tmp_path / "config.toml"
    path.write_text(f'[storage]\npath = "{library}"\n\n[[clients]]\nname = "ci"\nkey_sha256 = "{"a" * 64}"\n'
                    'sources = ["agent-*"]\n')
    registry = ClientRegistry.from_source(path)
    async with Client(build_mcp_server(registry, client="ci")) as client:
        assert (await call(client, "timeline", project="shop"))["items"]
        path.write_text(f'[storage]\npath = "{library}"\n')
        registry.refresh(force=True)
        assert "revoked" in await error_text(client, "timeline", project="shop")


# -- stdio ------------------------------------------------------------------------------------


def stdio_params(config_path: Path, *extra: str) -> StdioServerParameters:
    # The SDK hands a child only a few variables unless told: pass the isolated home along.
    env = {**os.environ, "JEZERO_CONFIG": str(config_path)}
    command, *args = jezero_command()
    return StdioServerParameters(command=command, args=[*args, "serve", "--transport", "stdio", *extra], env=env,
                                 cwd=str(REPO))


@pytest.fixture
def config_file(tmp_path, library, store_backend, monkeypatch) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(pg_support.storage_section(library, store_backend, monkeypatch)
                    + f'\n[[clients]]\nname = "ci"\nkey_sha256 = "{"a" * 64}"\nsources = ["agent-*"]\n')
    return path


@pytest.mark.anyio
async def test_stdio_subprocess_serves_every_tool(config_file):
    with anyio.fail_after(60):
        async with Client(stdio_params(config_file)) as client:
            assert "Never guess" in client.instructions
            tools = (await client.list_tools()).tools
            assert {t.name for t in tools} == TOOLS
            assert all(t.annotations.read_only_hint for t in tools)
            assert {1, 2} <= {h["id"] for h in (await call(client, "search", query="stripe webhook"))["items"]}
            assert 2 in [h["id"] for h in (await call(client, "later", item_id=1, query="stripe webhook"))["items"]]
            assert len((await call(client, "timeline", project="shop"))["items"]) == 3
            assert (await call(client, "get_item", item_id=4))["project"] == "billing"
            assert len((await call(client, "catalog"))["sources"]) == 4
            assert "no item 77" in await error_text(client, "get_item", item_id=77)


@pytest.mark.anyio
async def test_stdio_as_a_configured_client(config_file):
    with anyio.fail_after(60):
        async with Client(stdio_params(config_file, "--client", "ci")) as client:
            assert {h["source"] for h in (await call(client, "timeline", project="shop"))["items"]} == {"agent-ci"}
            assert "not visible" in await error_text(client, "get_item", item_id=1)


def test_stdio_answers_bad_lines_and_every_request_read_before_stdin_closed(config_file):
    """A raw client on the wire: lines that are not JSON-RPC get JSON-RPC's error (with the
    line's id when it has one) and a warning, the session goes on, and requests written just
    before stdin closes are all answered, the search included."""
    def line(id_, method, **params):
        return json.dumps({"jsonrpc": "2.0", "id": id_, "method": method, "params": params})

    hello = line(1, "initialize", protocolVersion="2025-11-25", capabilities={},
                 clientInfo={"name": "raw", "version": "1"})
    lines = [hello, json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
             "this is not json", "[1, 2]", json.dumps({"jsonrpc": "2.0", "id": 3}),
             line(4, "tools/list"), line(5, "tools/call", name="search", arguments={"query": "stripe webhook"}),
             line(6, "tools/call", name="get_item", arguments={"item_id": 4})]
    params = stdio_params(config_file)
    proc = subprocess.run([params.command, *params.args], input="\n".join(lines) + "\n", env=params.env,
                          cwd=params.cwd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    answers = [json.loads(raw) for raw in proc.stdout.splitlines()]
    errors = [a["error"]["code"] for a in answers if "error" in a]
    assert errors == [-32700, -32600, -32600]
    assert [a["id"] for a in answers if "error" in a] == [None, None, 3]
    results = {a["id"]: a["result"] for a in answers if "result" in a}
    assert set(results) == {1, 4, 5, 6}
    assert {t["name"] for t in results[4]["tools"]} == TOOLS
    hits = json.loads(results[5]["content"][0]["text"])["items"]
    assert {1, 2} <= {h["id"] for h in hits}
    assert json.loads(results[6]["content"][0]["text"])["project"] == "billing"
    assert proc.stderr.count("refused a line on stdin") == 3


# -- under load -------------------------------------------------------------------------------


def test_at_most_readers_calls_read_at_once(library):
    import threading

    from fixture_plugins import Overlap

    reader = Library(library, readers=2)
    inside, most, lock = 0, 0, threading.Lock()
    meet = Overlap(2)  # the first two wait for each other: two at once, however busy the machine

    def work():
        nonlocal inside, most
        with reader.reader() as conn:
            with lock:
                inside += 1
                most = max(most, inside)
            conn.execute("SELECT count(*) FROM items").fetchone()
            with meet:
                pass
            with lock:
                inside -= 1

    threads = [threading.Thread(target=work) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert most == 2


@pytest.mark.anyio
async def test_a_search_cut_short_by_its_work_budget_says_so(library, monkeypatch):
    # When the work budget cuts a search, the agent must not be told that nothing matched.
    # (test_budget.py makes a real query run out; here the answer's shape is what counts.)
    import jezero.query
    from jezero.query.common import Hits

    def cut_nothing(conn, query, **kwargs):
        hits = Hits()
        hits.cut = True
        return hits

    monkeypatch.setattr(jezero.query, "search", cut_nothing)
    async with Client(build_mcp_server(config_for(library))) as client:
        answer = await call(client, "search", query="webhook")
        assert answer["items"] == [] and answer["cut"] is True and "work budget" in answer["note"]


# -- the clients, re-read -------------------------------------------------------------------------


def test_a_config_created_after_start_is_picked_up(tmp_path, library):
    path = tmp_path / "later.toml"
    registry = ClientRegistry(Config(), path, poll_seconds=0)
    assert registry.clients() == []
    path.write_text(f'[storage]\npath = "{library}"\n\n[[clients]]\nname = "ci"\nkey_sha256 = "{"a" * 64}"\n')
    assert registry.by_name("ci") is not None
    assert registry.by_digest("a" * 64).name == "ci"
    assert registry.by_digest("b" * 64) is None
    path.unlink()  # gone: the last good clients stay
    assert registry.by_name("ci") is not None
