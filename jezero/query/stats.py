"""What the index knows about a term: how many items contain it.

FTS5's bm25 gives a term the weight IDF = log((N - n + 0.5) / (n + 0.5)), n being the number of
rows that contain it, and floors that weight at 1e-6 once n >= N/2. Such a term adds nothing to
any score worth the name, yet OR-ed into the query it makes FTS5 score every row that contains it
before LIMIT can apply (170-220 ms for a word in every item of 100k). search() therefore asks,
for each term, whether it is floored, and leaves floored terms out of the ranked query.

Knowing it exactly costs a count of the rows that hold the phrase, bounded at N/2 rows. Two
things keep that cost off the common path:

- a gate: a sample of up to SAMPLE_SIZE items (SAMPLE_BLOCKS runs of neighbours spread over the
  library), read once and kept while the library changes little (SAMPLE_DRIFT), matched in
  Python. A term found in fewer than GATE_SHARE of the sampled items is kept without counting.
  The gate can only err towards keeping a term, which costs time, never a different ranking:
  the decision to leave a term out is always the exact count's;
- a cache of the exact counts per library file and index state (FTS5 rewrites its structure
  record, rowid 10 of `items_fts_data`, on every change, so the record's bytes identify a state;
  rowid 1 holds N and the token totals bm25 uses). Any write starts a fresh cache of counts.
  The counts of a state are also stored beside the library as they are made (persisted.py), so
  that another process (a server's other workers, a new process) looks a term up there rather
  than counting it again while the library has not changed.

Nothing here writes to the library: the sample and the counts are plain SELECTs.
"""

from __future__ import annotations

import re
import threading
import time
import unicodedata
from collections import OrderedDict
from dataclasses import dataclass, field

import apsw

from jezero.query import persisted
from jezero.query.terms import Term
from jezero.store import varints

SAMPLE_SIZE = 256
SAMPLE_BLOCKS = 16
# Below this share in the sample a term is treated as rare without counting. A term in half the
# library shows ~50% +- 3.1% in 256 independent draws; 35% leaves about five standard deviations,
# and room for the sample being runs of neighbours rather than independent draws.
GATE_SHARE = 0.35
# Library states and terms remembered per process; old states are forgotten first.
CACHED_STATES = 4
CACHED_TERMS = 20_000
# The sample only guides how a query runs, never what it returns, so a new state of the index
# keeps the previous state's sample (and what was learnt from it) while the library has not grown
# or shrunk by more than SAMPLE_DRIFT of its rows and the sample is younger than SAMPLE_MAX_AGE
# seconds: a connector committing every few seconds does not cost a re-read each time.
SAMPLE_DRIFT = 0.05
SAMPLE_MAX_AGE = 600.0


@dataclass
class IndexStats:
    rows: int  # N as FTS5 sees it (the averages record)
    tokens: int  # tokens in all columns of all rows: avgdl = tokens / rows
    token: bytes | None  # identity of this index state; None when it cannot be cached
    counts: dict[tuple, int] = field(default_factory=dict)  # exact n, or >= half when floored
    shares: dict[tuple, float] = field(default_factory=dict)  # share of the sample holding a term
    sample: list[str] | None = None  # folded texts of the sampled items
    sample_text: str = ""  # the same, NUL-joined (terms hold no NUL: no match spans two items)
    grams: dict[str, int] = field(default_factory=dict)  # occurrences of a trigram in sample_text
    sample_rows: int = 0  # N when the sample was read
    sample_at: float = 0.0  # time.monotonic() then
    positions: dict[str, list[int]] | None = None  # where each trigram starts in sample_text (occurrences())
    crowded: set[tuple] = field(default_factory=set)  # terms whose probes listed too many rows (rare.py)
    lock: threading.Lock = field(default_factory=threading.Lock)
    library: str = ""  # the library file, where the counts are saved (persisted.py)
    state: str = ""  # this state's id in that file

    @property
    def half(self) -> int:
        """The smallest n that FTS5 floors: 2n >= N."""
        return (self.rows + 1) // 2

    def floored(self, n: int) -> bool:
        return 2 * n >= self.rows

    def keep_sample_of(self, earlier: "IndexStats") -> None:
        """Take over an earlier state's sample, if it still stands for this library."""
        if earlier.sample is None or time.monotonic() - earlier.sample_at > SAMPLE_MAX_AGE:
            return
        if abs(self.rows - earlier.sample_rows) > SAMPLE_DRIFT * max(earlier.sample_rows, 1):
            return
        with earlier.lock:
            self.sample, self.sample_text = earlier.sample, earlier.sample_text
            self.shares, self.grams = earlier.shares, earlier.grams
            self.positions = earlier.positions
            self.sample_rows, self.sample_at = earlier.sample_rows, earlier.sample_at


_states: OrderedDict[tuple, IndexStats] = OrderedDict()
_newest: dict[str, IndexStats] = {}  # per library file, the state seen last
_states_lock = threading.Lock()


