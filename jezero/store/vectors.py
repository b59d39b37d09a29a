"""The semantic lane's vectors, in the library file: one vector per item (its title, summary,
questions and atoms) and one per message window (consecutive messages of the item's transcript,
up to WINDOW_CHARS). Each vector is kept twice: whole (float32, in a plain table, read by id) and
as one bit per dimension (in a sqlite-vec `vec0` table loaded into apsw's SQLite, scanned).

- A query scans the bits (Hamming distance, 32 bytes a vector at 256 dimensions, with the
  filters inside the scan), keeps the nearest candidates, and ranks those by their exact
  distance from the float vectors (query/vectors.py). The float scan it replaces read 1 KB a
  vector: 208 ms at 100k items against 37 ms (benchmarks/semantic/README.md).
- A bit is the sign of a dimension after the library's centre is taken off: text vectors share
  a large common direction (the mean of 900 real windows has norm 0.62), and without it some
  dimensions are the same bit for every vector. The centre (meta) is the mean of the vectors
  written so far, taken again while the library is small (at CENTRE_AT vectors) and every bit
  rewritten with it, in the writer's transaction; after the last step it stays.

Imported only when the lane is on (`[semantic] enabled = true`): it needs numpy and sqlite-vec
(`pip install 'jezero[semantic]'`). With the lane off nothing here runs, and the plain tables of
migration _v8 stay as they are.

- Which model made the vectors is in meta (embedder name, model id, dimension). Vectors of two
  model ids never mix: a writer whose embedder has another model id writes none (the items
  still go in, and are behind until `jezero embed` embeds the library again on purpose).
- An item's vectors are written in the item's own transaction (Store.write), and
  `item_vector_state` records which change of the item (item_changes.seq) they reflect. An item
  written, retagged or deleted while the lane was off is "behind": `jezero embed` finds it by
  that number, so it never embeds an item twice and resumes where a killed run stopped.
- Filters are applied inside the nearest-neighbour scan, so the cut to k happens among the rows
  the caller may read. The source is the tables' partition key: a scan for one source reads only
  that source's vectors (a key for three sources is three scans, merged), where a metadata IN
  filter cost twice the unfiltered scan at 100k items. Project and time are metadata columns. All
  three are integers (a name's name_key, the item's time in seconds): vec0 keeps a text longer
  than 12 bytes outside the row and reads it back for every comparison, which made a `since`
  filter cost three times the scan (benchmarks/semantic/README.md). A name_key shared by two
  names could only let a row through the scan: the query checks every hit against the item.
- Distances are L2 between unit vectors: the same order as cosine, at less cost per row;
  similarity = 1 - distance^2 / 2.
"""

from __future__ import annotations

import hashlib
import json
import weakref
from dataclasses import dataclass

import apsw
import numpy as np
import sqlite_vec

from jezero.store.messages import MessageRecord, from_original, kept
from jezero.store import parse_stored_time

# Whole vectors (plain tables, read by id) and their bits (vec0, scanned with the filters).
ITEM_VECTORS = "item_floats"
WINDOW_VECTORS = "window_floats"
ITEM_BITS = "item_bits"
WINDOW_BITS = "window_bits"
# The first layout (float vec0 tables, scanned whole); dropped when the library is embedded again.
OLD_TABLES = ("item_vectors", "window_vectors")
META_EMBEDDER, META_MODEL, META_DIMENSION = "semantic_embedder", "semantic_model_id", "semantic_dimension"
META_LAYOUT, META_CENTRE, META_CENTRED_AT = "semantic_layout", "semantic_centre", "semantic_centred_at"
# The windows' length the library's message windows were cut at (WINDOW_CHARS when embedded); a
# library that records none was cut at OLD_WINDOW_CHARS. Windows of another length are not the
# same vectors: the lane refuses them as it does another model's, until `jezero embed`.
META_WINDOWS = "semantic_window_chars"
OLD_WINDOW_CHARS = 1200
# 2: float vectors in plain tables, bits in vec0. A library in another layout is embedded again.
LAYOUT = 2
# The centre is taken again when the vectors reach each of these counts (items and windows
# together), then kept: by 65,536 vectors the mean moves little, and each step rewrites every
# bit once (the steps add up to 87k rewrites in a library's life).
CENTRE_AT = (64, 256, 1024, 4096, 16384, 65536)

