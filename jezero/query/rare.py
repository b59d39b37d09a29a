"""Terms with long trigram lists and few rows, found through their rarest trigrams and scored in
Python exactly as FTS5 would.

A trigram index answers a term such as `src/order_cache.py` as a phrase of 16 trigrams, walking
the lists of all of them in step. In a library of summaries most of those lists are long (`src`,
`er_`, `.py` are in a large share of the items), so finding the 50 items that hold the term costs
as much as reading the commonest of its trigrams: 10-50 ms at 100k items, for an answer of a few
dozen rows. Yet most such terms also contain a few trigrams that are rare (`r_c`, `e.p`).

So, for a term the sample shows in few items but whose trigrams fill long lists (worth_it):

1. probes: the PROBES trigrams of the term that occur least often in the sample;
2. `"p1" AND "p2" AND "p3"` lists every row that holds all three, which includes every row that
   holds the term. It reads only the probes' (short) lists. Past CAP rows the term is not rare
   enough to be worth it, and FTS5 answers it the usual way;
3. each candidate's indexed text is folded the way the tokenizer folds it (Folder) and the term
   counted in each column. A phrase of trigrams matches wherever the folded term occurs, overlaps
   included: these are the phrase's hits as FTS5 counts them;
4. the rows with a hit are the term's rows, so their number is the term's n for bm25, exactly.

`score` then follows fts5_aux.c (see bm25.py) with those hits, the row's size from FTS5's own
docsize table and the index's averages: the rows, the order and the scores are the ones a MATCH
ordered by bm25() would give. Nothing here writes.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass

import apsw

from jezero.query import bm25, stats
from jezero.query.terms import Term

# Trigrams to intersect: with three, a term's candidates are rarely more than a few times its rows.
PROBES = 3
# Most candidates one term may bring: each costs 2-10 us of Python, against 1-2 us for a row FTS5
# scores. A term the sample shows in more rows than this is left to FTS5.
CAP = 2000
# This way pays only when FTS5's walk is long: when the term's trigrams, all counted, fill at
# least this many entries of the index's lists (estimated from the sample; FTS5 walks them at
# 15-20 ns an entry, so about 10 ms). Measured on the benchmark's 289 terms at 100k items: FTS5
# alone 3.5 s, this way where it applies 2.0 s, the better of the two for each term 1.6 s.
WALK_MIN = 600_000

_COLUMNS = "c.c0, c.c1, c.c2, c.c3, c.c4"


@dataclass(slots=True)
class Row:
    id: int
    text: list[str]  # the five indexed columns, folded as the tokenizer folds them
    size: int  # the row's tokens over all columns (FTS5's xColumnSize(-1))
    source: str
    project: str | None
    occurred_at: str


@dataclass
class Found:
    rows: dict[int, Row]  # every row holding the term
    n: int  # len(rows): the term's document frequency over the whole library


def folded(term: Term) -> str:
    """The term as the index compares it: its trigrams (the key) overlap by two characters."""
    key = term.key
    return key[0] + "".join(t[-1] for t in key[1:]) if key else ""


def probes(index: stats.IndexStats, term: Term) -> list[str]:
    """Up to PROBES of the term's trigrams: the ones the sample shows least often, preferring ones
    that do not overlap (neighbours share two letters, so they tell little more than one does)."""
    key = term.key
    if len(set(key)) <= PROBES:
        return list(dict.fromkeys(key))
    counts = {t: stats.sample_count(index, t) for t in set(key)}
    order = sorted(range(len(key)), key=lambda i: (counts[key[i]], i))
    chosen: list[int] = []
    for overlap_ok in (False, True):
        for i in order:
            if len(chosen) == PROBES:
                break
            if i in chosen or key[i] in (key[j] for j in chosen):
                continue
            if overlap_ok or all(abs(i - j) >= 3 for j in chosen):
                chosen.append(i)
    return [key[i] for i in chosen]


def worth_it(conn: apsw.Connection, index: stats.IndexStats, term: Term) -> bool:
    """Whether to find this term here rather than through FTS5: its rows look few (the sample),
    and its trigrams' lists long."""
    est = stats.estimated_rows(conn, index, term)  # also reads the sample, if need be
    if est is None or est > CAP or not index.sample:
        return False
    entries = sum(stats.sample_count(index, g) for g in term.key) * index.rows / len(index.sample)
    return entries >= WALK_MIN


def find(conn: apsw.Connection, index: stats.IndexStats, term: Term, fold) -> Found | None:
    """Every row holding `term`, from its probes; None when the probes list more than CAP rows
    (remembered for this state of the index)."""
    needle = folded(term)
    if len(needle) < 3:
        return None
    if term.key in index.crowded:
        return None
    expr = " AND ".join('"' + p.replace('"', '""') + '"' for p in probes(index, term))
    ids = [r[0] for r in conn.execute("SELECT rowid FROM items_fts WHERE items_fts MATCH ? LIMIT ?", (expr, CAP + 1))]
    if len(ids) > CAP:
        if index.token is not None and len(index.crowded) < stats.CACHED_TERMS:
            index.crowded.add(term.key)  # the same next time, until the index changes
        return None
    candidates = conn.execute(f"SELECT id, {_COLUMNS} FROM items_fts_content AS c WHERE id IN ({_marks(ids)})", ids)
    texts = {}
    for r in candidates:
        text = fold.columns(r[1:], needle)
        if text is not None:
            texts[r[0]] = text
    found: dict[int, Row] = {}
    if texts:
        ids = list(texts)
        for rowid, size, source, project, occurred_at in conn.execute(
            f"SELECT d.id, d.sz, i.source, i.project, i.occurred_at FROM items_fts_docsize AS d "
            f"CROSS JOIN items AS i ON i.id = d.id WHERE d.id IN ({_marks(ids)})", ids):
            found[rowid] = Row(rowid, texts[rowid], total_tokens(size), source, project, occurred_at)
    return Found(found, len(found))


