"""Search index engines: what finds search()'s candidate pool, and keeping their indexes in step.

The library's own FTS5 table is the built-in engine ("fts5", the default, registered by this
module as a plugin): search.py's path. Another engine is a plugin (`register_index_engines`)
that keeps a derived index beside the library file and answers with the `candidate_pool` best
matches for the query terms, after the same filters. search() then applies the same recency
re-rank, `later` and hit fields to them, whatever the engine.

A derived index must never answer from a state the library did not have. The library keeps a
change log (`item_changes`: the latest change number of each item written or deleted, in the
same transaction as the write); an engine records the last number it applied, and before it
answers it checks that number against the library's. Behind, it catches up first; if it cannot
(another process holds its writer, or too much is missing for a reader to do inline), it
returns None and FTS5 answers this query.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import apsw


log = logging.getLogger(__name__)

BUILTIN = "fts5"


@dataclass(frozen=True)
class Head:
    """Where the library stands: which library, and its last change number."""

    library: str
    seq: int


@dataclass(frozen=True)
class Request:
    """What an engine must answer: the query's terms (jezero.query.terms.Term: `text` as written,
    quoted phrases without quotes) and the filters that apply before the cut."""

    terms: tuple
    sources: tuple[str, ...] | None  # None: every source
    source: str | None
    project: str | None
    since: str | None  # stored UTC text, inclusive
    pool: int


@dataclass(frozen=True)
class MessageRequest:
    """What an engine's messages index must answer (recall, and search's messages lane).

    `terms`: each query term as its alternatives (texts as written; a text of several words is a
    phrase), any of which matches it: recall's literal term is one alternative, the lane's word
    also lists its other forms. The filters apply before the cut: `roles` None is every role;
    `subagents` False leaves out the messages of sessions with a parent; since inclusive, before
    exclusive (stored UTC text).

    `order`: "relevance" (BM25 of the OR of the terms, best first), "newest" / "oldest" (time,
    ties by message id the same way), or "per_term" (each term ranked alone: the lane)."""

    terms: tuple[tuple[str, ...], ...]
    sources: tuple[str, ...] | None
    source: str | None
    projects: tuple[str, ...] | None
    roles: tuple[str, ...] | None
    subagents: bool
    since: str | None
    before: str | None
    order: str
    limit: int
    # "per_term": a term read as a phrase whose words are in more than this many messages
    # together is not looked up (its slot is None); None: every phrase is.
    phrase_rows: int | None = None
    # "per_term": a term whose words are in more than this many messages (before the filters) is
    # common: its matches come with the score None (the caller scores them alike); None: none is.
    common_rows: int | None = None
    # "per_term" with common_rows: False when the caller only needs to know which terms are common
    # (search's written forms, which drop them): such a term's slot is a CommonUnread, nothing read
    # (an engine that ignores this reads the newest as for True: the caller's answer is the same).
    common_read: bool = True


class CommonUnread(list):
    """A "per_term" answer's slot for a term over `common_rows` whose messages were not read
    (MessageRequest.common_read False): empty, and common."""


class IndexEngine(Protocol):
    def candidates(self, conn: apsw.Connection, request: Request) -> list[tuple[int, float, str]] | None:
        """(item id, relevance, occurred_at) of the `pool` best matches, best first; None when the
        engine cannot answer from the library's current state (FTS5 answers instead)."""

    # Optional (an engine without it leaves the messages to FTS5):
    # def message_matches(self, conn, request: MessageRequest) -> list | None:
    #     order "relevance"/"newest"/"oldest": [(message id, score, mask of the terms it holds)],
    #     best first, at most `limit`; "per_term": per term, [(message id, item id, score)], best
    #     first, at most `limit` each (None for a phrase over `phrase_rows`; score None for a term
    #     over `common_rows`, or a CommonUnread when `common_read` is False). None when it cannot
    #     answer from the library's state.

    def catch_up(self, rebuild: bool = False) -> int:
        """Apply the library's changes the index lacks (everything when `rebuild`); the number of
        items written to the index."""


def library_head(conn: apsw.Connection) -> Head | None:
    """The library's identity and last change number, as `conn` sees it; None for a library
    without a change log (a schema older than the log)."""
    try:
        row = conn.execute(
            "SELECT (SELECT value FROM meta WHERE key = 'library_id'), "
            "(SELECT coalesce(max(seq), 0) FROM item_changes)").fetchone()
    except apsw.SQLError:
        return None
    return Head(row[0], row[1]) if row and row[0] else None


_lock = threading.Lock()
_open: dict[tuple[str, str], IndexEngine] = {}
_warned: set[str] = set()


def engine_for(name: str, library: str | Path) -> IndexEngine | None:
    """The engine `name` for the library file at `library`, opened once per process; None for
    FTS5 (the built-in path) and, with a logged warning once, for a name no plugin registered."""
    if not name or name == BUILTIN:
        return None
    given = (name, str(library))
    engine = _open.get(given)  # the common case, without resolving the path on every search
    if engine is not None:
        return engine
    key = (name, str(Path(library).resolve()))
    with _lock:
        engine = _open.get(key)
        if engine is not None:
            _open[given] = engine
            return engine
        from jezero import plugins

        kind = plugins.index_engines().get(name)
        if kind is None or kind.open is None:
            _warn_once(f"search.engine = {name!r}: no installed plugin gives that engine; searching with fts5")
            return None
        engine = _open[key] = _open[given] = kind.open(Path(key[1]))
        return engine


def forget() -> None:
    """Drop the opened engines (tests; after a library file was replaced)."""
    with _lock:
        _open.clear()


