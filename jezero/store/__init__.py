"""The store: one SQLite file (through apsw, which bundles a modern SQLite) holding the items,
their FTS5 index kept in sync in the same transaction, the connectors' cursors and state, and
meta (schema version, tokenizer).

Writers go through `Store`; every reader opens the file read-only with `open_readonly`. The store
knows no ranking policy: that is the query layer's job.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from contextlib import ExitStack, suppress
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

import apsw

from jezero.private import private_folder
from jezero.store import messages as message_rows
from jezero.store.messages import MessageRecord
from jezero.store.migrations import LATEST, current_version, migrate
from jezero.store.warnings import acknowledge, record_warnings, unacknowledged_warnings

log = logging.getLogger(__name__)

DEFAULT_TOKENIZER = "trigram remove_diacritics 1"
# How long a writer or reader waits for a lock held by another connection before giving up.
BUSY_TIMEOUT_MS = 10_000
TIME_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"  # fixed width, so text order is time order
FTS_COLUMNS = ("title", "summary", "questions", "atoms", "project")


class StoreError(Exception):
    pass


class TokenizerMismatch(StoreError):
    pass


def library_failure(e: BaseException) -> bool:
    """Whether `e` says the library file itself cannot be used (damaged, read-only, disk full,
    I/O): then no connector can write, and the run stops instead of trying each one."""
    return isinstance(e, (apsw.NotADBError, apsw.CorruptError, apsw.ReadOnlyError, apsw.CantOpenError,
                          apsw.FullError, apsw.IOError, apsw.PermissionsError))


def format_time(dt: datetime) -> str:
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.astimezone(timezone.utc).strftime(TIME_FORMAT)


def parse_stored_time(text: str) -> datetime:
    return datetime.strptime(text, TIME_FORMAT).replace(tzinfo=timezone.utc)


def now_text() -> str:
    return format_time(datetime.now(timezone.utc))


def sqlite_version() -> str:
    return apsw.sqlite_lib_version()


@dataclass
class ItemRecord:
    """One item as the pipeline writes it."""

    uid: str
    source: str
    agent: str
    session_id: str
    segment_index: int
    occurred_at: datetime
    title: str
    summary: str
    questions: list[str]
    atoms: list[dict[str, str]]
    original: str
    content_hash: str
    summarizer: str
    summary_schema: int
    project: str | None = None
    parent_session_id: str | None = None
    started_at: datetime | None = None
    summarizer_model: str | None = None
    language: str | None = None
    cwd: str | None = None
    git_branch: str | None = None
    model: str | None = None
    project_guess: str | None = None
    device_project: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    # The segment's messages for the messages layer; None: read back from `original`.
    messages: list[MessageRecord] | None = None


def fts_row(title: str, summary: str, questions: list[str], atoms: list[dict], project: str | None) -> tuple:
    """The five indexed columns. Atom types are left out: 'error' or 'file' in every item would
    make those words match everything."""
    return (title, summary, "\n".join(questions), "\n".join(a["text"] for a in atoms), project or "")


# Store.tidy_index: a run that wrote at least this many items and this share of the library
# merges the whole index into one segment.
OPTIMIZE_MIN_ITEMS = 1000
OPTIMIZE_SHARE = 0.25

# Readers map the file instead of copying each page into the connection's cache: FTS5 walks long
# posting lists, and at 100k items this cut search time by about a fifth (benchmarks/load/README.md).
# It is address space, not memory. SQLite maps at most the file's size, so this covers any library
# (apsw 3.44 and later build SQLite with a 2^48-byte limit on 64-bit platforms; a lower limit maps
# what it can). At 2 GB (before 2026-12-02) a 7.9 GB library with messages read every page past
# its first 2 GB through the connection's 2 MB cache: the fused search at 100k cost 7-10% more at
# p50 and 10-15% more at p99 (benchmarks/load/README.md).
READ_MMAP_BYTES = 1 << 40
# Readers have FTS5 prepare its own statements once under SQLite's query planner stability
# guarantee (SQLITE_DBCONFIG_ENABLE_QPSG, _fts5_lookups_planned_once). apsw's SQLite has STAT4
# compiled in, and a statement whose plan could look at a bound value is prepared again at every
# new binding: FTS5's own lookup of a term in each segment of an index (`... WHERE segid=? AND
# term<=?` on its _idx table) is such a statement, so every MATCH prepared it again once per
# segment: 20-29% of a messages-index lookup on the load benchmark's 20k library (14 segments;
# 99 -> 52 us a lookup), a fifth of the fused search's read of unread sessions. Only FTS5's own
# statements: the guarantee on every statement of the connection cost the items search on FTS5
# ~4% at p50 (the messages benchmark, 10k; benchmarks/load/README.md, branch speed6).
READ_STABLE_PLANS = True
# The prepared statements a reader keeps (apsw's statement cache; its default is 100). A fused
# search runs ~30 distinct statements (~67 executions), yet with the default 3.9 of them a search
# were prepared again (apsw's cache_stats: misses, evictions), ~20-25 us each; with 512, 0.15 (the
# load benchmark's 800 searches, 20k items with messages, tantivy; benchmarks/load/README.md,
# 2026-12-04, `load10`). The statements kept are the ones the reader runs: a few dozen.
READ_STATEMENTS_KEPT = 512


def _configure(conn: apsw.Connection) -> None:
    conn.set_busy_timeout(BUSY_TIMEOUT_MS)


def open_readonly(path: str | os.PathLike) -> apsw.Connection:
    """A read-only connection: what every reader (query layer, server, CLI) uses."""
    p = Path(path)
    if not p.exists():
        raise StoreError(f"no library at {p} (run `jezero init` or `jezero up` first)")
    conn = apsw.Connection(str(p), flags=apsw.SQLITE_OPEN_READONLY, statementcachesize=READ_STATEMENTS_KEPT)
    try:
        conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()  # WAL's -shm is opened here
    except apsw.CantOpenError:
        fallback = _open_in_read_only_folder(p)
        if fallback is None:
            raise
        conn.close()
        conn = fallback
    except apsw.Error:
        pass  # (a library that cannot be read fails on its first real statement, as before)
    _configure(conn)
    conn.execute(f"PRAGMA mmap_size={READ_MMAP_BYTES}").fetchall()
    if READ_STABLE_PLANS:
        _fts5_lookups_planned_once(conn)
    return conn


def _open_in_read_only_folder(p: Path) -> apsw.Connection | None:
    """A library on a read-only mount (a snapshot, a backup mounted to look something up), closed
    cleanly by its writer: no `-wal` beside it, and none can be made. SQLite reads a WAL library
    only with its `-shm` file, which it cannot create there either, so every reader (search, the
    server) failed with "unable to open database file". Nobody can write the file through that
    mount, so it is read as immutable (no WAL, no locks). None otherwise, a real failure: a `-wal`
    holding data, or a folder only this user cannot write (another user's `jezero run` may write
    the library later, and an immutable reader would go on answering from pages that changed
    under it)."""
    wal = Path(f"{p}-wal")
    if not _on_read_only_mount(p.parent) or (wal.exists() and wal.stat().st_size > 0):
        return None
    from urllib.parse import quote

    conn = apsw.Connection(f"file:{quote(str(p.resolve()))}?immutable=1",
                           flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI,
                           statementcachesize=READ_STATEMENTS_KEPT)
    conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
    return conn


def _on_read_only_mount(folder: Path) -> bool:
    try:
        return bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def _fts5_lookups_planned_once(conn: apsw.Connection) -> None:
    """READ_STABLE_PLANS: FTS5's own statements (its term lookup per segment among them) prepared
    under the query planner stability guarantee, by one lookup in each FTS5 index, which FTS5
    keeps prepared for the connection; the connection's other statements are planned as before."""
    try:
        conn.config(apsw.SQLITE_DBCONFIG_ENABLE_QPSG, 1)
        tables = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE % USING fts5%'")]
        for name in tables:
            quoted = '"' + name.replace('"', '""') + '"'
            conn.execute(f"SELECT rowid FROM {quoted} WHERE {quoted} MATCH 'jezeroplanned' LIMIT 1").fetchall()
    except apsw.Error:
        pass  # (a library that cannot be read here fails on its first real statement instead)
    finally:
        conn.config(apsw.SQLITE_DBCONFIG_ENABLE_QPSG, 0)