def _marks(values: list) -> str:
    return ",".join("?" * len(values))


def total_tokens(blob: bytes) -> int:
    """The sum of the varints of a docsize record: the row's tokens over all columns. (A token
    count never needs SQLite's 9-byte form, so 7 bits a byte, high bit set on all but the last.)"""
    if blob.isascii():  # every count below 128: one byte each
        return sum(blob)
    total = value = 0
    for byte in blob:
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            total += value
            value = 0
    return total


def hits(text: list[str], needle: str) -> list[int]:
    """How many times `needle` occurs in each column, overlaps included (FTS5's phrase hits)."""
    out = []
    for col in text:
        count, at = 0, col.find(needle)
        while at >= 0:
            count += 1
            at = col.find(needle, at + 1)
        out.append(count)
    return out


def score(row: Row, needles: list[str], idfs: list[float], avgdl: float) -> float:
    """The row's bm25 for these phrases (negative, lower is better), as fts5_aux.c computes it."""
    k = bm25.K1 * (1 - bm25.B + bm25.B * row.size / avgdl) if avgdl else bm25.K1
    total = 0.0
    for needle, idf in zip(needles, idfs):
        f = 0.0
        for weight, h in zip(bm25.WEIGHTS, hits(row.text, needle)):
            if h:
                f += weight * h
        total += idf * ((f * (bm25.K1 + 1.0)) / (f + k))
    return -total


def folder(name: str, args: list[str]) -> "Folder | None":
    """The Folder for the library's tokenizer, or None when it is not a case-folding trigram one
    (then this way is not used)."""
    if name != "trigram":
        return None
    options = dict(zip(args[::2], args[1::2]))
    if options.get("case_sensitive", "0") != "0":
        return None
    global _memory
    key = (name, tuple(args))
    with _folders_lock:
        f = _folders.get(key)
        if f is None:
            # A private connection: a built-in tokenizer folds the same on every connection, and
            # this one outlives the caller's.
            _memory = _memory or apsw.Connection(":memory:")
            try:
                f = _folders[key] = Folder(_memory.fts5_tokenizer(name, args))
            except apsw.Error:
                return None
    return f


class Folder:
    """Fold text as a trigram tokenizer folds it, character for character.

    The tokenizer folds each character on its own (SQLite's sqlite3Fts5UnicodeFold: lower case,
    and with remove_diacritics the base letter; combining marks are dropped). Three ways, fastest
    first, all giving the tokenizer's own answer:

    - ASCII: only A-Z change, which str.lower() does;
    - Latin-1 (U+0000-U+00FF, the accented letters of most European text): when every character
      folds to one character of that range, two byte translations fold the text, through a table
      filled by asking the tokenizer about each of the 256 characters;
    - anything else: runs of non-ASCII characters are folded one character at a time (asking the
      tokenizer: three of a character in a row make one trigram, or none when it is dropped) and
      remembered per run, since a library repeats its words.
    """

    def __init__(self, tokenizer):
        self._tok = tokenizer
        self._runs: dict[bytes, bytes] = {}
        table = bytearray(range(256))
        foldable = bytearray()
        for code in range(256):
            folded = chr(code).lower() if code < 128 else self._char(chr(code))
            if len(folded) == 1 and ord(folded) < 256:
                table[code] = ord(folded)
                foldable.append(code)
        self._latin1 = bytes(table)
        self._latin1_foldable = bytes(foldable)

    def _char(self, c: str) -> str:
        grams = self._tok((c * 3).encode("utf-8"), apsw.FTS5_TOKENIZE_DOCUMENT, None,
                          include_offsets=False, include_colocated=False)
        return grams[0][:1] if grams else ""

    def _run(self, m: re.Match) -> bytes:
        run = m.group()
        folded = self._runs.get(run)
        if folded is None:
            folded = "".join(self._char(c) for c in run.decode("utf-8")).encode("utf-8")
            if len(self._runs) < MAX_RUNS:
                self._runs[run] = folded
        return folded

    def __call__(self, text: str | None) -> str:
        if not text:
            return ""
        if text.isascii():
            return text.lower()
        try:
            latin1 = text.encode("latin-1")
        except UnicodeEncodeError:
            latin1 = None
        if latin1 is not None and not latin1.translate(None, self._latin1_foldable):
            return latin1.translate(self._latin1).decode("latin-1")
        # bytes.lower() changes A-Z only; the non-ASCII runs are then folded whole.
        return _NON_ASCII.sub(self._run, text.encode("utf-8").lower()).decode("utf-8")

    def columns(self, values, needle: str) -> list[str] | None:
        """The columns folded, or None when the needle is in none of them (one pass over the
        NUL-joined text: a needle holds no NUL, so it cannot straddle two columns)."""
        values = [v or "" for v in values]
        if any("\0" in v for v in values):  # a column holds a NUL itself: one by one
            text = [self(v) for v in values]
            return text if any(needle in c for c in text) else None
        folded = self("\0".join(values))
        return folded.split("\0") if needle in folded else None


# A run of non-ASCII bytes in UTF-8 is a run of whole characters (ASCII bytes never occur inside one).
_NON_ASCII = re.compile(rb"[\x80-\xff]+")
MAX_RUNS = 200_000
_folders: dict[tuple, Folder] = {}
_memory: apsw.Connection | None = None
_folders_lock = threading.Lock()
