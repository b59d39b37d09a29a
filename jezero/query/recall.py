"""recall: find the messages of past sessions that hold the query's words, and show them in their
context. Where search answers "which past session is about this", recall answers "where was this
said, and what was said around it".

How hits are placed, each rule named in the hit's `explain.method`:

- one term: bm25 order (BM25_ONLY);
- several terms (OR-ed): the number of distinct query terms a message holds (its coverage) first,
  bm25 breaking ties (COVERAGE);
- `sort="newest"` or `"oldest"`: time order replaces relevance entirely; coverage is reported,
  not used (NEWEST / OLDEST);
- `boolean=`: the caller's own FTS5 expression (AND, OR, NOT, NEAR, parentheses, phrases), checked
  before it runs and refused with a plain message when FTS5 cannot read it; bm25 order
  (BOOLEAN). It is opt-in: the plain query quotes every word, so nothing typed is an operator.

Whatever the rule, a message of a routine session (every prompt of it also opens other sessions:
a scheduled or scripted run) is listed after all the others (`explain.tier = "routine"`), in the
same order among themselves.

Filters: role (user, assistant, tool, system), tool messages (left out unless asked for or
named by role), subagent sessions (left out unless asked for), since (inclusive) and before
(exclusive; a bare date counts its whole day), projects, source, and a minimum of messages per
session. The caller's source patterns apply as everywhere.

In a large library a common word can match hundreds of thousands of messages, and bm25 scores
every match. A term in more than RANK_CAP (5,000) messages is therefore ranked among its RANK_CAP
newest matches, while every match of the rarer terms is ranked; `explain.candidates` says when
that happened. Below that, every match is ranked. Newest by the messages' time, whatever order
the sessions were stored in: message ids follow the time (jezero.store.messages.time_id).

With a derived index engine (`[search] engine = "tantivy"`), its messages index does the
matching (and the coverage of each match) with the same filters before the cut and the same
placing rules; its top matches are exact, so nothing is capped. A boolean expression (FTS5's
language) and cross-project discovery stay on FTS5, and FTS5 answers whenever the engine cannot
(behind, broken); `explain.engine` names which one matched. Snippets, windows, lineage and the
routine tier read the library itself, whatever the engine. On a store backend that ranks the
messages itself (PostgreSQL: jezero_store_postgres/messages.py) the backend answers everything,
boolean expressions and discovery included, by the same rules (FTS5's cap too); snippets and the
expression check are FTS5's own, run in memory.

Each hit carries its session's lineage root (parent links followed up to MAX_LINEAGE_HOPS), a
snippet, and, when `window` > 0, a window of that many messages either side; windows of one
session that overlap are merged into one, listing every anchor it holds.

`discover=True` is cross-project discovery: one hit per matching project, that project's newest,
most recent project first, with the number of matching messages in each.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

import apsw

from jezero.config import SearchConfig
from jezero.query import messages as mq
from jezero.query.common import (
    allowed_sources,
    budget,
    check_span,
    clamp_limit,
    options_or_default,
    parse_stored,
    parse_time,
    reads_nothing,
    time_text,
)
from jezero.query.errors import QueryError
from jezero.query.terms import match_expression

BM25_ONLY = "bm25 only"
COVERAGE = "coverage re-rank, bm25 tie-break"
NEWEST = "sort overlay: newest first"
OLDEST = "sort overlay: oldest first"
BOOLEAN = "boolean expression, bm25 only"
DISCOVERY = "cross-project discovery: each project's newest hit"
RULES = {
    BM25_ONLY: "one query term: ordered by bm25",
    COVERAGE: "several query terms: more distinct terms matched first, bm25 breaks ties",
    NEWEST: "ordered by time, newest first; relevance is not used",
    OLDEST: "ordered by time, oldest first; relevance is not used",
    BOOLEAN: "your FTS5 expression: ordered by bm25",
    DISCOVERY: "the newest matching message of its project; projects by their newest match",
}
SORTS = ("relevance", "newest", "oldest")
TIER_NORMAL, TIER_ROUTINE = "normal", "routine"

# Parent links are data from files on disk: a loop or an absurd chain must not run forever.
MAX_LINEAGE_HOPS = 64
# A prompt that opens at least this many sessions marks them as runs of a script or a schedule.
ROUTINE_MIN_SESSIONS = 3
# Messages fetched before the coverage re-rank and the routine tier reorder them: the limit
# times this, within the bounds below.
OVERFETCH = 5
MIN_FETCH, MAX_FETCH = 50, 500
DEFAULT_LIMIT = 10
DEFAULT_WINDOW = 2
MAX_WINDOW = 10
MAX_PROJECTS = 50  # discovery: projects listed at most


def recall(
    conn: apsw.Connection,
    query: str | None = None,
    *,
    boolean: str | None = None,
    allowed: Sequence[str] = ("*",),
    role: str | Sequence[str] | None = None,
    include_tools: bool = False,
    include_subagents: bool = False,
    since=None,
    before=None,
    projects: str | Sequence[str] | None = None,
    source: str | None = None,
    min_messages: int | None = None,
    sort: str | None = None,
    limit: int | None = None,
    window: int | None = None,
    discover: bool = False,
    options: SearchConfig | None = None,
) -> dict:
    """Messages matching `query` (words and "phrases", OR-ed) or the FTS5 expression `boolean`,
    placed by the rules in the module docstring. Returns {"method", "terms", "hits", "windows"}
    (with `discover`: {"method", "terms", "projects"}); "timed_out" when the time budget ran out.
    Raises QueryError for a bad argument or a malformed boolean expression."""
    opts = options_or_default(options)
    lim = clamp_limit(limit, DEFAULT_LIMIT, opts.max_limit)
    order = _sort(sort)
    width = _window(window)
    roles = mq.check_roles(role)
    filters = mq.MessageFilters(
        source=source or None, projects=_projects(projects), roles=roles,
        include_tools=bool(include_tools) or bool(roles and "tool" in roles),
        include_subagents=bool(include_subagents), since=parse_time(since, "since"), before=_before(before),
        min_messages=_min_messages(min_messages))
    check_span(filters.since, filters.before, "before")
    empty = {"method": None, "terms": [], "hits": [], "windows": []} if not discover else \
        {"method": DISCOVERY, "terms": [], "projects": []}
    if not mq.has_messages(conn):
        return {**empty, "note": "this library has no messages index yet: open it once with a writer "
                                 "(jezero run) to build it"}
    if boolean is not None and query:
        raise QueryError("give either a query or a boolean expression, not both")
    if boolean is not None:
        expr, terms = mq.check_expression(conn, boolean), []
    else:
        if query is not None and not isinstance(query, str):
            raise QueryError(f"query must be text, got {type(query).__name__}")
        terms = mq.terms_for(conn, query or "")
        if not terms:
            return empty
        expr = match_expression(terms)
    sources = allowed_sources(conn, allowed)
    if reads_nothing(sources, source):
        return {**empty, "terms": [t.text for t in terms]}
    filters.sources = sources
    with budget(conn, opts.time_budget_ms):
        try:
            if discover:
                return _discover(conn, expr, terms, filters)
            return _recall(conn, expr, terms, filters, boolean is not None, order, lim, width, opts.engine)
        except apsw.InterruptError:
            return {**empty, "terms": [t.text for t in terms], "timed_out": True}


def _recall(conn, expr, terms, filters, is_boolean, order, limit, width, engine=None) -> dict:
    fetch = min(max(limit * OVERFETCH, MIN_FETCH), MAX_FETCH)
    # The configured index engine answers the matching (a boolean expression is FTS5's language:
    # FTS5 answers it); None when it cannot, and FTS5 does. A backend ranking the messages itself
    # answers both (it has no FTS5 to fall back on).
    found = None if is_boolean else mq.engine_matches(conn, engine, terms, filters, fetch, order)
    answered_by, capped = (mq.answered_by(conn, engine), found.capped) if found is not None else ("fts5", None)
    if found is None and is_boolean and mq.backend(conn) is not None:
        found, answered_by, capped = mq.boolean_matches(conn, expr, filters, fetch), mq.answered_by(conn, engine), []
    if found is None:
        found, capped = mq.matches(conn, expr, filters, fetch, order, terms)
        if not is_boolean:
            mq.cover(conn, found, terms)
    if order != "relevance":
        method = NEWEST if order == "newest" else OLDEST
    elif is_boolean:
        method = BOOLEAN
    elif len(terms) > 1:
        method = COVERAGE
        found = mq.coverage_order(found)
    else:
        method = BM25_ONLY
    routine = _routine_placing(conn, found, limit)
    found = [m for m in found if (m.source, m.session_id) not in routine] + \
            [m for m in found if (m.source, m.session_id) in routine]
    found = found[:limit]
    snips = mq.snippets(conn, expr, [m.id for m in found])
    term_texts = [t.text for t in terms]
    hits = []
    for final, m in enumerate(found):
        root, hops, lineage_capped = lineage_root(conn, m.source, m.session_id)
        tier = TIER_ROUTINE if (m.source, m.session_id) in routine else TIER_NORMAL
        hits.append({
            **_fields(m), "snippet": snips.get(m.id, ""), "root_session_id": root, "lineage_hops": hops,
            "routine": tier == TIER_ROUTINE,
            "explain": {
                "method": method, "rule": RULES[method]
                + ("; a routine session, listed after the others" if tier == TIER_ROUTINE else ""),
                "bm25_rank": m.bm25_rank, "coverage": m.coverage if not is_boolean else None,
                "matched_terms": m.matched, "terms": term_texts, "tier": tier, "final": final,
                "recency": 1 if method in (NEWEST, OLDEST) else 0, "lineage_capped": lineage_capped,
                "candidates": (f"every match of the rarer terms; of {', '.join(capped)}, the {mq.RANK_CAP} most "
                               "recent matches" if capped else "every match"),
                "engine": answered_by,
            },
        })
    windows = bookend_windows(conn, found, width, filters.include_tools) if width else []
    return {"method": method, "terms": term_texts, "hits": hits, "windows": windows}


def _routine_placing(conn, found: list[mq.Match], limit: int) -> set[tuple[str, str]]:
    """The routine sessions among `found` that can reach its first `limit` places. Routine
    sessions are listed after the others, so once `limit` messages of other sessions are seen,
    the sessions further down cannot place: they are not checked (two or more queries each,
    for up to MAX_FETCH messages)."""
    routine: set[tuple[str, str]] = set()
    checked: set[tuple[str, str]] = set()
    normal = 0
    for m in found:
        key = (m.source, m.session_id)
        if key not in checked:
            checked.add(key)
            routine |= routine_sessions(conn, {key})
        if key not in routine:
            normal += 1
            if normal >= limit:
                break
    return routine


def _fields(m: mq.Match) -> dict:
    return {"message_id": m.id, "item_id": m.item_id, "source": m.source, "session_id": m.session_id,
            "parent_session_id": m.parent_session_id, "project": m.project, "role": m.role, "tool": m.tool,
            "at": m.at}


def _discover(conn, expr, terms, filters) -> dict:
    """Each matching project's newest message, projects by recency."""
    out = []
    for final, (project, count, newest) in enumerate(mq.projects(conn, expr, terms, filters, MAX_PROJECTS)):
        m = mq.rows(conn, [newest], mq.MessageFilters(include_tools=True, include_subagents=True))[newest]
        root, hops, _ = lineage_root(conn, m.source, m.session_id)
        out.append({"project": project, "hits": count, **_fields(m),
                    "snippet": mq.snippets(conn, expr, [m.id]).get(m.id, ""),
                    "root_session_id": root, "lineage_hops": hops,
                    "explain": {"method": DISCOVERY, "rule": RULES[DISCOVERY], "final": final, "recency": 1,
                                "terms": [t.text for t in terms]}})
    return {"method": DISCOVERY, "terms": [t.text for t in terms], "projects": out}