class StoreStatements:
    """The writer's methods that are the same plain SQL on every backend (`?` marks, the tables of
    jezero/store/migrations.py). A backend's writer sets `db`, `path` and `after_write`, and gives
    `_index` (an item's search row written anew) and `write`."""

    def close(self) -> None:
        self.db.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- connectors --------------------------------------------------------------------------

    def cursor(self, connector: str) -> dict[str, Any]:
        rows = self.db.execute("SELECT key, value FROM cursors WHERE connector=?", (connector,))
        return {k: json.loads(v) for k, v in rows}

    def connector_state(self, name: str) -> dict[str, Any] | None:
        row = self.db.execute(
            "SELECT name, last_run_at, last_success_at, last_error, warnings FROM connector_state WHERE name=?",
            (name,),
        ).fetchone()
        if not row:
            return None
        return {"name": row[0], "last_run_at": row[1], "last_success_at": row[2], "last_error": row[3],
                "warnings": json.loads(row[4])}

    # -- items -------------------------------------------------------------------------------

    def session_items(self, source: str, session_id: str) -> dict[str, tuple[int, str]]:
        """uid -> (id, content_hash) of the items already stored for a session."""
        rows = self.db.execute(
            "SELECT uid, id, content_hash FROM items WHERE source=? AND session_id=?", (source, session_id)
        )
        return {uid: (i, h) for uid, i, h in rows}

    def session_originals(self, source: str, session_id: str) -> list[str]:
        """The stored originals of a session's items, in segment order."""
        rows = self.db.execute("SELECT original FROM items WHERE source=? AND session_id=? ORDER BY segment_index",
                               (source, session_id))
        return [r[0] for r in rows]

    def _holding(self) -> ExitStack:
        """Entered around a write's transaction: each after_write listener's `hold`, if it has one
        (a derived index's follower, jezero.store.engines.follower, holds the index's catch-up
        lock across the commit and brings the index in step before it lets go)."""
        stack = ExitStack()
        for listener in self.after_write:
            hold = getattr(listener, "hold", None)
            if hold is not None:
                stack.enter_context(hold())
        return stack

    def _written(self) -> None:
        for listener in self.after_write:
            try:
                listener()
            except Exception as e:
                log.warning("after a write to %s: %s", self.path, e)

    def set_cursor(self, connector: str, entries: dict[str, Any]) -> None:
        self.write((), connector=connector, cursor=entries)

    SUMMARY_FIELDS = ("title", "summary", "questions", "atoms", "summarizer", "summarizer_model", "summary_schema",
                      "language", "project_guess")

    def set_summary(self, item_id: int, fields: dict[str, Any], *, call: dict[str, Any] | None = None) -> None:
        """Give one item a new summary (`SUMMARY_FIELDS`, as `summary_fields` makes them) and its
        index row, with the summarizer call that made it (`record_call`'s keywords) in the same
        transaction. Nothing else is touched: where the item comes from, its original and its
        messages (their times are not in the original) stay as the run wrote them."""
        values = {k: fields[k] for k in self.SUMMARY_FIELDS}
        values["questions"] = json.dumps(values["questions"], ensure_ascii=False)
        values["atoms"] = json.dumps(values["atoms"], ensure_ascii=False)
        with self._holding(), self.db:
            row = self.db.execute("SELECT project FROM items WHERE id=?", (item_id,)).fetchone()
            if not row:
                raise StoreError(f"no item {item_id}")
            if call is not None:
                self.record_call(**call)
            sets = ", ".join(f"{k}=:{k}" for k in values)
            self.db.execute(f"UPDATE items SET {sets}, updated_at=:now WHERE id=:id",
                            {**values, "now": now_text(), "id": item_id})
            self._index(item_id, fields["title"], fields["summary"], fields["questions"], fields["atoms"], row[0])
        self._written()


