"""The writer side of a PostgreSQL library: what the pipeline writes (items with their search row
and messages, cursors, runs, warnings, summarizer calls), with the same methods and the same
one-transaction guarantees as jezero.store.Store."""

from __future__ import annotations

import fnmatch
import json
from contextlib import contextmanager
import unicodedata
from typing import Any, Iterable

from jezero.store import (ItemRecord, StoreError, StoreStatements, TokenizerMismatch, format_time, fts_row,
                          now_text)
from jezero.store import messages as message_rows
from jezero.store.messages import MessageRecord
from jezero.store.warnings import MAX_PER_RUN

from jezero_store_postgres import messages as message_search
from jezero_store_postgres import schema
from jezero_store_postgres.db import Connection


# The tsvector's weight classes, and which of the five fields goes into each. ts_rank_cd takes
# the four weights as {D, C, B, A}, each at most 1; these are FTS5's column weights (bm25 2.0,
# 1.0, 1.5, 1.5, 0.5 for title, summary, questions, atoms, project) halved: four classes exactly.
WEIGHT_CLASSES = {"title": "A", "questions": "B", "atoms": "B", "summary": "C", "project": "D"}
RANK_WEIGHTS = "{0.25, 0.5, 0.75, 1.0}"


def fold(text: str) -> str:
    """Lowercase without diacritics (NFKD, combining marks dropped): what FTS5's trigram
    tokenizer with remove_diacritics compares, done once here for the index and once for each
    query term, so that `brulee` finds `Crème brûlée` on both backends."""
    text = text.lower()
    if text.isascii():
        return text
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def search_row(title: str, summary: str, questions: list[str], atoms: list[dict], project: str | None):
    """(folded text, title, B-text, summary, project) for items_search, from the five indexed fields."""
    t, s, q, a, p = (fold(x) for x in fts_row(title, summary, questions, atoms, project))
    return "\n".join((t, s, q, a, p)), t, q + "\n" + a, s, p


SEARCH_ROW = """(?, ?,
  setweight(to_tsvector('simple', ?), 'A') || setweight(to_tsvector('simple', ?), 'B') ||
  setweight(to_tsvector('simple', ?), 'C') || setweight(to_tsvector('simple', ?), 'D'))"""
SEARCH_UPSERT = ("INSERT INTO items_search(id, folded, fts) VALUES {rows} "
                 "ON CONFLICT(id) DO UPDATE SET folded = excluded.folded, fts = excluded.fts")


def connect_writer(url: str, tokenizer: str, target: int = schema.LATEST) -> Connection:
    db = Connection(url, application_name="jezero writer")
    version = schema.current_version(db)
    if version > schema.LATEST:
        db.close()
        raise StoreError(f"the PostgreSQL library has schema version {version}, newer than this "
                         f"jezero-store-postgres knows ({schema.LATEST}): upgrade it")
    if version:
        stored = db.execute("SELECT value FROM meta WHERE key='tokenizer'").fetchone()
        if stored and stored[0] != tokenizer:
            db.close()
            raise TokenizerMismatch(f"the PostgreSQL library was made with tokenizer {stored[0]!r} but the config "
                                    f"asks for {tokenizer!r}: set storage.tokenizer = {stored[0]!r}")
    schema.migrate(db, tokenizer, target)
    return db


