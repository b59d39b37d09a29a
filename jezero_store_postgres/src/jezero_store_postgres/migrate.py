"""`jezero migrate-store`: copy a library between SQLite and PostgreSQL, either way.

What is copied: every item with its id (so item ids an agent or a person wrote down still name the
same item), its messages with theirs, the connectors' cursors and state, the warnings, the
summarizer calls, and the library's identity and tokenizer. The destination builds its own search
index from the items it receives (FTS5 rows, or items_search). Vectors are not copied: the
semantic lane is SQLite's, and `jezero embed` makes them.

Resumable: items go in batches of BATCH, each batch one transaction that adds only the ids the
destination lacks; a copy stopped half-way (Ctrl-C, a lost connection) starts again where it
stopped, and nothing it already wrote is written twice. The small tables are upserted whole.

Verified: at the end, counts and a content hash per table (SHA-256 over every row in id order, as
JSON) on both sides. A destination that holds other items, or the same ids with other content,
fails the check and says which table differs; nothing is deleted to make it pass.
"""

from __future__ import annotations

import hashlib
import json
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Callable

BATCH = 500

ITEM_COLUMNS = ("id", "uid", "source", "agent", "project", "session_id", "parent_session_id", "segment_index",
                "occurred_at", "started_at", "title", "summary", "questions", "atoms", "original", "content_hash",
                "summarizer", "summarizer_model", "summary_schema", "language", "cwd", "git_branch", "model",
                "project_guess", "device_project", "ingested_at", "updated_at")
MESSAGE_COLUMNS = ("id", "item_id", "source", "session_id", "parent_session_id", "project", "segment_index", "seq",
                   "role", "tool", "at", "prompt_hash")
# The small tables: (name, columns, conflict key, order).
SMALL = (
    ("cursors", ("connector", "key", "value"), ("connector", "key"), "connector, key"),
    ("connector_state", ("name", "last_run_at", "last_success_at", "last_error", "warnings"), ("name",), "name"),
    ("warnings", ("id", "connector", "message", "first_seen", "last_seen", "runs", "acknowledged_at"), ("id",), "id"),
    ("summarizer_calls", ("id", "run_id", "at", "source", "uid", "summarizer", "model", "input_tokens",
                          "output_tokens", "cost_usd", "ok", "error"), ("id",), "id"),
)
META_KEYS = ("tokenizer", "library_id")


class MigrationFailed(Exception):
    pass


@dataclass
class Report:
    copied_items: int = 0
    skipped_items: int = 0  # already in the destination (a resumed copy)
    counts: dict[str, tuple[int, int]] = field(default_factory=dict)  # table -> (source, destination)
    hashes: dict[str, tuple[str, str]] = field(default_factory=dict)

    @property
    def verified(self) -> bool:
        return all(a == b for a, b in self.counts.values()) and all(a == b for a, b in self.hashes.values())

    def differing(self) -> list[str]:
        return sorted({t for t, (a, b) in {**self.counts, **self.hashes}.items() if a != b})


# -- the two ends -----------------------------------------------------------------------------------


class _End:
    """One library: its apsw-like connection (`?` marks on both backends) and how it indexes."""

    def __init__(self, kind: str, db, store=None):
        self.kind, self.db, self.store = kind, db, store

    def ids_between(self, lo: int, hi: int) -> set[int]:
        return {r[0] for r in self.db.execute("SELECT id FROM items WHERE id BETWEEN ? AND ?", (lo, hi))}

    def insert_item(self, row: dict, messages: list[tuple]) -> None:
        cols = ", ".join(ITEM_COLUMNS)
        marks = ", ".join("?" * len(ITEM_COLUMNS))
        self.db.execute(f"INSERT INTO items({cols}) VALUES({marks})", [row[c] for c in ITEM_COLUMNS])
        questions, atoms = json.loads(row["questions"]), json.loads(row["atoms"])
        if self.kind == "sqlite":
            from jezero.store import fts_row

            self.db.execute("INSERT INTO items_fts(rowid, title, summary, questions, atoms, project) "
                            "VALUES(?, ?, ?, ?, ?, ?)",
                            (row["id"], *fts_row(row["title"], row["summary"], questions, atoms, row["project"])))
        else:
            self.store._index(row["id"], row["title"], row["summary"], questions, atoms, row["project"])
        mcols = ", ".join(MESSAGE_COLUMNS)
        mmarks = ", ".join("?" * len(MESSAGE_COLUMNS))
        for m in messages:
            self.db.execute(f"INSERT INTO messages({mcols}) VALUES({mmarks})", m[:-1])
            self.db.execute("INSERT INTO message_texts(id, text) VALUES(?, ?)", (m[0], m[-1]))
            if self.kind == "sqlite":
                self.db.execute("INSERT INTO messages_fts(rowid, text) VALUES(?, ?)", (m[0], m[-1]))
        if self.kind == "postgres":
            from jezero_store_postgres import messages as message_search

            message_search.index(self.db, row["id"], [(m[0], m[-1]) for m in messages])

    def finish(self) -> None:
        """After explicit ids: PostgreSQL's identity sequences move past the highest one copied;
        and the planner learns the copied tables at once (autovacuum would, some time later: the
        first searches would be planned for empty tables)."""
        if self.kind == "postgres":
            for table in ("items", "messages", "warnings", "summarizer_calls"):
                self.db.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                                f"coalesce((SELECT max(id) FROM {table}), 0) + 1, false)")
            self.store.refresh_statistics()


def _rows(db, sql: str, args=()) -> list[tuple]:
    return [tuple(r) for r in db.execute(sql, args)]