def _create_library_file(path: Path) -> None:
    """A new library file, empty and already in WAL mode, put at `path` whole, only its owner
    able to read it (SQLite gives its -wal and -shm files the library's mode).

    Switching a new file to WAL writes its first page through a rollback journal. A writer killed
    in that moment (SIGKILL, a power cut during the first `jezero run`) left the page and a hot
    journal that only a writable connection may roll back: every reader (the server, search,
    status) failed with "attempt to write a readonly database" until a writer came. Made beside
    the library and linked into place, the file is whole or absent; a kill leaves a hidden
    `.<name>.*.new` file at most. Another writer creating the same library at the same moment
    keeps its file (the link refuses to replace one)."""
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".new")  # mode 0600
    os.close(fd)
    try:
        conn = apsw.Connection(name)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
        finally:
            conn.close()
        try:
            os.link(name, path)
        except FileExistsError:
            pass
        except OSError:  # a file system without hard links: moved in, unless one appeared meanwhile
            if not path.exists():
                os.replace(name, path)
    finally:
        with suppress(FileNotFoundError):
            os.unlink(name)


class Store(StoreStatements):
    """The writer side. One per process; SQLite serialises writers across processes."""

    def __init__(self, path: str | os.PathLike, tokenizer: str = DEFAULT_TOKENIZER, *, migrate_to: int = LATEST):
        self.path = Path(path)
        private_folder(self.path.parent)
        if not self.path.exists():
            _create_library_file(self.path)
        self.db = apsw.Connection(str(self.path))
        _configure(self.db)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")  # durable at checkpoints; WAL keeps it consistent
        version = current_version(self.db)
        if version > LATEST:
            raise StoreError(
                f"{self.path} has schema version {version}, newer than this jezero knows ({LATEST}): upgrade jezero"
            )
        if version:
            stored = self.tokenizer()
            if stored != tokenizer:
                raise TokenizerMismatch(
                    f"{self.path} was built with tokenizer {stored!r} but the config asks for {tokenizer!r}. "
                    f"Either set storage.tokenizer = {stored!r}, or rebuild: move the file away, run "
                    "`jezero init`, and `jezero run` to ingest again (cursors start over)."
                )
        # Called after each write commits (a derived search index follows the library; see
        # jezero.store.engines.follower). A failing listener is logged: the write stands.
        self.after_write: list = []
        # The semantic lane's writer (jezero.store.vectors.VectorWriter), set by whoever turns the
        # lane on; None: no vectors are written and items written now are behind until `jezero embed`.
        self.vectors = None
        try:
            migrate(self.db, tokenizer, migrate_to)
        except apsw.SQLError as e:
            if "tokenize" in str(e):
                raise StoreError(f"SQLite {sqlite_version()} cannot build tokenizer {tokenizer!r}: {e}") from None
            raise

    # -- meta --------------------------------------------------------------------------------

    def tokenizer(self) -> str:
        row = self.db.execute("SELECT value FROM meta WHERE key='tokenizer'").fetchone()
        return row[0] if row else DEFAULT_TOKENIZER

    def schema_version(self) -> int:
        return current_version(self.db)

    # -- connectors --------------------------------------------------------------------------

    def record_run(self, name: str, *, error: str | None, warnings: list[str], ok: bool) -> None:
        now = now_text()
        record_warnings(self.db, name, warnings, now)
        with self.db:
            self.db.execute(
                """INSERT INTO connector_state(name, last_run_at, last_success_at, last_error, warnings)
                   VALUES(?, ?, ?, ?, ?)
                   ON CONFLICT(name) DO UPDATE SET last_run_at=excluded.last_run_at,
                     last_success_at=COALESCE(excluded.last_success_at, connector_state.last_success_at),
                     last_error=excluded.last_error, warnings=excluded.warnings""",
                (name, now, now if ok else None, error, json.dumps(warnings[:200])),
            )

    # -- items -------------------------------------------------------------------------------

    def hash_exists(self, content_hash: str) -> tuple[int, str] | None:
        row = self.db.execute("SELECT id, uid FROM items WHERE content_hash=? LIMIT 1", (content_hash,)).fetchone()
        return (row[0], row[1]) if row else None

    def write(
        self,
        items: Iterable[ItemRecord],
        *,
        connector: str | None = None,
        cursor: dict[str, Any] | None = None,
        delete_uids: Iterable[str] = (),
        calls: Iterable[dict[str, Any]] = (),
    ) -> list[int]:
        """Upsert items, their FTS rows, their messages and the connector's cursor entries in one
        transaction, with the summarizer calls that made them (`record_call`'s keywords): a crash
        leaves neither, so the call log never lists a paid call whose items were lost."""
        ids = []
        now = now_text()
        items = list(items)
        # Embedded before the transaction opens: the model's work holds no lock.
        prepared = self.vectors.prepare_records(items) if self.vectors is not None and items else None
        with self._holding(), self.db:
            for call in calls:
                self.record_call(**call)
            for uid in delete_uids:
                self._delete(uid)
            index_rows = message_rows.IndexRows()  # the messages' index rows, written in id order at the end
            for i, it in enumerate(items):
                ids.append(self._upsert(it, now, index_rows))
                if prepared is not None:
                    self.vectors.put(self.db, ids[-1], prepared[i])
            message_rows.insert_index_rows(self.db, index_rows)
            for key, value in (cursor or {}).items():
                self.db.execute(
                    "INSERT INTO cursors(connector, key, value) VALUES(?, ?, ?) "
                    "ON CONFLICT(connector, key) DO UPDATE SET value=excluded.value",
                    (connector, key, json.dumps(value)),
                )
        self._written()
        return ids

    def _delete(self, uid: str) -> None:
        row = self.db.execute("SELECT id FROM items WHERE uid=?", (uid,)).fetchone()
        if row:
            if self.vectors is not None:
                self.vectors.drop(self.db, row[0])
            message_rows.remove(self.db, row[0])
            self.db.execute("DELETE FROM items_fts WHERE rowid=?", (row[0],))
            self.db.execute("DELETE FROM items WHERE id=?", (row[0],))

    def _upsert(self, it: ItemRecord, now: str, index_rows: message_rows.IndexRows | None = None) -> int:
        values = dict(
            uid=it.uid, source=it.source, agent=it.agent, project=it.project, session_id=it.session_id,
            parent_session_id=it.parent_session_id, segment_index=it.segment_index,
            occurred_at=format_time(it.occurred_at),
            started_at=format_time(it.started_at) if it.started_at else None,
            title=it.title, summary=it.summary, questions=json.dumps(it.questions, ensure_ascii=False),
            atoms=json.dumps(it.atoms, ensure_ascii=False), original=it.original, content_hash=it.content_hash,
            summarizer=it.summarizer, summarizer_model=it.summarizer_model, summary_schema=it.summary_schema,
            language=it.language, cwd=it.cwd, git_branch=it.git_branch, model=it.model,
            project_guess=it.project_guess, device_project=it.device_project, updated_at=now,
        )
        row = self.db.execute("SELECT id FROM items WHERE uid=?", (it.uid,)).fetchone()
        if row:
            item_id = row[0]
            sets = ", ".join(f"{k}=:{k}" for k in values)
            self.db.execute(f"UPDATE items SET {sets} WHERE id=:id", {**values, "id": item_id})
            self.db.execute("DELETE FROM items_fts WHERE rowid=?", (item_id,))
        else:
            values["ingested_at"] = now
            cols = ", ".join(values)
            marks = ", ".join(f":{k}" for k in values)
            self.db.execute(f"INSERT INTO items({cols}) VALUES({marks})", values)
            item_id = self.db.last_insert_rowid()
        self.db.execute(
            "INSERT INTO items_fts(rowid, title, summary, questions, atoms, project) VALUES(?, ?, ?, ?, ?, ?)",
            (item_id, *fts_row(it.title, it.summary, it.questions, it.atoms, it.project)),
        )
        message_rows.replace(self.db, item_id, it, format_time, it.messages, index_rows)
        return item_id

    def set_project(self, item_id: int, project: str | None) -> None:
        """Retag one item (and its index row) without touching anything else."""
        with self._holding(), self.db:
            row = self.db.execute(
                "SELECT title, summary, questions, atoms FROM items WHERE id=?", (item_id,)
            ).fetchone()
            if not row:
                raise StoreError(f"no item {item_id}")
            fresh = self.vectors is not None and self.vectors.is_fresh(self.db, item_id)
            self.db.execute("UPDATE items SET project=?, updated_at=? WHERE id=?", (project, now_text(), item_id))
            message_rows.retag(self.db, item_id, project)
            if self.vectors is not None:
                self.vectors.retag(self.db, item_id, project, fresh)
            self.db.execute("DELETE FROM items_fts WHERE rowid=?", (item_id,))
            self.db.execute(
                "INSERT INTO items_fts(rowid, title, summary, questions, atoms, project) VALUES(?, ?, ?, ?, ?, ?)",
                (item_id, *fts_row(row[0], row[1], json.loads(row[2]), json.loads(row[3]), project)),
            )
        self._written()

    def _index(self, item_id: int, title, summary, questions, atoms, project) -> None:
        self.db.execute("DELETE FROM items_fts WHERE rowid=?", (item_id,))
        self.db.execute("INSERT INTO items_fts(rowid, title, summary, questions, atoms, project) VALUES(?, ?, ?, ?, ?, ?)",
                        (item_id, *fts_row(title, summary, questions, atoms, project)))

    def unacknowledged_warnings(self, connector: str | None = None) -> list[dict[str, Any]]:
        return unacknowledged_warnings(self.db, connector)

    def acknowledge_warnings(self, **which) -> int:
        """See jezero.store.warnings.acknowledge: ids=, match=, connector=, everything=."""
        return acknowledge(self.db, now=now_text(), **which)

    def record_call(self, *, run_id: str, source: str | None, uid: str | None, summarizer: str, model: str | None,
                    input_tokens: int, output_tokens: int, cost_usd: float | None, ok: bool,
                    error: str | None = None) -> None:
        with self.db:  # a savepoint when called inside write()
            self.db.execute(
                """INSERT INTO summarizer_calls(run_id, at, source, uid, summarizer, model, input_tokens,
                   output_tokens, cost_usd, ok, error) VALUES(?,?,?,?,?,?,?,?,?,?,?)""",
                (run_id, now_text(), source, uid, summarizer, model, input_tokens, output_tokens, cost_usd,
                 int(ok), error),
            )

    def tidy_index(self, written: int = 0, pages: int = 500) -> None:
        """Merge the FTS5 index's segments after a run wrote `written` items: many small segments
        slow every search. After a large share of the library was written (a backfill, an
        import) everything goes into one segment ('optimize': 14.5 s at 100k items, -15% search
        time at p50, benchmarks/search/README.md; readers are not held up); otherwise a bounded
        merge, so that a small run stays quick."""
        items = self.db.execute("SELECT count(*) FROM items").fetchone()[0]
        with self.db:
            for table in ("items_fts", "messages_fts"):
                if written >= OPTIMIZE_MIN_ITEMS and written >= OPTIMIZE_SHARE * items:
                    self.db.execute(f"INSERT INTO {table}({table}) VALUES('optimize')")
                else:
                    self.db.execute(f"INSERT INTO {table}({table}, rank) VALUES('merge', ?)", (pages,))

    def index_segments(self) -> int:
        return index_segments(self.db)

    def integrity_check(self) -> str:
        return self.db.execute("PRAGMA integrity_check").fetchone()[0]

    def counts(self) -> dict[str, int]:
        return {
            "items": self.db.execute("SELECT count(*) FROM items").fetchone()[0],
            "fts": self.db.execute("SELECT count(*) FROM items_fts").fetchone()[0],
            "messages": self.db.execute("SELECT count(*) FROM messages").fetchone()[0],
        }


def row_to_item(row: dict[str, Any], *, include_original: bool = False) -> dict[str, Any]:
    """A stored row as the dict every reader returns."""
    item = dict(row)
    item["questions"] = json.loads(item["questions"])
    item["atoms"] = json.loads(item["atoms"])
    if not include_original:
        item.pop("original", None)
    return item


def index_segments(conn: apsw.Connection) -> int:
    """How many segments the FTS5 index has (its structure record: a 4-byte cookie, then the
    varints nLevel and nSegment)."""
    row = conn.execute("SELECT block FROM items_fts_data WHERE id = 10").fetchone()
    if row is None:
        return 0
    values = varints(row[0][4:])
    return values[1] if len(values) > 1 else 0


def varints(blob: bytes) -> list[int]:
    """The SQLite varints in one of FTS5's records (averages, structure, docsize)."""
    values = []
    i = 0
    while i < len(blob):
        value = 0
        for k in range(9):
            if i >= len(blob):
                break
            byte = blob[i]
            i += 1
            if k == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        values.append(value)
    return values or [0]