# -- lineage, routine sessions, windows --------------------------------------------------------------


def lineage_root(conn: apsw.Connection, source: str, session_id: str) -> tuple[str, int, bool]:
    """(root session, hops, capped): the parent links followed from `session_id` up to a session
    without a parent, at most MAX_LINEAGE_HOPS of them; a loop stops where it closes."""
    current, seen, hops = session_id, {session_id}, 0
    while hops < MAX_LINEAGE_HOPS:
        row = conn.execute("SELECT parent_session_id FROM items WHERE source = ? AND session_id = ? "
                           "AND parent_session_id IS NOT NULL LIMIT 1", (source, current)).fetchone()
        if row is None or row[0] in seen:
            return current, hops, False
        current = row[0]
        seen.add(current)
        hops += 1
    parent = conn.execute("SELECT 1 FROM items WHERE source = ? AND session_id = ? AND parent_session_id IS NOT "
                          "NULL LIMIT 1", (source, current)).fetchone()
    return current, hops, parent is not None


def routine_sessions(conn: apsw.Connection, sessions: set[tuple[str, str]]) -> set[tuple[str, str]]:
    """The sessions, of these, whose every prompt also opens ROUTINE_MIN_SESSIONS sessions or more."""
    routine = set()
    for source, session_id in sessions:
        hashes = [r[0] for r in conn.execute(
            "SELECT DISTINCT prompt_hash FROM messages WHERE source = ? AND session_id = ? "
            "AND prompt_hash IS NOT NULL", (source, session_id))]
        if hashes and all(_sessions_with(conn, h) >= ROUTINE_MIN_SESSIONS for h in hashes):
            routine.add((source, session_id))
    return routine


