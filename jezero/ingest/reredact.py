"""`jezero redact`: the redactors applied again to what the library already holds.

Redactors run before anything is hashed, summarised or stored, so a rule that comes later (a
redactor plugin installed, a jezero whose built-in rules know a new token shape) protects only
the sessions read after it. This pass gives the stored ones the same treatment, with the same
redactors (`plugins.redactors()`, in the pipeline's order), over every stored text that comes from
a transcript:

- items: title, summary, questions, atoms' texts and the original (the rendered transcript); the
  item's search row is written anew, and its content hash becomes the hash of the new original,
  which is what the pipeline computes when it reads the session again (its segment text is the
  same rendering, redacted by the same rules), so a later run finds the segment unchanged and
  neither summarises it again nor stores it twice;
- the messages layer: each message's text (its index row deleted with the old text and written
  with the new, its prompt hash taken again);
- warnings, the connectors' last errors and warnings, and the summarizer calls' errors;
- the semantic lane: a changed item's vectors and message windows are dropped (they encode the
  old text's meaning), which leaves the item behind until `jezero embed`;
- a derived search index (tantivy) is rebuilt from the library when anything changed: deleting a
  document there only marks it, and the old text would stay in its files.

Safety: the pass holds the run lock (`jezero run`, `resummarize` and `embed` are refused
meanwhile) and writes in transactions of ITEMS_PER_TRANSACTION items, each row old or new, never
half: a kill leaves a consistent library and running the command again finishes the job (a text
already redacted is left as it is). The old texts must not stay in the file either: the writer
runs with `PRAGMA secure_delete` (SQLite overwrites deleted content with zeros), both FTS5 indexes
are merged into one segment ('optimize', which drops the deleted rows' terms from the index's
pages), and the WAL is checkpointed and truncated at the end.

Not redone: an item's uid keeps the hash of its first block's text as first read (a 48-bit hash of
a whole block, not the secret); a session read again whose first block held the secret gets a new
uid and its summary is copied from the twin with the same content hash (no summarizer call).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Callable

import apsw

from jezero import plugins
from jezero.config import Config
from jezero.ingest.segments import BLOCK_HEADER, anchor_hash, anchor_of
from jezero.store import Store, StoreError, backends, fts_row, now_text, parse_stored_time
from jezero.store.messages import prompt_hash

log = logging.getLogger("jezero.ingest")

# Items (with their messages) rewritten per transaction: small enough that a kill loses little
# work and the WAL stays small, large enough that commits are not the cost.
ITEMS_PER_TRANSACTION = 200
ITEM_VECTOR_TABLES = ("item_floats", "item_bits")
# In meta from a pass's first change until its indexes are merged and a derived index rebuilt: a
# pass killed in between leaves it, and the next one finishes that part even with nothing to change.
PENDING = "redact_pending"
# renamed_uid tries the original's prefix up to each of its first this many block headers as the
# first block (a block's text may hold a line that reads as a header); past it the uid is kept.
FIRST_BLOCK_CANDIDATES = 16


@dataclass
class SourceCounts:
    items: int = 0  # items with any changed text
    messages: int = 0  # messages whose text changed


@dataclass
class RedactReport:
    dry_run: bool
    redactors: list[str]
    items_checked: int = 0
    messages_checked: int = 0
    sources: dict[str, SourceCounts] = field(default_factory=dict)
    other_rows: int = 0  # warnings, connector states, summarizer calls changed
    vectors_dropped: int = 0  # items whose vectors were dropped (behind until `jezero embed`)
    index_rebuilt: str | None = None  # the derived index engine rebuilt, if any
    vacuumed: bool = False  # the file written anew (VACUUM)
    unfinished: bool = False  # (dry run) a pass killed before its index merge and VACUUM left them to do
    wal_truncated: bool | None = None  # None on a dry run

    @property
    def items_changed(self) -> int:
        return sum(c.items for c in self.sources.values())

    @property
    def messages_changed(self) -> int:
        return sum(c.messages for c in self.sources.values())

    def as_dict(self) -> dict:
        return {"dry_run": self.dry_run, "redactors": self.redactors, "items_checked": self.items_checked,
                "messages_checked": self.messages_checked, "items_changed": self.items_changed,
                "messages_changed": self.messages_changed,
                "sources": {s: c.__dict__ for s, c in sorted(self.sources.items())},
                "other_rows": self.other_rows, "vectors_dropped": self.vectors_dropped,
                "index_rebuilt": self.index_rebuilt, "vacuumed": self.vacuumed, "unfinished": self.unfinished, "wal_truncated": self.wal_truncated}


def chain(redactors) -> Callable[[str], str]:
    """The redactors one after another, as the pipeline applies them to each text."""
    funcs = [r.redact for r in redactors]

    def clean(text: str | None) -> str | None:
        if not text:
            return text
        for f in funcs:
            text = f(text)
        return text

    return clean


def redacted_item(row: tuple, clean) -> dict | None:
    """The new text columns of an item row (title, summary, questions, atoms, original as stored),
    or None when no redactor changes any of them."""
    title, summary, questions, atoms, original = row
    new_title, new_summary, new_original = clean(title), clean(summary), clean(original)
    q = json.loads(questions)
    new_q = [clean(x) if isinstance(x, str) else x for x in q]
    a = json.loads(atoms)
    new_a = [{**x, "text": clean(x["text"])} if isinstance(x, dict) and isinstance(x.get("text"), str) else x
             for x in a]
    if (new_title, new_summary, new_original, new_q, new_a) == (title, summary, original, q, a):
        return None
    return {"title": new_title, "summary": new_summary, "questions": new_q, "atoms": new_a,
            "original": new_original}


def redact_library(config: Config, *, dry_run: bool = False,
                   progress: Callable[[str], None] | None = None) -> RedactReport:
    """Apply the registered redactors to everything the library holds (see the module's doc)."""
    if backends.name(config) != backends.SQLITE:
        raise StoreError(f"`jezero redact` works on a SQLite library only for now; this config's library is on "
                         f"[storage] backend = {backends.name(config)!r}")
    found = plugins.redactors()
    report = RedactReport(dry_run, [r.name for r in found])
    if not found:
        return report
    clean = chain(found)
    progress = progress or (lambda message: None)
    if dry_run:
        from jezero.ingest.runner import library_reader

        with library_reader(config, ("items", "messages")) as conn:
            if conn is not None:
                conn.execute("BEGIN")  # one snapshot
                try:
                    _pass(conn, clean, report, progress, write=False)
                    report.unfinished = conn.execute("SELECT 1 FROM meta WHERE key=?", (PENDING,)).fetchone() is not None
                finally:
                    conn.execute("COMMIT")
        return report
    from jezero.ingest.runner import exclusive

    with exclusive(config, "jezero redact"):
        store = Store(config.library_path(), config.storage.tokenizer)
        try:
            db = store.db
            db.execute("PRAGMA secure_delete=ON")
            vectors = _vector_tables(db)
            _pass(db, clean, report, progress, write=True, vectors=vectors)
            # Also when this pass changed nothing but one killed after its first change did not
            # get this far: the indexes' pages still hold the old terms.
            if db.execute("SELECT 1 FROM meta WHERE key=?", (PENDING,)).fetchone():
                progress("merging the search indexes")
                with db:
                    for table in ("items_fts", "messages_fts"):
                        db.execute(f"INSERT INTO {table}({table}) VALUES('optimize')")
                report.index_rebuilt = _rebuild_engine(config, store)
                # secure_delete zeroes what this pass deletes; the file also holds what earlier
                # writes deleted (a rewritten row's old cell, left in its page's free space), so
                # the whole file is written anew
                progress("rewriting the library file")
                db.execute("VACUUM")
                report.vacuumed = True
                with db:
                    db.execute("DELETE FROM meta WHERE key=?", (PENDING,))
            report.wal_truncated = _truncate_wal(db)
        finally:
            store.close()
    return report


def _vector_tables(db) -> bool:
    """Whether the library holds semantic vectors; then sqlite-vec is loaded to delete them, and a
    jezero without it refuses before anything is written (the old vectors would stay)."""
    has = db.execute("SELECT count(*) FROM sqlite_master WHERE name IN (?, ?)", ITEM_VECTOR_TABLES).fetchone()[0]
    if not has:
        return False
    try:
        from jezero.store import vectors
    except ImportError as e:
        raise StoreError(f"the library holds semantic vectors, and deleting the changed ones needs sqlite-vec "
                         f"({e}): pip install 'jezero[semantic]'") from None
    vectors.load_extension(db)
    return True


def _pass(db, clean, report: RedactReport, progress, *, write: bool, vectors: bool = False) -> None:
    last = 0
    while True:
        rows = db.execute("SELECT id, source, uid, session_id, segment_index, title, summary, questions, atoms, "
                          "original FROM items "
                          "WHERE id > ? ORDER BY id LIMIT ?", (last, ITEMS_PER_TRANSACTION)).fetchall()
        if not rows:
            break
        last = rows[-1][0]
        if write:
            with db:
                _batch(db, rows, clean, report, write, vectors)
        else:
            _batch(db, rows, clean, report, write, vectors)
        progress(f"{report.items_checked} item(s) checked, {report.items_changed} changed")
    if write:
        with db:
            _others(db, clean, report, write)
    else:
        _others(db, clean, report, write)


def _batch(db, rows, clean, report: RedactReport, write: bool, vectors: bool) -> None:
    sources = {}
    changed_items: set[int] = set()
    renamed: dict[str, str] = {}
    for item_id, source, uid, session_id, segment_index, *texts in rows:
        report.items_checked += 1
        sources[item_id] = source
        new = redacted_item(tuple(texts), clean)
        if new is None:
            continue
        changed_items.add(item_id)
        if write:
            original = new["original"]
            new_uid = renamed_uid(db, item_id, uid, source, session_id, segment_index, texts[-1], original, clean)
            if new_uid != uid:
                renamed[uid] = new_uid
            db.execute("UPDATE items SET uid=?, title=?, summary=?, questions=?, atoms=?, original=?, content_hash=?, "
                       "updated_at=? WHERE id=?",
                       (new_uid, new["title"], new["summary"], json.dumps(new["questions"], ensure_ascii=False),
                        json.dumps(new["atoms"], ensure_ascii=False), original,
                        hashlib.sha256(original.encode()).hexdigest(), now_text(), item_id))
            project = db.execute("SELECT project FROM items WHERE id=?", (item_id,)).fetchone()[0]
            db.execute("DELETE FROM items_fts WHERE rowid=?", (item_id,))
            db.execute("INSERT INTO items_fts(rowid, title, summary, questions, atoms, project) VALUES(?, ?, ?, ?, ?, ?)",
                       (item_id, *fts_row(new["title"], new["summary"], new["questions"], new["atoms"], project)))
    if renamed:  # the call log names items by uid (no index on it: one scan for the batch)
        db.execute("CREATE TEMP TABLE IF NOT EXISTS redact_renamed(old TEXT PRIMARY KEY, new TEXT NOT NULL)")
        db.execute("DELETE FROM temp.redact_renamed")
        db.executemany("INSERT INTO temp.redact_renamed(old, new) VALUES(?, ?)", renamed.items())
        db.execute("UPDATE summarizer_calls SET uid = (SELECT new FROM temp.redact_renamed WHERE old = uid) "
                   "WHERE uid IN (SELECT old FROM temp.redact_renamed)")
    first, last = rows[0][0], rows[-1][0]
    messages = db.execute("SELECT m.id, m.item_id, m.role, t.text FROM messages AS m JOIN message_texts AS t "
                          "ON t.id = m.id WHERE m.item_id BETWEEN ? AND ? ORDER BY m.id", (first, last)).fetchall()
    touched: set[int] = set()
    for message_id, item_id, role, text in messages:
        report.messages_checked += 1
        new_text = clean(text)
        if new_text == text:
            continue
        report.sources.setdefault(sources.get(item_id, "?"), SourceCounts()).messages += 1
        touched.add(item_id)
        if write:
            # An external-content index forgets a row only when told its old text.
            db.execute("INSERT INTO messages_fts(messages_fts, rowid, text) VALUES('delete', ?, ?)", (message_id, text))
            db.execute("UPDATE message_texts SET text=? WHERE id=?", (new_text, message_id))
            db.execute("INSERT INTO messages_fts(rowid, text) VALUES(?, ?)", (message_id, new_text))
            db.execute("UPDATE messages SET prompt_hash=? WHERE id=?", (prompt_hash(role, new_text), message_id))
    if write and (changed_items or touched):
        _mark_pending(db)
    for item_id in changed_items | touched:
        report.sources.setdefault(sources.get(item_id, "?"), SourceCounts()).items += 1
        if not write:
            continue
        if item_id not in changed_items:
            # a message changed without its item's texts (cut differently): the item's change
            # number moves all the same, so a derived index and the semantic lane see it
            db.execute("UPDATE items SET updated_at=? WHERE id=?", (now_text(), item_id))
        if vectors:
            from jezero.store import vectors as vector_rows

            if db.execute("SELECT 1 FROM item_vector_state WHERE item_id=? UNION SELECT 1 FROM message_windows "
                          "WHERE item_id=?", (item_id, item_id)).fetchone():
                report.vectors_dropped += 1
            vector_rows.remove(db, item_id)


def renamed_uid(db, item_id: int, uid: str, source: str, session_id: str, segment_index: int, old: str, new: str,
                clean) -> str:
    """The uid the pipeline gives this segment once its text is redacted anew, or `uid` as it is.

    A uid is the hash of the segment's first block (its time, then its rendering: see
    jezero.ingest.segments), so a secret in that block is in the hash, and a session read again
    would get a new uid for the segment (its old item deleted, a new one written, the summary
    copied from the twin). The old anchor is rebuilt from the stored original and the first
    message's time and checked against the old uid: only a verified one is replaced, and only by
    a uid no other item has."""
    prefix = f"{source}:{session_id}:"
    if not uid.startswith(prefix):
        return uid
    wanted = uid[len(prefix):]
    row = db.execute("SELECT at FROM messages WHERE item_id=? ORDER BY seq LIMIT 1", (item_id,)).fetchone()
    times = [""]
    if row is not None:
        with suppress(ValueError):
            times.insert(0, parse_stored_time(row[0]).isoformat())
    for first in itertools.islice(_first_blocks(old), FIRST_BLOCK_CANDIDATES):
        for at in times:
            for seen in range(segment_index + 1):
                if anchor_hash(anchor_of(at, first, seen)) != wanted:
                    continue
                new_first = clean(first)
                if not new.startswith(new_first):
                    return uid
                candidate = prefix + anchor_hash(anchor_of(at, new_first, seen))
                if candidate != uid and db.execute("SELECT 1 FROM items WHERE uid=?", (candidate,)).fetchone():
                    return uid
                return candidate
    return uid


def _first_blocks(original: str):
    """The candidates for the first rendered block of a stored original: up to each later line
    that reads as a block header (a block's own text may hold such a line)."""
    start = 0
    while True:
        end = original.find("\n[", start)
        if end == -1:
            yield original
            return
        line_end = original.find("\n", end + 1)
        line = original[end + 1:line_end if line_end != -1 else len(original)]
        if BLOCK_HEADER.match(line):
            yield original[:end + 1]
        start = end + 1


def _mark_pending(db) -> None:
    db.execute("INSERT INTO meta(key, value) VALUES(?, '1') ON CONFLICT(key) DO NOTHING", (PENDING,))


def _others(db, clean, report: RedactReport, write: bool) -> None:
    """Warnings, connector states and summarizer calls' errors: texts a run wrote from what it
    read (a bad line quoted, a provider's error echoing the request)."""
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if "warnings" in tables:
        for wid, connector, message, first_seen, last_seen, runs in db.execute(
                "SELECT id, connector, message, first_seen, last_seen, runs FROM warnings").fetchall():
            new = clean(message)
            if new == message:
                continue
            report.other_rows += 1
            if not write:
                continue
            _mark_pending(db)  # earlier copies of the row may be in its page's free space: VACUUM
            twin = db.execute("SELECT id FROM warnings WHERE connector=? AND message=?", (connector, new)).fetchone()
            if twin:  # the redacted text is already kept: one warning, seen in both's runs
                db.execute("UPDATE warnings SET first_seen=min(first_seen, ?), last_seen=max(last_seen, ?), "
                           "runs=runs+? WHERE id=?", (first_seen, last_seen, runs, twin[0]))
                db.execute("DELETE FROM warnings WHERE id=?", (wid,))
            else:
                db.execute("UPDATE warnings SET message=? WHERE id=?", (new, wid))
    for name, error, warnings in db.execute("SELECT name, last_error, warnings FROM connector_state").fetchall():
        new_error = clean(error)
        listed = json.loads(warnings or "[]")
        new_listed = [clean(w) if isinstance(w, str) else w for w in listed]
        if (new_error, new_listed) == (error, listed):
            continue
        report.other_rows += 1
        if write:
            _mark_pending(db)
            db.execute("UPDATE connector_state SET last_error=?, warnings=? WHERE name=?",
                       (new_error, json.dumps(new_listed), name))
    if "summarizer_calls" in tables:
        for cid, error in db.execute("SELECT id, error FROM summarizer_calls WHERE error IS NOT NULL").fetchall():
            new = clean(error)
            if new == error:
                continue
            report.other_rows += 1
            if write:
                _mark_pending(db)
                db.execute("UPDATE summarizer_calls SET error=? WHERE id=?", (new, cid))


def _rebuild_engine(config: Config, store: Store) -> str | None:
    """Rebuild a derived search index (tantivy) from the redacted library: a catch-up would only
    mark the old documents deleted, and their text would stay in the index's files."""
    from jezero.store import engines

    name = config.search.engine
    if not name or name == engines.BUILTIN:
        return None
    found = engines.engine_for(name, store.path)
    if found is None:
        log.warning("search engine %s is not installed: its index (if any) still holds the old text; "
                    "`jezero reindex` rebuilds it", name)
        return None
    found.catch_up(rebuild=True)
    return name


def _truncate_wal(db) -> bool:
    """Checkpoint the WAL into the file and empty it: its frames hold the pages as they were
    written, old texts included. False when a reader kept it from being emptied (the server in a
    long read): the next writer's checkpoint overwrites those frames."""
    try:
        busy, _, _ = db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    except apsw.BusyError:
        return False
    return busy == 0