def _digest(rows) -> str:
    h = hashlib.sha256()
    for r in rows:
        h.update(json.dumps(list(r), ensure_ascii=False, default=str).encode("utf-8"))
        h.update(b"\n")
    return h.hexdigest()


def _digest_key(row) -> str:
    return json.dumps(list(row), ensure_ascii=False, default=str)


def _check(source: _End, dest: _End, report: Report) -> None:
    queries = {
        "items": f"SELECT {', '.join(ITEM_COLUMNS)} FROM items ORDER BY id",
        "messages": f"SELECT {', '.join('m.' + c for c in MESSAGE_COLUMNS)}, t.text FROM messages AS m "
                    "JOIN message_texts AS t ON t.id = m.id ORDER BY m.id",
        **{name: f"SELECT {', '.join(cols)} FROM {name} ORDER BY {order}" for name, cols, _, order in SMALL},
    }
    for table, sql in queries.items():
        a, b = _rows(source.db, sql), _rows(dest.db, sql)
        if table not in ("items", "messages"):  # in Python's order: a server's collation may sort text otherwise
            a, b = sorted(a, key=_digest_key), sorted(b, key=_digest_key)
        report.counts[table] = (len(a), len(b))
        report.hashes[table] = (_digest(a), _digest(b))


# -- the copy -----------------------------------------------------------------------------------------


def copy(source: _End, dest: _End, *, progress: Callable[[str], None] | None = None) -> Report:
    report = Report()
    tokenizer = source.db.execute("SELECT value FROM meta WHERE key = 'tokenizer'").fetchone()
    theirs = dest.db.execute("SELECT value FROM meta WHERE key = 'tokenizer'").fetchone()
    if tokenizer and theirs and tokenizer[0] != theirs[0]:
        raise MigrationFailed(f"the destination was made with tokenizer {theirs[0]!r}, the source with "
                              f"{tokenizer[0]!r}: give the destination the source's tokenizer")
    last = 0
    while True:
        rows = source.db.execute(f"SELECT {', '.join(ITEM_COLUMNS)} FROM items WHERE id > ? ORDER BY id LIMIT ?",
                                 (last, BATCH)).fetchall()
        if not rows:
            break
        batch = [dict(zip(ITEM_COLUMNS, r)) for r in rows]
        lo, hi = batch[0]["id"], batch[-1]["id"]
        have = dest.ids_between(lo, hi)
        wanted = [r for r in batch if r["id"] not in have]
        messages: dict[int, list[tuple]] = {}
        if wanted:
            marks = ",".join("?" * len(wanted))
            for m in source.db.execute(
                    f"SELECT {', '.join('m.' + c for c in MESSAGE_COLUMNS)}, t.text FROM messages AS m "
                    f"JOIN message_texts AS t ON t.id = m.id WHERE m.item_id IN ({marks}) ORDER BY m.id",
                    [r["id"] for r in wanted]):
                messages.setdefault(m[1], []).append(tuple(m))
            # Into PostgreSQL, the batch's search rows go in one statement (the term counts then
            # change once per batch: store.PostgresStore.search_rows_at_once).
            with dest.db, (dest.store.search_rows_at_once() if dest.store is not None else nullcontext()):
                for r in wanted:
                    dest.insert_item(r, messages.get(r["id"], []))
        report.copied_items += len(wanted)
        report.skipped_items += len(batch) - len(wanted)
        last = hi
        if progress:
            progress(f"items up to id {hi}: {report.copied_items} copied, {report.skipped_items} already there")
    with dest.db:
        for name, cols, key, _ in SMALL:
            updates = ", ".join(f"{c} = excluded.{c}" for c in cols if c not in key)
            sql = (f"INSERT INTO {name}({', '.join(cols)}) VALUES({', '.join('?' * len(cols))}) "
                   f"ON CONFLICT({', '.join(key)}) DO UPDATE SET {updates}")
            for row in _rows(source.db, f"SELECT {', '.join(cols)} FROM {name}"):
                dest.db.execute(sql, row)
        for key in META_KEYS:
            row = source.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
            if row:
                dest.db.execute("INSERT INTO meta(key, value) VALUES(?, ?) "
                                "ON CONFLICT(key) DO UPDATE SET value = excluded.value", (key, row[0]))
        dest.finish()
    _check(source, dest, report)
    return report


def to_postgres(sqlite_path, url: str, *, progress=None) -> Report:
    """Copy the SQLite library at `sqlite_path` into the PostgreSQL library at `url`."""
    from jezero.store import Store, open_readonly

    from jezero_store_postgres.store import PostgresStore

    # A library an older jezero wrote is migrated first, as a run would: its message ids then
    # follow time (SQLite's migration 9), as the ids this backend gives do.
    src = open_readonly(sqlite_path)
    tokenizer = src.execute("SELECT value FROM meta WHERE key = 'tokenizer'").fetchone()[0]
    src.close()
    Store(sqlite_path, tokenizer).close()
    src = open_readonly(sqlite_path)
    dest = PostgresStore(url, tokenizer)
    try:
        return copy(_End("sqlite", src), _End("postgres", dest.db, dest), progress=progress)
    finally:
        dest.close()
        src.close()


def to_sqlite(url: str, sqlite_path, *, progress=None) -> Report:
    """Copy the PostgreSQL library at `url` into the SQLite library at `sqlite_path`."""
    from jezero.store import Store

    from jezero_store_postgres import connect_reader

    src = connect_reader(url)
    tokenizer = src.execute("SELECT value FROM meta WHERE key = 'tokenizer'").fetchone()[0]
    dest = Store(sqlite_path, tokenizer)
    try:
        return copy(_End("postgres", src), _End("sqlite", dest.db), progress=progress)
    finally:
        dest.close()
        src.close()