def _sessions_with(conn, prompt_hash: str) -> int:
    return conn.execute("SELECT count(*) FROM (SELECT DISTINCT source, session_id FROM messages "
                        "WHERE prompt_hash = ? LIMIT ?) AS s", (prompt_hash, ROUTINE_MIN_SESSIONS)).fetchone()[0]


def bookend_windows(conn: apsw.Connection, anchors: Sequence[mq.Match], width: int,
                    include_tools: bool) -> list[dict]:
    """`width` messages either side of each anchor, in session order; the windows of one session
    that share a message become one window, listing each anchor it holds."""
    tools = "" if include_tools else " AND role != 'tool'"
    cols = "id, segment_index, seq, role, tool, at"
    windows: list[dict] = []
    for a in anchors:
        key = (a.segment_index, a.seq)
        head = conn.execute(
            f"SELECT {cols} FROM messages WHERE source = ? AND session_id = ? AND (segment_index, seq) < (?, ?)"
            f"{tools} ORDER BY segment_index DESC, seq DESC LIMIT ?", (a.source, a.session_id, *key, width)).fetchall()
        tail = conn.execute(
            f"SELECT {cols} FROM messages WHERE source = ? AND session_id = ? AND (segment_index, seq) >= (?, ?)"
            f"{tools} AND id != ? ORDER BY segment_index, seq LIMIT ?",
            (a.source, a.session_id, *key, a.id, width)).fetchall()
        me = conn.execute(f"SELECT {cols} FROM messages WHERE id = ?", (a.id,)).fetchall()
        rows = [*reversed(head), *me, *tail]
        texts = mq.texts(conn, [r[0] for r in rows])
        rows = [(*r, texts.get(r[0], "")) for r in rows]
        windows.append({"source": a.source, "session_id": a.session_id, "project": a.project,
                        "anchors": [a.id], "messages": [_window_message(r) for r in rows]})
    return merge_windows(windows)