# A window holds consecutive messages up to this many characters: about a screen of a
# conversation, one exchange or two. Short enough that one subject dominates it (a window about
# five things is near none of them), long enough that a session of prose gives a few dozen
# windows, not hundreds (the file grows by a vector per window: benchmarks/semantic/README.md).
WINDOW_CHARS = 1200
# A tool call or its output counts only by its head (the command, the first line of an error):
# the rest is logs and listings, which say little about what the session was for.
TOOL_WINDOW_CHARS = 200
# A long message (a pasted report) is cut into windows of its own, at most this many.
MAX_PIECES = 4


class ModelMismatch(Exception):
    """The library's vectors come from another model than the configured embedder's."""


@dataclass(frozen=True)
class Model:
    embedder: str
    model_id: str
    dimension: int
    layout: int = LAYOUT
    windows: int = OLD_WINDOW_CHARS  # WINDOW_CHARS when the library's windows were cut


_loaded: "weakref.WeakSet[apsw.Connection]" = weakref.WeakSet()  # connections with sqlite-vec in them


def load_extension(conn: apsw.Connection) -> None:
    """Load sqlite-vec into this connection, once (read-only connections too)."""
    if conn in _loaded:
        return
    conn.enable_load_extension(True)
    try:
        conn.load_extension(sqlite_vec.loadable_path())
    finally:
        conn.enable_load_extension(False)
    _loaded.add(conn)


def recorded(conn: apsw.Connection) -> Model | None:
    """The model the library's vectors come from, or None when it has none yet."""
    rows = dict(conn.execute("SELECT key, value FROM meta WHERE key IN (?, ?, ?, ?, ?)",
                             (META_EMBEDDER, META_MODEL, META_DIMENSION, META_LAYOUT, META_WINDOWS)).fetchall())
    if META_MODEL not in rows:
        return None
    return Model(rows.get(META_EMBEDDER, ""), rows[META_MODEL], int(rows.get(META_DIMENSION, 0)),
                 int(rows.get(META_LAYOUT, 1)), int(rows.get(META_WINDOWS, OLD_WINDOW_CHARS)))


def model_of(name: str, embedder, window_chars: int | None = None) -> Model:
    """The model a library embedded with this embedder and windows (None: WINDOW_CHARS) records."""
    return Model(name, str(embedder.model_id), int(embedder.dimension), LAYOUT, window_chars or WINDOW_CHARS)


def mismatch(stored: Model, wanted: Model) -> str:
    if ((stored.model_id, stored.dimension, stored.layout) == (wanted.model_id, wanted.dimension, wanted.layout)
            and stored.windows != wanted.windows):
        return (f"the library's message windows were cut at up to {stored.windows} characters, now "
                f"{wanted.windows}; run `jezero embed` to embed the library again")
    if (stored.model_id, stored.dimension) == (wanted.model_id, wanted.dimension):
        return (f"the library's vectors are stored in an older layout ({stored.layout}, now {wanted.layout}); "
                "run `jezero embed` to embed the library again")
    return (f"the library's vectors were made by {stored.embedder} ({stored.model_id}, {stored.dimension} dims), "
            f"the config's embedder is {wanted.embedder} ({wanted.model_id}, {wanted.dimension} dims); "
            "they do not mix: run `jezero embed` to embed the library again with the configured one")


def has_tables(conn: apsw.Connection) -> bool:
    return conn.execute("SELECT count(*) FROM sqlite_master WHERE name IN (?, ?)",
                        (ITEM_VECTORS, ITEM_BITS)).fetchone()[0] == 2