class PostgresStore(StoreStatements):
    """jezero.store.Store's methods over PostgreSQL; the ones that are the same plain SQL on both
    come from StoreStatements. `db` is the apsw-like connection (jezero_store_postgres.db)."""

    def __init__(self, url: str, tokenizer: str, *, where: str = "postgres", migrate_to: int = schema.LATEST):
        self.path = where  # what messages name as the library (never the connection string: it may hold a password)
        self.db = connect_writer(url, tokenizer, migrate_to)  # migrate_to: an older schema, for tests
        self.after_write: list = []
        self.vectors = None  # the semantic lane is SQLite's (sqlite-vec) for now

    # -- meta ---------------------------------------------------------------------------------

    def tokenizer(self) -> str:
        row = self.db.execute("SELECT value FROM meta WHERE key='tokenizer'").fetchone()
        return row[0]

    def schema_version(self) -> int:
        return schema.current_version(self.db)

    # -- connectors ---------------------------------------------------------------------------

    def record_run(self, name: str, *, error: str | None, warnings: list[str], ok: bool) -> None:
        now = now_text()
        with self.db:
            rows = [(name, m, now, now) for m in dict.fromkeys(warnings)][:MAX_PER_RUN]
            self.db.executemany(
                """INSERT INTO warnings(connector, message, first_seen, last_seen) VALUES(?, ?, ?, ?)
                   ON CONFLICT(connector, message) DO UPDATE SET last_seen = excluded.last_seen,
                     runs = warnings.runs + 1""", rows)
            self.db.execute(
                """INSERT INTO connector_state(name, last_run_at, last_success_at, last_error, warnings)
                   VALUES(?, ?, ?, ?, ?)
                   ON CONFLICT(name) DO UPDATE SET last_run_at=excluded.last_run_at,
                     last_success_at=COALESCE(excluded.last_success_at, connector_state.last_success_at),
                     last_error=excluded.last_error, warnings=excluded.warnings""",
                (name, now, now if ok else None, error, json.dumps(warnings[:200])))

    def unacknowledged_warnings(self, connector: str | None = None, *, limit: int | None = None) -> list[dict]:
        where, args = ["acknowledged_at IS NULL"], []
        if connector is not None:
            where.append("connector = ?")
            args.append(connector)
        sql = ("SELECT id, connector, message, first_seen, last_seen, runs FROM warnings WHERE "
               + " AND ".join(where) + " ORDER BY last_seen DESC, id DESC")
        if limit is not None:
            sql += " LIMIT ?"
            args.append(int(limit))
        cols = ("id", "connector", "message", "first_seen", "last_seen", "runs")
        return [dict(zip(cols, r)) for r in self.db.execute(sql, args)]

    def acknowledge_warnings(self, *, ids=(), match: str | None = None, connector: str | None = None,
                             everything: bool = False) -> int:
        if not (ids or match or everything):
            return 0
        chosen = [w["id"] for w in self.unacknowledged_warnings(connector)
                  if everything or w["id"] in ids or (match is not None and fnmatch.fnmatchcase(w["message"], match))]
        if chosen:
            with self.db:
                self.db.executemany("UPDATE warnings SET acknowledged_at = ? WHERE id = ?",
                                    [(now_text(), i) for i in chosen])
        return len(chosen)

    # -- items --------------------------------------------------------------------------------

    def hash_exists(self, content_hash: str) -> tuple[int, str] | None:
        row = self.db.execute("SELECT id, uid FROM items WHERE content_hash=? ORDER BY id LIMIT 1",
                              (content_hash,)).fetchone()
        return (row[0], row[1]) if row else None

    def write(self, items: Iterable[ItemRecord], *, connector: str | None = None, cursor: dict | None = None,
              delete_uids: Iterable[str] = (), calls: Iterable[dict] = ()) -> list[int]:
        """Items, their search rows, their messages, the cursor and the summarizer calls in one
        transaction (Store.write's guarantee)."""
        ids = []
        now = now_text()
        with self.db:
            for call in calls:
                self.record_call(**call)
            for uid in delete_uids:
                self.db.execute("DELETE FROM items WHERE uid=?", (uid,))  # search row and messages cascade
            with self.search_rows_at_once():
                for it in items:
                    ids.append(self._upsert(it, now))
            for key, value in (cursor or {}).items():
                self.db.execute("INSERT INTO cursors(connector, key, value) VALUES(?, ?, ?) "
                                "ON CONFLICT(connector, key) DO UPDATE SET value=excluded.value",
                                (connector, key, json.dumps(value)))
        self._written()
        return ids

    def _upsert(self, it: ItemRecord, now: str) -> int:
        values = dict(
            uid=it.uid, source=it.source, agent=it.agent, project=it.project, session_id=it.session_id,
            parent_session_id=it.parent_session_id, segment_index=it.segment_index,
            occurred_at=format_time(it.occurred_at), started_at=format_time(it.started_at) if it.started_at else None,
            title=it.title, summary=it.summary, questions=json.dumps(it.questions, ensure_ascii=False),
            atoms=json.dumps(it.atoms, ensure_ascii=False), original=it.original, content_hash=it.content_hash,
            summarizer=it.summarizer, summarizer_model=it.summarizer_model, summary_schema=it.summary_schema,
            language=it.language, cwd=it.cwd, git_branch=it.git_branch, model=it.model,
            project_guess=it.project_guess, device_project=it.device_project, updated_at=now, ingested_at=now,
        )
        cols = ", ".join(values)
        marks = ", ".join(f":{k}" for k in values)
        sets = ", ".join(f"{k}=excluded.{k}" for k in values if k not in ("uid", "ingested_at"))
        item_id = self.db.execute(f"INSERT INTO items({cols}) VALUES({marks}) ON CONFLICT(uid) DO UPDATE SET {sets} "
                                  "RETURNING id", values).fetchone()[0]
        self._index(item_id, it.title, it.summary, it.questions, it.atoms, it.project)
        self._messages(item_id, it, it.messages)
        return item_id

    _search_rows: dict | None = None  # inside write(): the batch's search rows, written at once

    def _index(self, item_id: int, title, summary, questions, atoms, project) -> None:
        row = (item_id, *search_row(title, summary, questions, atoms, project))
        if self._search_rows is not None:
            self._search_rows[item_id] = row  # a uid written twice in one batch: its last version
        else:
            self._write_search_rows({item_id: row})

    @contextmanager
    def search_rows_at_once(self):
        """Inside, _index collects the search rows; they are written in one statement at the end
        (write() does this for its items; migrate-store for each batch)."""
        self._search_rows = {}
        try:
            yield
            self._write_search_rows(self._search_rows)
        finally:
            self._search_rows = None

    def _write_search_rows(self, rows: dict) -> None:
        """The search rows of a write in one statement: the trigger that keeps the term counts and
        postings (schema._v3) then changes each word's count once per write, not once per item."""
        for start in range(0, len(rows), 500):
            chunk = list(rows.values())[start:start + 500]
            self.db.execute(SEARCH_UPSERT.format(rows=", ".join([SEARCH_ROW] * len(chunk))),
                            [v for row in chunk for v in row])

    def _messages(self, item_id: int, item, messages: list[MessageRecord] | None) -> int:
        """message_rows.replace's rows, in this database."""
        self.db.execute("DELETE FROM messages WHERE item_id = ?", (item_id,))
        if messages is None:
            messages = message_rows.from_original(item.original)
        default_at = format_time(item.occurred_at) if not isinstance(item.occurred_at, str) else item.occurred_at
        written = []
        kept = message_rows.kept(messages)
        ats = [format_time(m.at) if m.at else default_at for _, _, m, _ in kept]
        # ids that follow the messages' time, as on SQLite (jezero.store.messages.time_id)
        for message_id, at, (seq, role, m, text) in zip(message_rows.allocate_ids(self.db, ats), ats, kept):
            self.db.execute(
                "INSERT INTO messages(id, item_id, source, session_id, parent_session_id, project, segment_index, seq, "
                "role, tool, at, prompt_hash) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)",
                (message_id, item_id, item.source, item.session_id, item.parent_session_id, item.project,
                 item.segment_index, seq, role, m.tool, at, message_rows.prompt_hash(role, text)))
            self.db.execute("INSERT INTO message_texts(id, text) VALUES(?, ?)", (message_id, text))
            written.append((message_id, text))
        message_search.index(self.db, item_id, written)
        return len(written)

    def set_project(self, item_id: int, project: str | None) -> None:
        with self.db:
            row = self.db.execute("SELECT title, summary, questions, atoms FROM items WHERE id=?",
                                  (item_id,)).fetchone()
            if not row:
                raise StoreError(f"no item {item_id}")
            self.db.execute("UPDATE items SET project=?, updated_at=? WHERE id=?", (project, now_text(), item_id))
            self.db.execute("UPDATE messages SET project = ? WHERE item_id = ?", (project, item_id))
            self._index(item_id, row[0], row[1], json.loads(row[2]), json.loads(row[3]), project)
        self._written()

    def record_call(self, *, run_id: str, source: str | None, uid: str | None, summarizer: str, model: str | None,
                    input_tokens: int, output_tokens: int, cost_usd: float | None, ok: bool,
                    error: str | None = None) -> None:
        with self.db:
            self.db.execute(
                """INSERT INTO summarizer_calls(run_id, at, source, uid, summarizer, model, input_tokens,
                   output_tokens, cost_usd, ok, error) VALUES(?,?,?,?,?,?,?,?,?,?,?)""",
                (run_id, now_text(), source, uid, summarizer, model, input_tokens, output_tokens, cost_usd,
                 int(ok), error))

    def tidy_index(self, written: int = 0, pages: int = 500) -> None:
        """PostgreSQL's autovacuum keeps the GIN indexes' pending lists merged; after a large
        share of the library was written, the planner's statistics are refreshed at once, and
        the postings are vacuumed so that searches read them from their index alone (an
        index-only scan reads the table for every page the visibility map does not yet mark)."""
        if written >= 1000:
            self.refresh_statistics()

    def refresh_statistics(self) -> None:
        """The planner's statistics of the searched tables, now (after a bulk write or copy)."""
        for table in ("items", "items_search", "messages", "messages_search"):
            self.db.execute(f"ANALYZE {table}")
        if not self.db.in_transaction:  # VACUUM runs outside a transaction only
            self.db.execute("VACUUM (ANALYZE) search_postings, search_words")
        else:
            self.db.execute("ANALYZE search_postings")
            self.db.execute("ANALYZE search_words")

    def index_segments(self) -> int:
        return 0

    def integrity_check(self) -> str:
        return "ok"

    def counts(self) -> dict[str, int]:
        return {
            "items": self.db.execute("SELECT count(*) FROM items").fetchone()[0],
            "fts": self.db.execute("SELECT count(*) FROM items_search").fetchone()[0],
            "messages": self.db.execute("SELECT count(*) FROM messages").fetchone()[0],
        }
