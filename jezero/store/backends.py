"""Where the library lives: the store's interface, and the backends behind it.

`[storage] backend` names the backend: "sqlite" (built in, the default: one file, jezero.store)
or one a distribution adds through the entry point group `jezero.store_backends`
("postgres", from jezero-store-postgres). Everything above the store reaches it through three
calls, so no connector, pipeline step, server or command knows which backend it writes or reads:

    open_writer(config)   the writer (`Writer` below): what the pipeline writes and reads back
    open_reader(config)   a read-only connection for the query layer (`Reader` below)
    run_lock(config)      held while `jezero run` writes: one run at a time, across machines
                          (None for SQLite: the runner locks a file beside the library)

A backend is a module with those three functions and `where(config)` (the library as messages
name it). The query layer reads both backends with the same plain SQL (`?` marks; tables and
columns as in jezero/store/migrations.py); what ranks differs by engine, so a reader that ranks
in its own engine carries a `ranker` (`Ranker` below) and search asks it for the candidate pool
instead of FTS5, then re-ranks by recency, limits and shapes hits the same way.
"""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import Any, Iterable, Protocol

from jezero.store import ItemRecord, Store, StoreError, open_readonly

SQLITE = "sqlite"
GROUP = "jezero.store_backends"


class RunLocked(Exception):
    """Another `jezero run` (or resummarize) holds the library's run lock."""


class Writer(Protocol):
    """What the pipeline and the maintenance passes call (jezero.store.Store is the reference)."""

    path: Any  # what messages name as the library
    after_write: list
    vectors: Any
    db: Any  # an apsw-like connection for the runner's plain statements (`?` marks)

    def cursor(self, connector: str) -> dict[str, Any]: ...
    def connector_state(self, name: str) -> dict[str, Any] | None: ...
    def record_run(self, name: str, *, error: str | None, warnings: list[str], ok: bool) -> None: ...
    def session_items(self, source: str, session_id: str) -> dict[str, tuple[int, str]]: ...
    def session_originals(self, source: str, session_id: str) -> list[str]: ...
    def hash_exists(self, content_hash: str) -> tuple[int, str] | None: ...
    def write(self, items: Iterable[ItemRecord], *, connector: str | None = None, cursor: dict | None = None,
              delete_uids: Iterable[str] = (), calls: Iterable[dict] = ()) -> list[int]: ...
    def set_cursor(self, connector: str, entries: dict[str, Any]) -> None: ...
    def set_project(self, item_id: int, project: str | None) -> None: ...
    def set_summary(self, item_id: int, fields: dict[str, Any], *, call: dict | None = None) -> None: ...
    def record_call(self, **call) -> None: ...
    def unacknowledged_warnings(self, connector: str | None = None) -> list[dict[str, Any]]: ...
    def acknowledge_warnings(self, **which) -> int: ...
    def tidy_index(self, written: int = 0) -> None: ...
    def counts(self) -> dict[str, int]: ...
    def close(self) -> None: ...


class Ranker(Protocol):
    """A reader's own search engine (None on SQLite: FTS5 inside the file ranks)."""

    name: str
    lanes: tuple[str, ...]  # the search lanes it can answer

    def candidates(self, terms, filters, pool: int) -> list[tuple[int, float, str]]:
        """(item id, relevance, occurred_at) of the `pool` best matches that pass `filters`."""

    # With "messages" in `lanes` (recall, search's messages lane; jezero.query.messages.backend):
    # def message_matches(self, request: engines.MessageRequest) -> list: a derived engine's
    #     answer (engines.IndexEngine's message_matches), optionally with `capped` (term indexes)
    # def message_rows(self) -> tuple[int, int]: (messages, items), bm25's N for each layer
    # def message_projects(self, texts, filters, limit) -> [(project, count, newest message id)]
    # def boolean_matches(self, expr, filters, fetch) -> [(message id, relevance)]
    # Without FTS5's tables (current-first, later's subject; jezero.query.stats._indexed_elsewhere):
    # def item_count(self) -> int
    # def indexed_columns(self, ids=None, ranges=None) -> {id: (five indexed columns, tokens)}


class Reader(Protocol):
    """What the query layer calls on a connection (apsw.Connection is the reference)."""

    def execute(self, sql: str, params=None): ...
    def set_progress_handler(self, handler, steps: int = 0) -> None: ...
    def close(self) -> None: ...


def name(config) -> str:
    return getattr(config.storage, "backend", SQLITE) or SQLITE


def backend(config):
    """The module of the configured backend; None for SQLite. StoreError when no installed
    distribution gives it."""
    chosen = name(config)
    return None if chosen == SQLITE else backend_named(chosen)


def backend_named(chosen: str):
    found = [ep for ep in entry_points(group=GROUP) if ep.name == chosen]
    if not found:
        hint = " (pip install jezero-store-postgres)" if chosen == "postgres" else ""
        raise StoreError(f"[storage] backend = {chosen!r}: no installed distribution gives that backend{hint}")
    return found[0].load()


def open_writer(config) -> Writer:
    module = backend(config)
    if module is None:
        return Store(config.library_path(), config.storage.tokenizer)
    return module.open_writer(config)


def open_reader(config) -> Reader:
    module = backend(config)
    if module is None:
        return open_readonly(config.library_path())
    return module.open_reader(config)


def reader_opener(config):
    """A function of no arguments that opens a reader (the server's Library calls it per thread)."""
    module = backend(config)
    if module is None:
        path = config.library_path()
        return lambda: open_readonly(path)
    return lambda: module.open_reader(config)


def where(config) -> str:
    module = backend(config)
    return str(config.library_path()) if module is None else module.where(config)


def run_lock(config):
    """The backend's run lock (a context manager raising RunLocked when another run holds it);
    None for SQLite, whose lock is a file beside the library (jezero.ingest.runner)."""
    module = backend(config)
    return None if module is None else module.run_lock(config)