def adopt(db: apsw.Connection, model: Model) -> None:
    """Make the vector tables for `model` and record it, dropping another model's vectors (the
    caller decides when that is wanted: only `jezero embed` replaces a model). One transaction."""
    with db:
        stored = recorded(db)
        if stored == model and has_tables(db):
            return
        for table in (ITEM_VECTORS, WINDOW_VECTORS, ITEM_BITS, WINDOW_BITS, *OLD_TABLES):
            db.execute(f"DROP TABLE IF EXISTS {table}")
        db.execute("DELETE FROM item_vector_state")
        db.execute("DELETE FROM message_windows")
        dims = int(model.dimension)
        db.execute(f"CREATE TABLE {ITEM_VECTORS}(item_id INTEGER PRIMARY KEY, embedding BLOB NOT NULL)")
        db.execute(f"CREATE TABLE {WINDOW_VECTORS}(window_id INTEGER PRIMARY KEY, item_id INTEGER NOT NULL, "
                   "embedding BLOB NOT NULL)")
        # Bits come in whole bytes: a dimension that is not a multiple of 8 is padded with zeros,
        # the same in every vector and query, so the Hamming distances are the dimensions'.
        columns = f"embedding bit[{-(-dims // 8) * 8}], source_key INTEGER PARTITION KEY, project_key INTEGER, at INTEGER"
        db.execute(f"CREATE VIRTUAL TABLE {ITEM_BITS} USING vec0(item_id INTEGER PRIMARY KEY, {columns})")
        db.execute(f"CREATE VIRTUAL TABLE {WINDOW_BITS} USING vec0(window_id INTEGER PRIMARY KEY, {columns}, "
                   "+item_id INTEGER)")
        db.execute("DELETE FROM meta WHERE key IN (?, ?)", (META_CENTRE, META_CENTRED_AT))
        for key, value in ((META_EMBEDDER, model.embedder), (META_MODEL, model.model_id),
                           (META_DIMENSION, str(dims)), (META_LAYOUT, str(model.layout)),
                           (META_WINDOWS, str(model.windows))):
            db.execute("INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                       (key, value))


def build_embedder(semantic):
    """The configured embedder (`[semantic]`), ready to embed. Raises LookupError when no
    installed plugin gives it, and the plugin's EmbedderNotReady when its model is not here yet."""
    from jezero import plugins

    types = plugins.embedder_types()
    kind = types.get(semantic.embedder)
    if kind is None:
        known = ", ".join(sorted(types)) or "none"
        raise LookupError(f"embedder {semantic.embedder!r} is not installed (installed: {known}); "
                          "pip install jezero-embedders")
    return kind.build(dict(semantic.options))


def name_key(name: str | None) -> int:
    """A source's or project's name as a vec0 filter value: 63 bits of its BLAKE2b; 0 for none."""
    if not name:
        return 0
    return int.from_bytes(hashlib.blake2b(name.encode("utf-8"), digest_size=8).digest(), "big") >> 1 or 1


def seconds(stored_time: str) -> int:
    """A stored time (items.occurred_at) as whole seconds since the epoch, rounded down."""
    return int(parse_stored_time(stored_time).timestamp())


# -- what is embedded ----------------------------------------------------------------------------


def item_text(title: str, summary: str, questions: list[str], atoms: list[dict]) -> str:
    return "\n".join([title, summary, *questions, *(a.get("text", "") for a in atoms)])


def windows(messages: list[tuple[int, str, str]], chars: int | None = None) -> list[tuple[int, int, str]]:
    """(first_seq, last_seq, text) windows over stored messages given as (seq, role, text), each up
    to `chars` characters (None: WINDOW_CHARS)."""
    chars = chars or WINDOW_CHARS
    out: list[tuple[int, int, str]] = []
    first = last = None
    parts: list[str] = []
    size = 0

    def flush():
        nonlocal first, parts, size
        if parts:
            out.append((first, last, "\n".join(parts)))
        first, parts, size = None, [], 0

    for seq, role, text in messages:
        text = " ".join(text.split())
        if role == "tool":
            text = text[:TOOL_WINDOW_CHARS]
        if not text:
            continue
        if len(text) > chars:
            flush()
            for start in range(0, min(len(text), chars * MAX_PIECES), chars):
                out.append((seq, seq, text[start:start + chars]))
            continue
        if size + len(text) > chars:
            flush()
        if first is None:
            first = seq
        last = seq
        parts.append(text)
        size += len(text) + 1
    flush()
    return out


def record_windows(messages: list[MessageRecord] | None, original: str,
                   chars: int | None = None) -> list[tuple[int, int, str]]:
    """The windows of an item about to be written (its messages as the store will keep them)."""
    if messages is None:
        messages = from_original(original)
    return windows([(seq, role, text) for seq, role, _, text in kept(messages)], chars)


def stored_windows(db: apsw.Connection, item_id: int, chars: int | None = None) -> list[tuple[int, int, str]]:
    """The windows of a stored item, from its stored messages."""
    return windows(db.execute("SELECT m.seq, m.role, t.text FROM messages AS m JOIN message_texts AS t "
                              "ON t.id = m.id WHERE m.item_id = ? ORDER BY m.seq", (item_id,)).fetchall(), chars)


def unit_rows(embedder, texts: list[str], *, query: bool = False) -> np.ndarray:
    """The embedder's rows as float32 unit vectors (a zero row stays zero), checked for shape."""
    if not texts:
        return np.zeros((0, int(embedder.dimension)), dtype=np.float32)
    rows = np.asarray(embedder.embed(list(texts), query=query), dtype=np.float32)
    if rows.shape != (len(texts), int(embedder.dimension)):
        raise ValueError(f"embedder {embedder.model_id!r} gave shape {rows.shape}, "
                         f"expected ({len(texts)}, {embedder.dimension})")
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return np.divide(rows, norms, out=np.zeros_like(rows), where=norms > 0)


# -- writing, inside the item's transaction --------------------------------------------------------


@dataclass
class Prepared:
    """An item's vectors, embedded before its transaction opens (embedding holds no lock)."""

    item: np.ndarray
    windows: list[tuple[int, int, np.ndarray]]  # (first_seq, last_seq, vector)


class VectorWriter:
    """Writes vectors with the items, for one embedder whose model the library has adopted."""

    def __init__(self, db: apsw.Connection, name: str, embedder, *, replace_model: bool = False,
                 window_chars: int | None = None):
        load_extension(db)
        self.embedder = embedder
        self.model = model_of(name, embedder, window_chars)
        stored = recorded(db)
        if stored is not None and stored != self.model and not replace_model:
            raise ModelMismatch(mismatch(stored, self.model))
        adopt(db, self.model)

    def prepare(self, entries: list[tuple[str, list[tuple[int, int, str]]]]) -> list[Prepared]:
        """Embed (item text, windows) pairs in one call to the embedder."""
        texts = []
        for text, wins in entries:
            texts.append(text)
            texts += [w[2] for w in wins]
        rows = unit_rows(self.embedder, texts)
        out, at = [], 0
        for _, wins in entries:
            item = rows[at]
            at += 1
            out.append(Prepared(item, [(a, b, rows[at + i]) for i, (a, b, _) in enumerate(wins)]))
            at += len(wins)
        return out

    def prepare_records(self, items) -> list[Prepared]:
        """For ItemRecords about to be written (Store.write)."""
        return self.prepare([(item_text(it.title, it.summary, it.questions, it.atoms),
                              record_windows(it.messages, it.original, self.model.windows)) for it in items])

    def prepare_stored(self, db: apsw.Connection, item_ids: list[int]) -> list[Prepared]:
        """For items already stored (`jezero embed`)."""
        entries = []
        for item_id in item_ids:
            title, summary, questions, atoms = db.execute(
                "SELECT title, summary, questions, atoms FROM items WHERE id = ?", (item_id,)).fetchone()
            entries.append((item_text(title, summary, json.loads(questions), json.loads(atoms)),
                            stored_windows(db, item_id, self.model.windows)))
        return self.prepare(entries)

    def put(self, db: apsw.Connection, item_id: int, prepared: Prepared) -> None:
        """Replace the item's vectors; call inside the transaction that wrote the item."""
        remove(db, item_id)
        source, project, occurred_at = db.execute(
            "SELECT source, project, occurred_at FROM items WHERE id = ?", (item_id,)).fetchone()
        meta = (name_key(source), name_key(project), seconds(occurred_at))
        centre = read_centre(db, self.model.dimension)
        item = np.asarray(prepared.item, dtype=np.float32)
        db.execute(f"INSERT INTO {ITEM_VECTORS}(item_id, embedding) VALUES(?, ?)", (item_id, item.tobytes()))
        db.execute(f"INSERT INTO {ITEM_BITS}(item_id, embedding, source_key, project_key, at) "
                   "VALUES(?, vec_bit(?), ?, ?, ?)", (item_id, bits(item, centre), *meta))
        for first, last, vector in prepared.windows:
            vector = np.asarray(vector, dtype=np.float32)
            db.execute("INSERT INTO message_windows(item_id, first_seq, last_seq) VALUES(?, ?, ?)",
                       (item_id, first, last))
            window_id = db.last_insert_rowid()
            db.execute(f"INSERT INTO {WINDOW_VECTORS}(window_id, item_id, embedding) VALUES(?, ?, ?)",
                       (window_id, item_id, vector.tobytes()))
            db.execute(f"INSERT INTO {WINDOW_BITS}(window_id, embedding, source_key, project_key, at, item_id) "
                       "VALUES(?, vec_bit(?), ?, ?, ?, ?)", (window_id, bits(vector, centre), *meta, item_id))
        mark(db, item_id)
        recentre_if_due(db, self.model.dimension)

    def is_fresh(self, db: apsw.Connection, item_id: int) -> bool:
        return is_fresh(db, item_id)

    def drop(self, db: apsw.Connection, item_id: int) -> None:
        """The item is being deleted: so are its vectors, in the same transaction."""
        remove(db, item_id)

    def retag(self, db: apsw.Connection, item_id: int, project: str | None, fresh: bool) -> None:
        """The item's project changed: its vectors' filter column follows, nothing is embedded.
        `fresh`: whether its vectors reflected the item before this change (is_fresh); if not,
        it stays behind."""
        key = name_key(project)
        db.execute(f"UPDATE {ITEM_BITS} SET project_key = ? WHERE item_id = ?", (key, item_id))
        for (window_id,) in db.execute("SELECT id FROM message_windows WHERE item_id = ?", (item_id,)).fetchall():
            db.execute(f"UPDATE {WINDOW_BITS} SET project_key = ? WHERE window_id = ?", (key, window_id))
        if fresh:
            mark(db, item_id)


def is_fresh(db: apsw.Connection, item_id: int) -> bool:
    """Whether the item's vectors reflect its latest change."""
    row = db.execute("SELECT seq FROM item_vector_state WHERE item_id = ?", (item_id,)).fetchone()
    return row is not None and row[0] == _change(db, item_id)


def mark(db: apsw.Connection, item_id: int) -> None:
    """Record that the item's vectors reflect its latest change."""
    db.execute("INSERT INTO item_vector_state(item_id, seq) VALUES(?, ?) "
               "ON CONFLICT(item_id) DO UPDATE SET seq = excluded.seq", (item_id, _change(db, item_id)))


def _change(db: apsw.Connection, item_id: int) -> int:
    """The item's latest change number; 0 for an item not changed since migration _v7 began the log."""
    row = db.execute("SELECT seq FROM item_changes WHERE item_id = ?", (item_id,)).fetchone()
    return row[0] if row else 0


def remove(db: apsw.Connection, item_id: int) -> None:
    """Delete the item's vectors (the extension must be loaded)."""
    db.execute(f"DELETE FROM {ITEM_VECTORS} WHERE item_id = ?", (item_id,))
    db.execute(f"DELETE FROM {ITEM_BITS} WHERE item_id = ?", (item_id,))
    for (window_id,) in db.execute("SELECT id FROM message_windows WHERE item_id = ?", (item_id,)).fetchall():
        db.execute(f"DELETE FROM {WINDOW_VECTORS} WHERE window_id = ?", (window_id,))
        db.execute(f"DELETE FROM {WINDOW_BITS} WHERE window_id = ?", (window_id,))
    db.execute("DELETE FROM message_windows WHERE item_id = ?", (item_id,))
    db.execute("DELETE FROM item_vector_state WHERE item_id = ?", (item_id,))


# -- the bits and their centre ---------------------------------------------------------------------


def bits(vector: np.ndarray, centre: np.ndarray | None) -> bytes:
    """The vector as one bit per dimension: set where it is above the centre. Stored and query
    bits are made here alike, so only their Hamming distance matters, not the bit order."""
    above = vector > centre if centre is not None else vector > 0
    return np.packbits(above, bitorder="little").tobytes()


def read_centre(conn: apsw.Connection, dimension: int) -> np.ndarray | None:
    """The library's centre (meta), or None before it has one (the bits are then plain signs)."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (META_CENTRE,)).fetchone()
    if row is None:
        return None
    centre = np.frombuffer(bytes.fromhex(row[0]), dtype=np.float32)
    return centre if centre.shape == (dimension,) else None


def vector_count(db: apsw.Connection) -> int:
    """About how many vectors the library holds (the highest ids: cheap, never fewer)."""
    items = db.execute(f"SELECT coalesce(max(item_id), 0) FROM {ITEM_VECTORS}").fetchone()[0]
    windows = db.execute(f"SELECT coalesce(max(window_id), 0) FROM {WINDOW_VECTORS}").fetchone()[0]
    return int(items) + int(windows)


def recentre_if_due(db: apsw.Connection, dimension: int) -> None:
    """Take the centre again when the vectors have passed the next step of CENTRE_AT."""
    row = db.execute("SELECT value FROM meta WHERE key = ?", (META_CENTRED_AT,)).fetchone()
    done = int(row[0]) if row else 0
    due = [n for n in CENTRE_AT if n > done]
    if due and due[0] <= (count := vector_count(db)):
        recentre(db, dimension, max(n for n in CENTRE_AT if n <= count))


def recentre(db: apsw.Connection, dimension: int, step: int) -> None:
    """The centre as the mean of every stored vector, and every bit rewritten with it (in the
    caller's transaction)."""
    total = np.zeros(dimension, dtype=np.float64)
    count = 0
    for table in (ITEM_VECTORS, WINDOW_VECTORS):
        for (blob,) in db.execute(f"SELECT embedding FROM {table}"):
            total += np.frombuffer(blob, dtype=np.float32)
            count += 1
    if not count:
        return
    centre = (total / count).astype(np.float32)
    # vec0 takes no bit vector in an UPDATE (it reads the new value as float32): each row goes
    # out and in again, with its filter columns from its item, as put() writes them.
    for table, bit_table, key, extra in ((ITEM_VECTORS, ITEM_BITS, "item_id", ""),
                                         (WINDOW_VECTORS, WINDOW_BITS, "window_id", ", item_id")):
        rows = db.execute(f"SELECT f.{key}, f.embedding, i.source, i.project, i.occurred_at, i.id FROM {table} AS f "
                          "JOIN items AS i ON i.id = f.item_id").fetchall()
        db.execute(f"DELETE FROM {bit_table}")
        for row_id, blob, source, project, occurred_at, item_id in rows:
            values = (row_id, bits(np.frombuffer(blob, dtype=np.float32), centre), name_key(source),
                      name_key(project), seconds(occurred_at)) + ((item_id,) if extra else ())
            db.execute(f"INSERT INTO {bit_table}({key}, embedding, source_key, project_key, at{extra}) "
                       f"VALUES(?, vec_bit(?), ?, ?, ?{', ?' if extra else ''})", values)
    for key, value in ((META_CENTRE, centre.tobytes().hex()), (META_CENTRED_AT, str(step))):
        db.execute("INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                   (key, value))


# -- what is behind --------------------------------------------------------------------------------

BEHIND_SQL = ("SELECT i.id FROM items AS i LEFT JOIN item_changes AS c ON c.item_id = i.id "
              "LEFT JOIN item_vector_state AS s ON s.item_id = i.id WHERE s.seq IS NULL OR s.seq != coalesce(c.seq, 0)")
GONE_SQL = ("SELECT s.item_id FROM item_vector_state AS s LEFT JOIN items AS i ON i.id = s.item_id "
            "WHERE i.id IS NULL")


def behind(conn: apsw.Connection, limit: int | None = None) -> list[int]:
    """Items whose vectors are missing or older than the item, lowest id first."""
    sql = BEHIND_SQL + " ORDER BY i.id" + (" LIMIT ?" if limit else "")
    return [r[0] for r in conn.execute(sql, (limit,) if limit else ())]


def behind_count(conn: apsw.Connection) -> int:
    return conn.execute(f"SELECT count(*) FROM ({BEHIND_SQL})").fetchone()[0]


def gone(conn: apsw.Connection) -> list[int]:
    """Items deleted while the lane was off whose vectors are still there."""
    return [r[0] for r in conn.execute(GONE_SQL)]


def counts(conn: apsw.Connection) -> dict[str, int]:
    """How many vectors each table holds (the extension must be loaded)."""
    if not has_tables(conn):
        return {"items": 0, "windows": 0}
    return {"items": conn.execute(f"SELECT count(*) FROM {ITEM_VECTORS}").fetchone()[0],
            "windows": conn.execute(f"SELECT count(*) FROM {WINDOW_VECTORS}").fetchone()[0]}