def index_stats(conn: apsw.Connection) -> IndexStats:
    """The stats object for the library's current index state (shared across connections to the
    same file). A backend without FTS5 (its Ranker has `indexed_columns`, e.g. PostgreSQL's
    subjects.py) gives the same numbers from the items themselves, for one call (not cached):
    its rows, and the average size of the sample, which is every item up to SAMPLE_SIZE."""
    ranker = _indexed_elsewhere(conn)
    if ranker is not None:
        # Kept on the reader while the items' state (their count, highest id and latest write)
        # stays the same: the sample costs a read and a parse of 256 items.
        state = ranker.item_state()
        kept = getattr(ranker, "index_stats", None)
        if kept is not None and kept[0] == state:
            return kept[1]
        rows = state[0]
        sampled = _sample_columns(conn, ranker)
        average = sum(size for _, size in sampled.values()) / len(sampled) if sampled else 0.0
        stats = IndexStats(rows=rows, tokens=round(average * rows), token=None)
        stats.sample = [fold("\n".join(cols)) for cols, _ in sampled.values()]
        stats.sample_text, stats.sample_rows, stats.sample_at = "\0".join(stats.sample), rows, time.monotonic()
        ranker.index_stats = (state, stats)
        return stats
    rows = dict(conn.execute("SELECT id, block FROM items_fts_data WHERE id IN (1, 10)"))
    averages, structure = rows.get(1), rows.get(10)
    numbers = varints(averages) if averages else [0]
    n, tokens = numbers[0], sum(numbers[1:])
    filename = getattr(conn, "filename", "") or ""
    if not filename or structure is None:
        return IndexStats(rows=n, tokens=tokens, token=None)
    key = (filename, bytes(averages or b""), bytes(structure))
    with _states_lock:
        stats = _states.get(key)
        if stats is None:
            stats = _states[key] = IndexStats(rows=n, tokens=tokens, token=key[2], library=filename,
                                              state=persisted.state_id(key[1], key[2]))
            stats.counts.update(persisted.load(filename, stats.state))  # a new process starts warm
            earlier = _newest.get(filename)
            if earlier is not None:
                stats.keep_sample_of(earlier)
            _newest[filename] = stats
            while len(_states) > CACHED_STATES:
                _states.popitem(last=False)
        else:
            _states.move_to_end(key)
    return stats


def classify(conn: apsw.Connection, stats: IndexStats, terms: list[Term]) -> tuple[list[Term], list[Term]]:
    """Split terms into (kept, floored). A term is floored only when an exact count proved that
    at least half the rows hold it; an interrupted count (time budget) keeps the term."""
    kept: list[Term] = []
    floored: list[Term] = []
    for t in terms:
        with stats.lock:
            n = stats.counts.get(t.key)
        if n is None:
            share = sample_share(conn, stats, t)
            if share is not None and share < GATE_SHARE:
                kept.append(t)
                continue
            try:
                n = counted(conn, stats, t)
            except apsw.InterruptError:
                kept.append(t)
                continue
        (floored if stats.floored(n) else kept).append(t)
    return kept, floored


def estimated_rows(conn: apsw.Connection, stats: IndexStats, term: Term) -> float | None:
    """About how many rows hold the term: its exact count when known, else from the sample (an
    estimate, used only to decide how to run a query, never how to rank)."""
    with stats.lock:
        n = stats.counts.get(term.key)
    if n is not None:
        return float(n)
    share = sample_share(conn, stats, term)
    return None if share is None else share * stats.rows


def exact_count(conn: apsw.Connection, stats: IndexStats, term: Term) -> int:
    """n for a term, as bm25 computes it (counted once per index state). For a floored term the
    count stops at N/2, which is all bm25 needs to know."""
    with stats.lock:
        n = stats.counts.get(term.key)
    return counted(conn, stats, term) if n is None else n


def counted(conn: apsw.Connection, stats: IndexStats, term: Term) -> int:
    """A term's n that this process does not know yet: as another process stored it for this
    index state (persisted.py), else counted here (and stored for the others)."""
    n = persisted.lookup(stats.library, stats.state, term.key) if stats.library else None
    if n is None:
        n = count_rows(conn, term, limit=stats.half)
        remember(stats, term, n, share=True)
    else:
        remember(stats, term, n)
    return n


def count_rows(conn: apsw.Connection, term: Term, *, limit: int) -> int:
    if limit <= 0:
        return 0
    return conn.execute(
        "SELECT count(*) FROM (SELECT 1 FROM items_fts WHERE items_fts MATCH ? LIMIT ?)", (term.quoted, limit)
    ).fetchone()[0]


def remember(stats: IndexStats, term: Term, n: int, share: bool = False) -> None:
    """Keep a count for this index state; `share`: also store it for other processes."""
    if stats.token is None:
        return
    with stats.lock:
        if len(stats.counts) >= CACHED_TERMS:
            stats.counts.clear()
        stats.counts[term.key] = n
    if share and stats.library:
        persisted.record(stats.library, stats.state, term.key, n)