def pool(conn: apsw.Connection, engine: str, terms, filters, size: int) -> list[tuple[int, float, str]] | None:
    """search()'s seam: the candidate pool from the configured engine, or None for FTS5."""
    if not engine or engine == BUILTIN:
        return None
    filename = getattr(conn, "filename", "") or ""
    if not filename:
        return None
    found = engine_for(engine, filename)
    if found is None:
        return None
    request = Request(tuple(terms), tuple(filters.sources) if filters.sources is not None else None,
                      filters.source, filters.project, filters.since, size)
    try:
        return found.candidates(conn, request)
    except Exception as e:  # a broken derived index must not cost the answer: FTS5 still has it
        _warn_once(f"search engine {engine!r} failed ({type(e).__name__}: {e}); fts5 answers instead")
        return None


def messages(conn: apsw.Connection, engine: str, request: MessageRequest) -> list | None:
    """The messages layer's seam: the configured engine's answer to `request`, or None for FTS5
    (the built-in path; also when the engine has no messages index, is behind or failed)."""
    if not engine or engine == BUILTIN:
        return None
    filename = getattr(conn, "filename", "") or ""
    found = engine_for(engine, filename) if filename else None
    answer = getattr(found, "message_matches", None)
    if answer is None:
        return None
    try:
        return answer(conn, request)
    except Exception as e:  # a broken derived index must not cost the answer: FTS5 still has it
        _warn_once(f"search engine {engine!r} failed on messages ({type(e).__name__}: {e}); fts5 answers instead")
        return None


def _warn_once(message: str) -> None:
    """A warning per distinct message per process: a reader must not log one per search."""
    if message not in _warned:
        _warned.add(message)
        log.warning("%s", message)


def sync(engine: str, library: str | Path, *, rebuild: bool = False) -> int | None:
    """Bring the engine's index in step with the library (the writer calls this after a run;
    `jezero reindex` likewise). None when the engine is FTS5, which is always in step."""
    found = engine_for(engine, library)
    if found is None:
        return None
    return found.catch_up(rebuild=rebuild)


# A writer brings the index in step after a write at most this often when it cannot hold the
# index's catch-up lock across its commits (an engine without `holding`); readers catch up with
# what lies between, and the run's end syncs what is left.
FOLLOW_INTERVAL_S = 2.0
# A follower that holds the index's lock across each write (see follower) spends at most this
# share of the wall clock's time on the index's updates, with at most FOLLOW_BURST_S of CPU saved
# up while idle.
FOLLOW_SHARE = 0.5
FOLLOW_BURST_S = 1.0


def follower(engine: str, library: str | Path, interval: float = FOLLOW_INTERVAL_S):
    """A Store.after_write listener that keeps the engine's index near the library while a run
    writes; None for FTS5. Raises nothing a write would see (Store logs a failure).

    With an engine that can hold its catch-up lock across a write (`holding`, the tantivy
    engine), the listener also has a `hold` that Store enters around each write's transaction:
    the index is brought in step right after the library's commit, and meanwhile a reader that
    sees the new head answers from the state before instead of applying the change itself
    (jezero_index_tantivy/README.md). That costs the writer an index update per write (30-60 ms
    of CPU at 100k items). So that a backfill writing back to back is not slowed down more than
    that, the updates may take at most FOLLOW_SHARE of the writer's time (a budget of CPU that
    builds up with the clock, at most FOLLOW_BURST_S): a write past it is not held, readers
    catch up with it, and the next held write brings the index in step (at least every
    `interval`).
    """
    if not engine or engine == BUILTIN:
        return None
    last = [0.0]
    found = engine_for(engine, library)
    holding = getattr(found, "holding", None)
    # the CPU budget left for updates and when it was counted; when the last update ended;
    # whether the write just made went through `hold` (a store that enters it); writes held
    # and skipped
    held = {"budget": FOLLOW_BURST_S, "at": time.monotonic(), "ended": float("-inf"), "seen": False, "holds": 0,
            "skipped": 0}

    def follow() -> None:
        if held["seen"]:
            held["seen"] = False
            return  # the hold applied it, or left it to the readers and the next write
        now = time.monotonic()
        if now - last[0] >= interval:
            last[0] = now
            try:
                sync(engine, library)
            except ValueError as e:
                # Another process holds the index's writer: a reader catching up with these very
                # changes (benchmarks/load: most of the time). Nothing is lost: the next follow,
                # a reader or the run's final sync applies them (this was a warning per write).
                log.debug("index not followed after this write: %s", e)

    @contextmanager
    def hold():
        held["seen"] = True
        now = time.monotonic()
        held["budget"] = min(FOLLOW_BURST_S, held["budget"] + FOLLOW_SHARE * (now - held["at"]))
        held["at"] = now
        if held["budget"] <= 0 and now - held["ended"] < interval:
            held["skipped"] += 1  # readers catch up; the next held write brings the index in step
            yield
            return
        try:
            guard = holding()
            guard.__enter__()
        except Exception as e:  # the write goes on; readers catch up
            log.warning("search index not held for this write: %s", e)
            yield
            return
        try:
            yield
        except BaseException:
            held["seen"] = False  # no write was made
            guard.__exit__(*sys.exc_info())
            raise
        started = time.process_time()  # CPU, this process's threads (the merges): not the fsync
        guard.__exit__(None, None, None)
        held["ended"] = time.monotonic()
        held["budget"] -= time.process_time() - started
        held["holds"] += 1

    if holding is not None:
        follow.hold = hold
        follow.stats = held
    return follow