def _window_message(r) -> dict:
    return {"id": r[0], "position": [r[1], r[2]], "role": r[3], "tool": r[4], "at": r[5], "text": r[6]}


def merge_windows(windows: list[dict]) -> list[dict]:
    """Windows of the same session that share a message, merged (in the order of their first
    anchor; the messages in session order)."""
    merged: list[dict] = []
    for w in windows:
        ids = {m["id"] for m in w["messages"]}
        target = None
        for m in merged:
            if (m["source"], m["session_id"]) == (w["source"], w["session_id"]) and ids & {x["id"] for x in m["messages"]}:
                target = m
                break
        if target is None:
            merged.append({**w, "anchors": list(w["anchors"]), "messages": list(w["messages"])})
            continue
        known = {x["id"] for x in target["messages"]}
        target["messages"] += [x for x in w["messages"] if x["id"] not in known]
        target["messages"].sort(key=lambda x: x["position"])
        target["anchors"] += [a for a in w["anchors"] if a not in target["anchors"]]
    # A merge can make a window overlap one merged earlier: repeat until nothing changes.
    return merged if len(merged) == len(windows) else merge_windows(merged)


# -- arguments ---------------------------------------------------------------------------------------


def _sort(sort) -> str:
    value = sort or "relevance"
    if value not in SORTS:
        raise QueryError(f"sort must be one of {', '.join(SORTS)}, got {sort!r}")
    return value


def _window(window) -> int:
    if window is None:
        return DEFAULT_WINDOW
    if isinstance(window, bool) or not isinstance(window, int) or window < 0:
        raise QueryError(f"window must be a whole number from 0 to {MAX_WINDOW}, got {window!r}")
    return min(window, MAX_WINDOW)


def _min_messages(value) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise QueryError(f"min_messages must be a whole number, 0 or more, got {value!r}")
    return min(value, 2**63 - 1)  # more than any session holds, and SQLite binds nothing larger


def _projects(projects) -> list[str] | None:
    if projects is None or projects == "" or projects == []:
        return None
    if isinstance(projects, str):
        return [projects]
    if not all(isinstance(p, str) for p in projects):
        raise QueryError("projects must be project names (see catalog)")
    return list(projects)


def _before(value) -> str | None:
    """Exclusive bound; a bare date means the end of that day (`before=2026-03-01` includes it)."""
    text = parse_time(value, "before")
    if text is None:
        return None
    if isinstance(value, str) and len(value.strip()) == 10:
        return time_text(parse_stored(text) + timedelta(days=1))
    return text