def sample_share(conn: apsw.Connection, stats: IndexStats, term: Term) -> float | None:
    """The share of the sampled items holding the term (None if the sample could not be read in
    time). Below GATE_SHARE it may be an overestimate: occurrences, not items, are counted."""
    with stats.lock:
        share = stats.shares.get(term.key)
        sample = stats.sample
    if share is not None:
        return share
    if sample is None:
        try:
            sample = _read_sample(conn, stats.rows)
        except apsw.InterruptError:
            return None
        with stats.lock:
            stats.sample, stats.sample_text = sample, "\0".join(sample)
            stats.sample_rows, stats.sample_at = stats.rows, time.monotonic()
    if not sample:
        return 0.0
    needle = fold(term.text)
    # Occurrences bound the items holding it from above, and str.count runs in C: most terms
    # are settled here without looking at items one by one.
    share = occurrences(stats, needle) / len(sample)
    if share >= GATE_SHARE:
        share = sum(1 for text in sample if needle in text) / len(sample)
    if stats.token is not None:
        with stats.lock:
            if len(stats.shares) >= CACHED_TERMS:
                stats.shares.clear()
            stats.shares[term.key] = share
    return share


# occurrences() walks a trigram's starts in Python (~0.2 us each) where str.count reads the whole
# sample in C (~0.15 ms for 256 items of ~800 characters): past this many starts, str.count.
POSITIONS_MAX = 500


def occurrences(stats: IndexStats, needle: str) -> int:
    """stats.sample_text.count(needle), exactly (non-overlapping, leftmost first), found through
    the starts of the needle's rarest trigram in the sample. The subjects that current.py scores
    bring dozens of new terms a search; counting each over the whole sample text was most of the
    rule's cost on first sight (benchmarks/load/README.md)."""
    text = stats.sample_text
    if len(needle) < 3:
        return text.count(needle)
    index = stats.positions
    if index is None:
        index = {}
        for i in range(len(text) - 2):
            index.setdefault(text[i:i + 3], []).append(i)
        stats.positions = index  # the same sample gives the same index: a race only builds it twice
    best, offset = None, 0
    for j in range(len(needle) - 2):
        at = index.get(needle[j:j + 3])
        if at is None:
            return 0
        if best is None or len(at) < len(best):
            best, offset = at, j
    if len(best) > POSITIONS_MAX:
        return text.count(needle)
    # Every occurrence holds the trigram at `offset`: its starts, in order, are the candidates.
    count, end, size = 0, 0, len(needle)
    for p in best:
        start = p - offset
        if start >= end and text.startswith(needle, start):
            count += 1
            end = start + size
    return count


def sample_count(stats: IndexStats, text: str) -> int:
    """How often `text` (a trigram) occurs in the sample, which must have been read."""
    n = stats.grams.get(text)
    if n is None:
        n = stats.sample_text.count(text)
        if stats.token is not None and len(stats.grams) < CACHED_TERMS:
            stats.grams[text] = n
    return n


def _indexed_elsewhere(conn):
    """The reader's backend Ranker when the items' indexed text is read through it (no FTS5)."""
    ranker = getattr(conn, "ranker", None)
    return ranker if ranker is not None and hasattr(ranker, "indexed_columns") else None


def _sample_runs(conn: apsw.Connection) -> list[tuple[int, int]]:
    """The sample's runs of ids, (first, last) inclusive (_read_sample)."""
    # two subqueries: min() and max() in one SELECT scan the table; alone each is one B-tree step
    lo, hi = conn.execute("SELECT (SELECT min(id) FROM items), (SELECT max(id) FROM items)").fetchone()
    if lo is None:
        return []
    span = hi - lo + 1
    run = max(SAMPLE_SIZE // SAMPLE_BLOCKS, 1)
    if span <= SAMPLE_SIZE:
        starts = [lo]
        run = span
    else:
        starts = [lo + (span - run) * b // (SAMPLE_BLOCKS - 1) for b in range(SAMPLE_BLOCKS)]
    return [(start, start + run - 1) for start in starts]


def _sample_columns(conn, ranker) -> dict:
    runs = _sample_runs(conn)
    return ranker.indexed_columns(ranges=runs) if runs else {}


def _read_sample(conn: apsw.Connection, rows: int) -> list[str]:
    """Up to SAMPLE_SIZE rows in SAMPLE_BLOCKS runs of consecutive ids spread over the library:
    runs of neighbours share pages, so a cold read costs a few dozen seeks, not hundreds."""
    ranker = _indexed_elsewhere(conn)
    if ranker is not None:
        return [fold("\n".join(cols)) for cols, _ in _sample_columns(conn, ranker).values()]
    texts = []
    for start, last in _sample_runs(conn):
        for cols in conn.execute(
            "SELECT title, summary, questions, atoms, project FROM items_fts WHERE rowid BETWEEN ? AND ?",
            (start, last),
        ):
            texts.append(fold("\n".join(c or "" for c in cols)))
    return texts


_COMBINING = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")


def fold(text: str) -> str:
    """Lowercase without diacritics: close to what the trigram tokenizer compares (used only by
    the gate, where close is enough)."""
    text = text.lower()
    if text.isascii():
        return text
    return _COMBINING.sub("", unicodedata.normalize("NFD", text))
