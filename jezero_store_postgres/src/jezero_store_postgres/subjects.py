"""What current-first and later's distinctive subject read of the items index, on PostgreSQL.

On SQLite, jezero/query/current.py scores a search's hits for an item's subject from FTS5's own
tables: each hit's five indexed columns (items_fts), its size in tokens (items_fts_docsize), the
index's rows and average size, and the IDFs of the subject's words from a sample of the library
(stats.sample_share). Those numbers describe the indexed text, not FTS5: here they are made
from the same text, the `items` rows themselves.

- the columns are jezero.store.fts_row's, from the item's fields, exactly what FTS5 indexes;
- a row's size is FTS5's trigram tokenizer's count: a column of L characters holds L - 2
  trigrams (the tokenizer reads every run of three characters, spaces included);
- the index's rows are the items; its average size is that of the sample (stats._read_sample's
  id runs), which for a library of up to SAMPLE_SIZE items is every item, so the average is
  FTS5's own there, and an estimate from 256 items above it (the rule only compares shares of
  one item's relevance, which the average barely moves).
"""

from __future__ import annotations

import json

from jezero.store import fts_row


def _loads(text) -> list:
    try:
        value = json.loads(text) if text else []
    except ValueError:
        return []
    return value if isinstance(value, list) else []


def columns_of(row) -> list[str]:
    """The five indexed columns of an items row (title, summary, questions, atoms, project)."""
    title, summary, questions, atoms, project = row
    questions = [q for q in _loads(questions) if isinstance(q, str)]
    atoms = [a for a in _loads(atoms) if isinstance(a, dict) and isinstance(a.get("text"), str)]
    return list(fts_row(title or "", summary or "", questions, atoms, project))


def trigram_size(columns: list[str]) -> int:
    """The row's tokens as FTS5's trigram tokenizer counts them (xColumnSize(-1))."""
    return sum(max(len(c) - 2, 0) for c in columns)


class SubjectTexts:
    """The items' indexed text for the query layer's current.py and stats.py, on the postgres
    reader's Ranker (search.py): `self.conn` is its connection."""

    conn = None

    def item_count(self) -> int:
        return self.conn.execute("SELECT count(*) FROM items").fetchone()[0]

    def item_state(self) -> tuple:
        """(items, highest id, latest write): what changes whenever the items' indexed text can
        (every write sets its item's updated_at; a delete lowers the count)."""
        return tuple(self.conn.execute("SELECT count(*), coalesce(max(id), 0), max(updated_at) FROM items").fetchone())

    def indexed_columns(self, ids=None, ranges=None) -> dict[int, tuple[list[str], int]]:
        """{item id: (its five indexed columns, its size in tokens)} of the items `ids`, or of
        those whose ids lie in the (low, high) `ranges` (inclusive)."""
        if ids is not None:
            ids = list(ids)
            if not ids:
                return {}
            where, args = "id = ANY(?)", [ids]
        else:
            where = " OR ".join("id BETWEEN ? AND ?" for _ in ranges)
            args = [x for r in ranges for x in r]
        out = {}
        for r in self.conn.execute(f"SELECT id, title, summary, questions, atoms, project FROM items WHERE {where} "
                                   "ORDER BY id", args):
            cols = columns_of(r[1:])
            out[r[0]] = (cols, trigram_size(cols))
        return out
