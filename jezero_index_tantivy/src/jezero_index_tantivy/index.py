"""The tantivy index beside a library: its schema, how an item becomes a document, how the index
catches up with the library's change log, and how a query becomes a tantivy query.

Why tantivy answers faster than FTS5 here: its words field has short posting lists with
block-max scores, so the top matches are found without scoring every row a frequent word
matches; FTS5 scores every match before its LIMIT, and its trigram lists are long.
"""

from __future__ import annotations

import glob
import json
import logging
import math
import os
import re
import shutil
import threading
import time
import unicodedata
from bisect import bisect_right
from contextlib import ExitStack, contextmanager, suppress
from datetime import datetime, timedelta, timezone
from pathlib import Path

import apsw
import tantivy

from jezero.plugin import FTS_COLUMNS, Head, fts_row, library_head, open_readonly
from jezero.plugin import IndexRequest as Request
from jezero.query import bm25, current, rare, stats
from jezero.query.terms import split_tokenizer

log = logging.getLogger(__name__)

# Bump when the schema or the analysis changes: a new folder is built, the old one is left alone.
# 6: the words field's text composed first (Composed). 7: the exact field (EXACT_WEIGHT).
FORMAT = 7
# FTS5's column weights (bm25(items_fts, 2.0, 1.0, 1.5, 1.5, 0.5)) as FTS5 applies them: a
# term's occurrences are weighted per column and summed before BM25's saturation, with one IDF
# and one length for the whole row (BM25F). One words field holding each column this many times
# (twice its weight) gives exactly that sum, and lets tantivy prune a query of words by block-max
# scores (a query over five boosted fields cannot be pruned, and scored each column apart it
# ranked worse on the judged sets: R@1 0.719 against 0.783).
REPEAT = {"title": 4, "summary": 2, "questions": 3, "atoms": 3, "project": 1}
# A term whose words the index does not all hold whole (a fragment such as `migrat`, part of an
# identifier) is looked up in the trigram field only, as FTS5's trigram index would find it.
FRAGMENT_WEIGHT = 1.0
# Every term is also looked up as a substring (what FTS5's trigram index finds: `invoice` in
# `invoices`, `paid` in `unpaid`, `which` in `whichever`). With SUBSTRING_AS_FTS5 the substring
# scores as FTS5 scores the term: on FTS5's IDF of the items holding the substring (counted once
# per index state: its rarest trigram is in at most SUBSTRING_MAX_ROWS items), and the term takes
# the better of the word and the substring (a disjunction max), not their sum: an item saying the
# word whole holds its substring too, and FTS5 counts those occurrences once. Before (until
# 2026-12-02, `parity3`) the two were summed, the substring at 0.3 on tantivy's phrase IDF, which
# is the sum of its trigrams' (`native` in 2,362 items: 11.3, the word's own 6.1): a rare word (in
# at most SUBSTRING_WORD_ROWS items, so with a substring) weighed 1.6-1.9 times its FTS5 bm25, a
# common one (no substring) 1.0-1.4, and a word found only inside a longer one 0.3 x 4.9 / 1.6 of
# FTS5's weight. Chosen on half A of the judged sets (benchmarks/retrieval/README.md, 2026-12-02,
# `parity3`; coding MRR@10 + chats R@10 + long-chat R@10, unpadded / padded): the sum 2.399 /
# 1.717; the max at weight 0.5 2.396 / 1.731, 0.7 2.396 / 1.731, 1.0 2.399 / 1.731, 1.5 2.399 /
# 1.717. (The first measurement of the sum, before the words' FTS5 IDF: words alone R@1 / R@5 /
# MRR 0.792 / 0.933 / 0.868, the sum at 0.3 0.783 / 0.951 / 0.871, at 1.0 0.774 / 0.960 / 0.872.)
SUBSTRING_AS_FTS5 = True
SUBSTRING_WEIGHT = 1.0
SUBSTRING_SUM_WEIGHT = 0.3  # the weight of the sum (SUBSTRING_AS_FTS5 off)
# ... but only where that is cheap: a term of 5 characters or more whose rarest trigram is in at
# most SUBSTRING_MAX_ROWS items (a phrase of trigrams costs about the length of its rarest list,
# and cannot be pruned by block-max scores). At 100k items, substrings for every term made p50
# 5.7 ms and p99 24.9 ms; bounded at 2,000 rows, 2.5 and 10.2; words alone 2.4 and 9.0.
SUBSTRING_MIN_GRAMS = 1
SUBSTRING_MAX_ROWS = 2000
# ... and only for a rare word: one the words field holds in at most SUBSTRING_WORD_ROWS items.
# A word's substring finds it inside longer words (`paid` in `unpaid`, `where` in `somewhere`) and
# weights a rare word twice; for a word in hundreds of items the words field answers alone. One
# substring phrase in the query is enough to stop tantivy pruning the whole OR by block-max
# scores, so a query of 2-3 mid-frequency words scored every item each word is in: the load
# benchmark's searches at 100k spent 22% of tantivy's time on them. No word of the judged sets'
# libraries is in more items than this (their figures are unchanged); on the same sets padded
# with 2,000 distractor sessions, see benchmarks/retrieval/README.md (2026-12-01, `tanq`).
SUBSTRING_WORD_ROWS = 200
# A word's score on FTS5's IDF (bm25(): log((N - n + 0.5) / (n + 0.5)), floored at 1e-6) instead of
# tantivy's (ln(1 + the same ratio)), by a boost of the ratio (see _on_fts5_idf).
ITEMS_FTS5_IDF = True
# ... and on FTS5's count of it, where that is cheap to know: FTS5 counts a term's items by its
# substring (what its trigram index finds: `con` inside `config`, `car` inside `card`), the words
# field by the word. A short word said whole in few items but inside longer words in many scored
# as a rare word here: the Spanish items' `con` and `qué` (whole in 5 of 2,361 items of the padded
# coding library, inside other words in 2,135 and 2,088: FTS5 floors both, and leaves them out of
# its MATCH) put them before the item on invoice PDFs, and `car` (in `card`, `scar`) weighed 2.25
# in omar-31's item against FTS5's 0.62. The count is the trigram field's: a term of one trigram
# is its list's length, a rare word's substring is counted anyway (SUBSTRING_AS_FTS5); any other
# word keeps its own count. A clause never weighs more than its own count gives.
ITEMS_SUBSTRING_COUNT = True
# A one-word term is looked up both as its stem (the words field: `certificates` finds
# `certificate`, `generation` finds `general`) and as the word itself (the exact field, the same
# text unstemmed, with the same column repeats), this share of its weight on the exact word:
# an item saying the query's word scores 1, one saying another word of its stem 1 - EXACT_WEIGHT.
# FTS5's trigram index finds the word's own text only (in longer words too: the substring).
EXACT_WEIGHT = 0.5
# The pool tantivy finds (its best `pool` items) re-scored with FTS5's bm25 (TantivyIndex._rescored),
# so that the items lane orders what it found as FTS5 orders it.
ITEMS_RESCORE = True
# ... of at most this many items, tantivy's best: a re-scored item costs 5-10 us of Python. At 100k
# items, 200 (the whole pool) cost 1.75x per query and 50 1.03x. On the judged sets 50 gave FTS5's
# figures or better (benchmarks/retrieval/README.md, 2026-12-02, `tantivy6`).
RESCORE_POOL = 50
# The pool's cut is exact on ties (_best): tantivy is asked for TIE_FIRST times the pool's hits,
# and while the last of them scores as the last one kept, for TIE_FACTOR times more, up to
# TIE_FETCH_MAX, until a lower score shows; the tied items are then cut by id, newest first, so
# the pool does not depend on the index's segments. On the benchmark's 100k library 118 of 200
# pools of 50 end in a tie that runs past the 51st hit, 9 past the 100th, 1 past the 204th
# (benchmarks/search/README.md, 2026-12-04); tantivy's search of 100 hits costs 3% more than of
# 50 at the median, a second search ~100%.
TIE_FIRST = 2
TIE_FACTOR = 4
TIE_FETCH_MAX = 5_000
# A key's allowed sources as an OR of term queries up to this many names (a term set builds a bit
# set of every item it matches before the search: a key reading 2 sources of 6 cost 5% more
# that way); more names, a term set.
SOURCE_TERMS_MAX = 4
# A reader catches up inline with at most this many changes; past that it leaves the work to the
# writer (`jezero run` syncs after writing, `jezero reindex` rebuilds) and FTS5 answers meanwhile.
READER_CATCH_UP = 2000
WRITER_HEAP = 64_000_000  # bytes, split over the writer's threads
REBUILD_HEAP = 300_000_000  # a rebuild in parts (DerivedIndex.rebuild_part), one thread
# A rebuild of 2-7 parts is written in this many (tantivy's merge policy merges 8 segments of one
# level into one, and every part is in the same level): one segment (_Parts).
MERGED_PARTS = 8
# A writer that holds the catch-up lock waits this long at most for the index's own writer, which
# the process that applied the change before may hold while it waits for its merges.
WRITER_WAIT_S = 60.0
# How tantivy says that another writer holds the index (the only refusal worth waiting for).
WRITER_BUSY = "LockBusy"
# How tantivy says that the index's files are damaged (a segment file deleted or cut short, a
# meta.json that does not parse, a schema or format this code cannot read): the index is then
# rebuilt by the next writer (`jezero run`, `jezero reindex`); readers leave it to FTS5.
DAMAGED = ("Data corrupted", "corrupt", "FileDoesNotExist", "InvalidData", "Incompatible", "schema does not match")
SPACE = "\u2581"  # stands for white space inside a trigram (the field's tokenizer splits on spaces)
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)

_WORDS = "jz_words"
_EXACT = "jz_exact"
# Term queries kept per index state (TantivyIndex._query); a new state starts over.
TERM_QUERIES_KEPT = 20_000
# Counts of the items passing a request's filters kept per index state (TantivyIndex._items_within).
WITHIN_KEPT = 1024
_UNBUILT = object()


def folder_for(library: Path) -> Path:
    return library.with_name(f"{library.name}.tantivy-{FORMAT}")


def _schema() -> tantivy.Schema:
    b = tantivy.SchemaBuilder()
    b.add_unsigned_field("id", indexed=True, fast=True)
    b.add_integer_field("at", indexed=True, fast=True)  # occurred_at, microseconds since 1970
    b.add_text_field("f_source", tokenizer_name="raw", index_option="basic")
    b.add_text_field("f_project", tokenizer_name="raw", index_option="basic")
    b.add_text_field("words", tokenizer_name=_WORDS, index_option="position")
    b.add_text_field("exact", tokenizer_name=_EXACT, index_option="freq")
    b.add_text_field("tri", tokenizer_name="whitespace", index_option="position")
    b.add_text_field("pairs", tokenizer_name="whitespace", index_option="basic")  # see WordPairs
    b.add_text_field("kind", tokenizer_name="raw", index_option="basic")  # "state": the one state document
    b.add_text_field("state", stored=True)
    return b.build()


def _words_analyzer() -> tantivy.TextAnalyzer:
    # Words split on anything not a letter or digit (so `src/order_cache.py` is four words, and a
    # query for it a phrase of them), lowercased, accents folded as FTS5's remove_diacritics does,
    # English stems (`migrations` and `migrat` meet at `migrat`; on the judged sets R@1 went from
    # 0.765 to 0.792 with them).
    return (tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple()).filter(tantivy.Filter.remove_long(40))
            .filter(tantivy.Filter.lowercase()).filter(tantivy.Filter.ascii_fold())
            .filter(tantivy.Filter.stemmer("english")).build())


def _exact_analyzer() -> tantivy.TextAnalyzer:
    """The words analyzer without the stemmer (the exact field)."""
    return (tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple()).filter(tantivy.Filter.remove_long(40))
            .filter(tantivy.Filter.lowercase()).filter(tantivy.Filter.ascii_fold()).build())


def composed(text: str) -> str:
    """`text` with its accents composed (Unicode NFC), for the words analyzers: their tokenizer
    splits words on anything not a letter or digit, which a combining accent is, so text written
    decomposed (macOS file names, text copied from a PDF: `re\u0301sume\u0301`) became the words
    `re` and `sume`, where FTS5's tokenizers fold it as they fold `résumé`, to `resume`."""
    return text if text.isascii() else unicodedata.normalize("NFC", text)


class Composed:
    """A words analyzer that composes its text first (composed); the index's own analyzer (the
    registered tokenizer) gets text already composed (_document)."""

    def __init__(self, analyzer: tantivy.TextAnalyzer):
        self.analyzer = analyzer

    def analyze(self, text: str) -> list[str]:
        return self.analyzer.analyze(composed(text))


class WordPairs:
    """Word pairs, for phrases made of frequent words. A phrase is an intersection of its words'
    posting lists with their positions checked; when every word is frequent, the lists span a
    large share of the items although the phrase is rare: a phrase of function words ("the
    and", "that this": 20-70 ms at 100k-300k items) or an identifier made of everyday parts
    (`internal/client_manager.html` is the phrase internal client manag html, each in 33-42% of
    the items: 25-38 ms). The `pairs` field holds, per item, every pair of adjacent words as the
    words field holds them (stemmed), and a phrase is filtered by its pairs, whose lists are
    short: tantivy's intersection walks the shortest list first.

    Pairs across the boundary of two values of the words field are kept too, so an item's pairs
    are a superset of those of every phrase it matches, however tantivy places the values'
    positions: the filter never drops a match."""

    def __init__(self, words: tantivy.TextAnalyzer):
        self.words = words

    @staticmethod
    def of_stems(stems: list[str]) -> list[str]:
        return [f"{a}_{b}" for a, b in zip(stems, stems[1:])]

    def of_values(self, values: list[tuple[str, int]]) -> str:
        """The pairs of an item's words-field values ((text, times added)), as one text for the
        field."""
        pairs: set[str] = set()
        last: list[str] = []
        for text, times in values:
            stems = self.words.analyze(text)
            if not stems:
                continue
            # A value added again repeats its own pairs, plus the one across its repeats.
            pairs.update(self.of_stems(last[-1:] + stems + (stems[:1] if times > 1 else [])))
            last = stems
        return " ".join(pairs)


def fold(text: str) -> str:
    """Lowercase without accents, white space runs as one SPACE: what the trigram field holds."""
    decomposed = unicodedata.normalize("NFKD", text.lower())
    bare = "".join(c for c in decomposed if not unicodedata.combining(c))
    return SPACE.join(bare.split())


def trigrams(text: str) -> list[str]:
    s = fold(text)
    return [s[i:i + 3] for i in range(len(s) - 2)]


def any_term(schema, field: str, values) -> tantivy.Query:
    """Items whose `field` holds one of `values` (raw terms; none: nothing), for a filter: a term
    query, an OR of them up to SOURCE_TERMS_MAX, else a term set (see SOURCE_TERMS_MAX)."""
    values = list(dict.fromkeys(values))
    if not values:
        return tantivy.Query.empty_query()
    if len(values) == 1:
        return tantivy.Query.term_query(schema, field, values[0])
    if len(values) <= SOURCE_TERMS_MAX:
        return tantivy.Query.boolean_query([(tantivy.Occur.Should, tantivy.Query.term_query(schema, field, v))
                                            for v in values])
    return tantivy.Query.term_set_query(schema, field, values)


def source_filters(schema, sources, source) -> list:
    """The key's source patterns (already expanded to names; empty: nothing) and the one asked for."""
    out = []
    if sources is not None:
        out.append(any_term(schema, "f_source", sources))
    if source is not None:
        out.append(tantivy.Query.term_query(schema, "f_source", source))
    return out


def time_range(schema, since: str | None, before: str | None):
    """The query of documents whose `at` is at or after `since` and before `before` (either
    may be None: no bound on that side)."""
    return tantivy.Query.range_query(
        schema, "at", tantivy.FieldType.Integer,
        lower_bound=micros(since) if since is not None else None,
        upper_bound=micros(before) if before is not None else None,
        include_upper=before is None)


def micros(stored: str) -> int:
    dt = datetime.fromisoformat(stored.replace("Z", "+00:00"))
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return (dt - EPOCH) // timedelta(microseconds=1)


def stored_time(us: int) -> str:
    """The store's fixed-width text for a time in microseconds, from pieces made once: the date
    per day, the hour and minute, the second, the microseconds by thousands. time.gmtime and
    formatting per candidate (200 a query) was 6-7.5% of the server's Python time at 50 clients
    (benchmarks/load/README.md, 2026-12-01); this is ~4x cheaper."""
    seconds, micro = divmod(us, 1_000_000)
    day, rest = divmod(seconds, 86_400)
    date = _DATES.get(day)
    if date is None:
        t = time.gmtime(day * 86_400)
        date = f"{t.tm_year:04d}-{t.tm_mon:02d}-{t.tm_mday:02d}T"
        if len(_DATES) < _DATES_MAX:
            _DATES[day] = date
    minutes, second = divmod(rest, 60)
    high, low = divmod(micro, 1000)
    return date + _HOUR_MINUTES[minutes] + _SECONDS[second] + _THOUSANDS[high] + _THOUSANDS[low] + "Z"


_DATES: dict[int, str] = {}  # days since 1970 -> "YYYY-MM-DDT" (a dict write is atomic under the GIL)
_DATES_MAX = 200_000  # ~550 years of days: never reached by real libraries, a bound all the same
_HOUR_MINUTES = [f"{h:02d}:{m:02d}:" for h in range(24) for m in range(60)]
_SECONDS = [f"{s:02d}." for s in range(60)]
_THOUSANDS = [f"{i:03d}" for i in range(1000)]


_ITEM_SQL = "SELECT id, source, project, occurred_at, title, summary, questions, atoms FROM items"


def _document(row, pairs: WordPairs) -> tantivy.Document:
    item_id, source, project, occurred_at, title, summary, questions, atoms = row
    columns = fts_row(title, summary, json.loads(questions), json.loads(atoms), project)
    doc = tantivy.Document()
    doc.add_unsigned("id", item_id)
    doc.add_integer("at", micros(occurred_at))
    doc.add_text("f_source", source)
    if project:
        doc.add_text("f_project", project)
    values = [(composed(text), REPEAT[col]) for col, text in zip(FTS_COLUMNS, columns) if text]
    for text, times in values:
        for _ in range(times):
            doc.add_text("words", text)
            doc.add_text("exact", text)
    common = pairs.of_values(values)
    if common:
        doc.add_text("pairs", common)
    grams = []
    for text in columns:
        if text:
            grams += trigrams(text)
            grams.append(SPACE * 3)  # no phrase runs from one column into the next
    doc.add_text("tri", " ".join(grams))
    return doc


def _covers(applied: Head | None, head: Head) -> bool:
    """The index's state is the library's `head` or later (a reader's snapshot may be older)."""
    return applied is not None and applied.library == head.library and applied.seq >= head.seq


class DerivedIndex:
    """A tantivy index beside the library, kept in step with its change log (one per library per
    process, thread-safe). The items index and the messages index (messages.py) are two of them:
    each records, in the same tantivy commit as its documents, the change number it applied, so
    that each can be behind, catch up or be rebuilt on its own, and neither answers from a state
    the library never had. Subclasses say what a document is (`_add_all`, `_replace`).

    Who applies a change: whoever holds the index's catch-up lock (`_locked`: a thread lock for
    this process, a file lock beside the folder for the others). A writer that follows the
    library (`holding`: `jezero run`, the load benchmark's writer) takes it before its library
    commit and gives it back once the index has the change, so a reader that sees the new head
    while the index lacks it always finds the lock taken and answers from the state before (which
    the library had) instead of applying the change itself; a reader applies a change only when
    nobody holds the lock (no writer follows, or it died between its two commits)."""

    tokenizers: dict = {}
    # A rebuild commits its documents in parts of at least this many (one segment each): tantivy's
    # merge policy keeps every segment under ~10,000 documents in one level and merges that level
    # whenever it holds 8, so a rebuild's small leftovers (4 segments, 8,100 of 100k items: the
    # last block of each writer thread) were merged again with the new small segments every 7
    # catch-ups, 1.0-1.35 s of CPU each at 5-item commits (benchmarks/load/README.md, 2026-12-01).
    # None: one commit, as many threads as tantivy chooses. A rebuild of 2 to 7 parts is written
    # in MERGED_PARTS parts instead (smaller ones), which that policy merges into one segment as
    # soon as the last is committed (_Parts).
    rebuild_part: int | None = 20_000

    @property
    def reader_catch_up(self) -> int:
        """How many changed items a reader applies inline at most (read when used: tests lower it)."""
        return READER_CATCH_UP

    def __init__(self, library: Path, folder: Path, schema: tantivy.Schema):
        self.library = Path(library)
        self.folder = folder
        self.schema = schema
        self._lock = threading.Lock()
        self._file_lock = _FileLock(Path(str(folder) + ".lock"))  # the other processes'
        self._index: tantivy.Index | None = None
        # (searcher, the change number its commit records), replaced as one: a reader must never
        # pair a searcher with another commit's number.
        self._state: tuple = (None, None)
        self._told_behind = False
        # Whether an update failed (no space, a read-only folder, an I/O error) and was said:
        # said once, not once per write or search, until an update succeeds again.
        self._told_failed = False
        # The library head at which a reader last found the index damaged (not tried again until
        # the library moves on), and whether that was said.
        self._damaged_at: Head | None = None
        self._told_damaged = False
        # (library head, applied state) at which a reader last found the index too far behind to
        # catch up inline: the same pair gives the same verdict, so searches meanwhile do not
        # open a connection and count the changes again each (4% of the server's samples while
        # the benchmark's messages index was missing).
        self._behind_at: tuple | None = None
        self._settling: threading.Thread | None = None  # waiting for the last update's merges

    def _add_all(self, writer, conn: apsw.Connection) -> int:
        raise NotImplementedError

    def _replace(self, writer, conn: apsw.Connection, item_id: int) -> int:
        """Write the documents of item `item_id` as the library has it (none when it is gone),
        after deleting its old ones; returns the documents written."""
        raise NotImplementedError

    # -- keeping in step -------------------------------------------------------------------------

    def _open(self, create: bool) -> tantivy.Index | None:
        if self._index is None:
            if not (self.folder / "meta.json").exists():
                if not create:
                    return None
                self.folder.mkdir(parents=True, exist_ok=True)
            index = tantivy.Index(self.schema, path=str(self.folder), reuse=True)
            for name, analyzer in self.tokenizers.items():
                index.register_tokenizer(name, analyzer)
            self._index = index
        return self._index

    def _refresh(self) -> None:
        """Take the index's latest commit and the change number it records."""
        index = self._index
        index.reload()
        searcher = index.searcher()
        applied = None
        hits = searcher.search(tantivy.Query.term_query(self.schema, "kind", "state"), limit=1, count=False).hits
        if hits:
            state = json.loads(searcher.doc(hits[0][1])["state"][0])
            applied = Head(state["library"], state["seq"])
        self._state = (searcher, applied)

    def _current(self):
        if self._state[0] is None and self._open(create=False) is not None:
            self._refresh()
        return self._state

    def _open_to_update(self) -> tantivy.Index:
        """The index for an update: opened (made when missing) at its latest commit. A damaged
        one is moved aside and deleted, and an empty one made: the update is then a rebuild. The
        index is derived from the library, so nothing is lost; before, a damaged index stayed
        broken (`jezero reindex` failed on it too) until someone deleted its folder by hand."""
        try:
            self._open(create=True)
            self._refresh()  # another process may have moved it on since this one last looked
        except ValueError as e:
            if not damaged(e):
                raise
            log.warning("%s is damaged (%s): rebuilding it from the library", self.folder, str(e)[:300])
            self._discard()
            self._open(create=True)
            self._refresh()
        return self._index

    def _discard(self) -> None:
        self._index = None
        self._state = (None, None)
        self._remove_aside()
        aside = self.folder.with_name(f"{self.folder.name}.damaged-{os.getpid()}")
        os.rename(self.folder, aside)
        shutil.rmtree(aside, ignore_errors=True)

    def _remove_aside(self) -> None:
        """Remove what a discard killed between its rename and its delete left beside the index
        (`<folder>.damaged-<pid>`, as large as the index was): with the catch-up lock held no
        other process is discarding. Called by every discard and every rebuild."""
        for aside in self.folder.parent.glob(f"{glob.escape(self.folder.name)}.damaged-*"):
            if aside.is_dir() and not aside.is_symlink():
                log.warning("removing %s, left by a rebuild that was stopped", aside)
                shutil.rmtree(aside, ignore_errors=True)

    @contextmanager
    def _locked(self, blocking: bool):
        """The index's catch-up lock, this process's and the other processes'; yields whether it
        was had (always, when blocking)."""
        if not self._lock.acquire(blocking=blocking):
            yield False
            return
        try:
            if not self._file_lock.acquire(blocking):
                yield False
                return
            try:
                yield True
            finally:
                self._file_lock.release()
        finally:
            self._lock.release()

    def catch_up(self, rebuild: bool = False, limit: int | None = None) -> int:
        """Apply the library's changes the index lacks, in one tantivy commit that also records
        the change number reached (so the commit and its number cannot part). Rebuilds from
        every item when asked, when the index is new, or when it was built from another library
        (or from a later state: a library restored from a copy). Returns the documents written,
        or -1 when more than `limit` changed items would be needed. Raises ValueError when
        another process holds the index's writer for more than WRITER_WAIT_S (a catch-up of its
        own holds the lock too, so it is only waiting for its merges)."""
        self._wait_settled()
        with self._locked(blocking=True):
            return self._apply_waiting(rebuild, limit)

    def _held(self) -> list["DerivedIndex"]:
        """The indexes a writer's hold covers (TantivyIndex: its messages index too)."""
        return [self]

    @contextmanager
    def holding(self):
        """For a writer: held across its library commit (the body) and the index's update after
        it. Every index of `_held` is locked first (waiting for a catch-up under way), so a
        reader that meanwhile sees the library's new head finds a catch-up under way and answers
        from the state before; when the body returns, the writer applies the change and lets go.
        The merges that the index commit starts are waited for after the lock is released, in a
        thread of their own (the next hold waits for them first): neither the readers nor the
        writer's next library commit wait for them. An update that fails is logged (a reader
        catches up)."""
        held = self._held()
        for index in held:
            index._wait_settled()
        pending: list = []
        with ExitStack() as stack:
            for index in held:
                stack.enter_context(index._locked(blocking=True))
            yield
            # The indexes' commits at once (a tantivy commit is mostly its fsync, and lets go of
            # the GIL): a write is then followed in about one commit's time, not two.
            threads = [threading.Thread(target=index._apply_as_writer, args=(pending,), daemon=True)
                       for index in held[1:]]
            for thread in threads:
                thread.start()
            held[0]._apply_as_writer(pending)
            for thread in threads:
                thread.join()
        self._settle_later(pending)

    def _apply_as_writer(self, pending: list) -> None:
        """_apply for the writer holding the lock (_apply_waiting); a failure is logged."""
        try:
            self._apply_waiting(False, None, pending)
        except Exception as e:  # the library's commit stands; a reader or the next write applies it
            self._failed(e, "not brought in step after a write; fts5 answers what it lacks, and the next write or "
                            "`jezero reindex` catches up")

    def _failed(self, e: Exception, what: str) -> None:
        """Say an update's failure once (a warning), then quietly until one succeeds again."""
        if self._told_failed:
            log.debug("%s %s (%s: %s)", self.folder, what, type(e).__name__, str(e))
            return
        self._told_failed = True
        log.warning("%s %s (%s: %s)", self.folder, what, type(e).__name__, str(e))

    def _apply_waiting(self, rebuild: bool, limit: int | None, pending: list | None = None) -> int:
        """_apply with the lock held, waiting (up to WRITER_WAIT_S) for the index's own writer
        while another process still holds it to wait for its merges. Any other failure (no space
        left, a read-only folder: tantivy raises ValueError for those too) is raised at once:
        waited for, a full disk under the index made every write of a run wait 60 s."""
        deadline = time.monotonic() + WRITER_WAIT_S
        while True:
            try:
                written = self._apply(rebuild, limit, pending)
            except ValueError as e:
                if not _writer_busy(e) or time.monotonic() >= deadline:
                    raise
                time.sleep(0.02)
                continue
            self._told_failed = False
            return written

    def _apply(self, rebuild: bool, limit: int | None, pending: list | None = None, *, reading: bool = False) -> int:
        """catch_up with the lock held. The commit starts segment merges, which must be waited
        for: without them every catch-up adds a segment, and each next one cost more (37 ms of CPU
        at 10 segments, 850 ms at 34, on 3,000 items; 33-35 ms throughout with the merges). With
        `pending`, the tantivy writer is added to it instead, for the caller to wait for once it
        has let the lock go (_settle). `reading`: for a reader, which leaves a damaged index to the
        next writer (FTS5 answers meanwhile)."""
        index = self._open(create=True) if reading else self._open_to_update()
        if reading:
            self._refresh()  # another process may have moved it on since this one last looked
        conn = open_readonly(self.library)
        try:
            conn.execute("BEGIN")  # one snapshot: the changes, the items and the head agree
            head = library_head(conn)
            if head is None:
                raise ValueError(f"{self.library} has no change log: open it with `jezero init` to upgrade it")
            applied = self._state[1]
            full = rebuild or applied is None or applied.library != head.library or applied.seq > head.seq
            if not full and applied.seq == head.seq:
                return 0
            if full:
                count = conn.execute("SELECT count(*) FROM items").fetchone()[0]
                changed = None
            else:
                changed = [r[0] for r in conn.execute(
                    "SELECT item_id FROM item_changes WHERE seq > ? ORDER BY seq", (applied.seq,))]
                count = len(changed)
            if limit is not None and count > limit:
                return -1
            # A rebuild in parts (rebuild_part) writes in one thread: a part is then one segment.
            parted = full and self.rebuild_part is not None
            writer = index.writer(heap_size=REBUILD_HEAP if parted else WRITER_HEAP,
                                  num_threads=1 if parted or not full else 0)
            try:
                if full:
                    # A rebuild killed before its commit left the segments it had flushed, which no
                    # commit lists and tantivy removes only at a commit: each killed retry added its
                    # own (3 kills at 8,000 items: 119 MB beside a 106 MB index).
                    writer.garbage_collect_files()
                    self._remove_aside()
                    writer.delete_all_documents()
                    written = self._add_all(_Parts(writer, count, self.rebuild_part) if parted else writer, conn)
                else:
                    written = sum(self._replace(writer, conn, item_id) for item_id in changed)
                writer.delete_documents_by_term("kind", "state")
                state = tantivy.Document()
                state.add_text("kind", "state")
                state.add_text("state", json.dumps({"library": head.library, "seq": head.seq}))
                writer.add_document(state)
                writer.commit()
            except BaseException:
                with suppress(Exception):  # a writer that an I/O error killed cannot roll back
                    writer.rollback()
                # Its lock on the index goes with it, even while the exception (and this frame)
                # is kept by whoever logged it: kept, it refused every later writer (LockBusy).
                writer = None  # noqa: F841
                raise
            if pending is None:
                writer.wait_merging_threads()
            else:
                pending.append(writer)
        finally:
            try:
                conn.execute("COMMIT")
            finally:
                conn.close()
        self._refresh()
        return written

    def _searcher_for(self, conn: apsw.Connection):
        """A searcher in step with the library `conn` reads (see _in_step); None when the library
        has no change log or no such searcher can be had now (FTS5 answers)."""
        head = library_head(conn)
        return None if head is None else self._in_step(head)

    def _in_step(self, head: Head):
        """_in_step_or_raise, with a damaged index left to FTS5 (said once) and not tried again
        until the library moves on (a writer then rebuilds it)."""
        if self._damaged_at == head:
            return None
        try:
            return self._in_step_or_raise(head)
        except ValueError as e:
            if not damaged(e):
                raise
            self._damaged_at = head
            self._index = None  # opened afresh next time: a writer may have rebuilt it meanwhile
            self._state = (None, None)
            if not self._told_damaged:
                self._told_damaged = True
                log.warning("%s is damaged (%s); fts5 answers until `jezero run` or `jezero reindex` rebuilds it",
                            self.folder, str(e)[:300])
            return None

    def _in_step_or_raise(self, head: Head):
        """A searcher for the library at `head`, catching up when the index lags; None when that
        cannot be had now (FTS5 answers).

        A search never waits for a catch-up already under way, in another thread or another
        process (a writer holding the lock across its commit, see `holding`): it answers from the
        state before it, which the library had, as long as that is at most `reader_catch_up`
        changes behind. Under a writer that commits several times a second, waiting made every
        search queue behind a tantivy commit (benchmarks/load/README.md)."""
        searcher, applied = self._current()
        if _covers(applied, head):
            return searcher
        pending: list = []
        with self._locked(blocking=False) as had:
            if not had:
                return self._before(searcher, applied, head)
            if self._index is not None:
                self._refresh()  # the writer (or another process) may have caught up already
                searcher, applied = self._state
                if _covers(applied, head):
                    return searcher
            if self._behind_at == (head, applied):
                return None
            try:
                if self._apply(False, self.reader_catch_up, pending, reading=True) < 0:
                    self._behind_at = (head, self._state[1])
                    if not self._told_behind:  # once per process, not once per search
                        self._told_behind = True
                        log.warning("%s is far behind the library: run `jezero reindex`; fts5 answers meanwhile",
                                    self.folder)
                    return None
            except ValueError as e:
                if damaged(e):
                    raise  # (_in_step)
                if not _writer_busy(e):  # no space, a read-only folder: not tried again for this head
                    self._behind_at = (head, self._state[1])
                    self._failed(e, "cannot catch up with the library; fts5 answers until it can")
                    return None
                # the process that applied the last change is still merging
                log.debug("tantivy index busy (%s); answering from the state before", e)
                return self._before(searcher, applied, head)
        # After letting go of the lock: a search meanwhile answers from this new state. The merges
        # are still waited for here, so that the index's writer is free again when the search
        # returns (another process's catch_up, a test holding the writer).
        _settle(pending)
        searcher, applied = self._current()
        return searcher if _covers(applied, head) else None

    def _settle_later(self, pending: list) -> None:
        """Wait for the merges of the tantivy writers in `pending` (see _apply) in a thread (the
        wait lets go of the GIL), so that the search or the write that made them goes on."""
        if not pending:
            return
        thread = threading.Thread(target=_settle, args=(pending,), name=f"merges {self.folder.name}", daemon=True)
        thread.start()
        self._settling = thread

    def _wait_settled(self) -> None:
        """Before taking the index's writer on purpose (a writer's update, a catch_up): the merges
        left by this process's last update are done, so the writer is free."""
        thread = self._settling
        if thread is not None:
            thread.join()

    def _before(self, searcher, applied: Head | None, head: Head):
        """The searcher of an older state of this library while someone else catches up, or None
        (FTS5 answers) when it is too far behind or of another library."""
        if (searcher is not None and applied is not None and applied.library == head.library
                and applied.seq <= head.seq and head.seq - applied.seq <= self.reader_catch_up):
            return searcher
        return None


class _FileLock:
    """An exclusive lock between processes: flock (Windows: msvcrt.locking) on a file beside the
    index's folder, so that deleting the folder keeps it. The file holds nothing and stays; it
    is open only while the lock is held or tried, and a process that dies lets go of it."""

    def __init__(self, path: Path):
        self.path = path
        self.fd: int | None = None

    def acquire(self, blocking: bool) -> bool:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            if os.name == "nt":  # pragma: no cover - no Windows runner here
                import msvcrt

                while True:
                    try:
                        os.lseek(fd, 0, os.SEEK_SET)
                        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
                        break
                    except OSError:
                        if not blocking:
                            os.close(fd)
                            return False
                        time.sleep(0.005)
            else:
                import fcntl

                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
                except BlockingIOError:
                    os.close(fd)
                    return False
        except BaseException:
            os.close(fd)
            raise
        self.fd = fd
        return True

    def release(self) -> None:
        fd, self.fd = self.fd, None
        if fd is None:
            return
        try:
            if os.name == "nt":  # pragma: no cover
                import msvcrt

                os.lseek(fd, 0, os.SEEK_SET)
                msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
        finally:
            os.close(fd)  # (flock: closing the descriptor lets go of the lock)


class _Parts:
    """A rebuild's tantivy writer that commits after each part of its `count` documents, so that
    each part is one segment of at least `size` documents (`count // size` parts, the same size
    each); 2 to 7 such parts become MERGED_PARTS smaller ones, which tantivy's merge policy (a
    level of 8 segments is merged) merges into one segment once the last is committed: at 100k
    items, one segment instead of 5 cuts tantivy's search by ~20% at p50 and search() to 0.93-0.94x
    per query, for 8% more CPU in the rebuild and less anonymous memory (more mapped: the merge
    reads the parts; benchmarks/search/README.md, 2026-12-04). The parts carry no state document
    (the rebuild deleted it): a reader that opens the index meanwhile finds no state and FTS5
    answers, as for an index not built yet; a crash meanwhile leaves no state either, and the next
    catch-up rebuilds."""

    def __init__(self, writer, count: int, size: int):
        self.writer = writer
        self.added = 0
        parts = max(1, count // size)
        if 1 < parts < MERGED_PARTS:
            parts = MERGED_PARTS
        self.ends = {count * k // parts for k in range(1, parts)}

    def add_document(self, doc) -> None:
        self.writer.add_document(doc)
        self.added += 1
        if self.added in self.ends:
            self.writer.commit()


def _best(searcher, query, limit: int) -> list[tuple[int, float, str]]:
    """(item id, score, occurred_at) of the `limit` best items for `query`, best first, equal
    scores by item id, newest first (as FTS5's pool: `ORDER BY bm25, rowid DESC`), whatever the
    index's segments. tantivy orders equal scores by segment, then document, and the order of its
    segments is not the items' (a rebuild in other parts, other commits): so more hits are asked
    for (TIE_FIRST times `limit`), and while the last of them scores as the last one kept, the
    search is widened (TIE_FACTOR, up to TIE_FETCH_MAX hits) until a lower score shows that every
    item of the edge's score is in hand; those are then cut by id. Past TIE_FETCH_MAX hits the
    cut stays tantivy's."""
    hits = to_tie_end(lambda fetch: searcher.search(query, limit=fetch, count=False).hits, limit)
    addresses = [a for _, a in hits]
    ids = searcher.fast_field_values("id", addresses)
    ats = searcher.fast_field_values("at", addresses)
    found = sorted(zip(ids, [score for score, _ in hits], ats), key=_by_score_then_newest)
    return [(i, score, stored_time(at)) for i, score, at in found[:limit]]


def to_tie_end(search, limit: int) -> list:
    """The hits of `search(fetch)` (tantivy's best `fetch` as (score, address), best first) down to
    the last one scoring as the `limit`-th, for a cut at `limit` made by id rather than in tantivy's
    order of equal scores (by segment, then document: the index's build). TIE_FIRST times `limit`
    asked first, then TIE_FACTOR times more while the last hit ties the edge, until a lower score
    shows that every hit of the edge's score is in hand; past TIE_FETCH_MAX hits the tied ones are
    those tantivy gave. (The items pool, _best, and the messages index's cuts.)"""
    if limit <= 0:
        return []
    fetch = max(min(limit * TIE_FIRST, TIE_FETCH_MAX), limit + 1)
    while True:
        hits = search(fetch)
        if len(hits) < fetch or hits[-1][0] != hits[limit - 1][0] or fetch >= TIE_FETCH_MAX:
            break
        fetch = min(fetch * TIE_FACTOR, TIE_FETCH_MAX)
    if len(hits) > limit:
        edge = hits[limit - 1][0]
        end = limit
        while end < len(hits) and hits[end][0] == edge:
            end += 1
        hits = hits[:end]
    return hits


def _by_score_then_newest(hit) -> tuple:
    return -hit[1], -hit[0]


def _overlaps(needle: str) -> bool:
    """Whether two occurrences of `needle` can overlap (a proper prefix of it is also a suffix:
    `ana`, `aaa`): then the next hit is looked for one character on (FTS5 counts overlapping
    hits of a phrase: rare.hits), not past the hit."""
    return any(needle[:k] == needle[-k:] for k in range(1, len(needle)))


# tantivy's error when its reader cannot make `.tantivy-meta.lock` (a read-only mount). tantivy-py
# (0.27) has no way to open an index without it: tantivy's ReadOnlyDirectory and the binding's
# `Index.open_read_only` are open pull requests (quickwit-oss/tantivy#3058, tantivy-py#730).
LOCK_REFUSED = "Failed to acquire Lockfile"


def damaged(e: Exception) -> bool:
    """Whether tantivy's error says the index's files are damaged (DAMAGED)."""
    text = str(e)
    return any(sign in text for sign in DAMAGED)


def _writer_busy(e: ValueError) -> bool:
    """Whether tantivy refused its writer because another one holds the index."""
    return WRITER_BUSY in str(e)


def _settle(pending: list) -> None:
    """Wait for the merges of the tantivy writers in `pending` (see DerivedIndex._apply)."""
    while pending:
        pending.pop().wait_merging_threads()


def _on_fts5_idf(query, total: int, n: int, fts5_n: int | None = None):
    """`query` (one word of `n` documents of `total`, the state document among them) boosted so
    that it scores on FTS5's IDF instead of tantivy's: of `fts5_n` documents when FTS5's count of
    the term is known (ITEMS_SUBSTRING_COUNT) and not below the query's own."""
    ours = math.log(1.0 + (total - n + 0.5) / (n + 0.5))
    return tantivy.Query.boost_query(query, _fts5_idf(total, n if fts5_n is None else max(n, fts5_n)) / ours)


def _fts5_idf(total: int, n: int) -> float:
    """FTS5's bm25() IDF of a term `n` documents of `total` hold (the state document among the
    total, never among the n), floored at 1e-6 as bm25() floors it."""
    theirs = math.log((total - 1 - n + 0.5) / (n + 0.5))
    return theirs if theirs > 0.0 else 1e-6


def _substring_on_fts5_idf(searcher, query, grams: list[str], held: dict[str, int], n: int):
    """A term's trigram query (`query`, of `grams`, each held by `held[gram]` items) boosted so
    that it scores on FTS5's IDF of the `n` items holding the whole substring instead of tantivy's
    phrase IDF (the sum of its trigrams' IDFs), as FTS5's trigram index scores a phrase. `n` is one
    search of the phrase, whose rarest trigram is in at most SUBSTRING_MAX_ROWS items; the caller
    keeps the query per index state."""
    total = searcher.num_docs
    ours = sum(math.log(1.0 + (total - held[g] + 0.5) / (held[g] + 0.5)) for g in grams)
    return tantivy.Query.boost_query(query, _fts5_idf(total, n) / ours)


class TantivyIndex(DerivedIndex):
    """The engine of one library file: its items index (this class) and its messages index
    (`message_index`, messages.py), both kept in step with the library's change log."""

    def __init__(self, library: Path):
        super().__init__(library, folder_for(Path(library)), _schema())
        analyzer = _words_analyzer()
        self.words = Composed(analyzer)
        exact = _exact_analyzer()
        self.exact = Composed(exact)
        self.tokenizers = {_WORDS: analyzer, _EXACT: exact}
        self.pairs = WordPairs(self.words)
        self.use_pairs = True  # the benchmark turns it off to measure what the pairs gain
        # A held word's substring only up to this many items holding it (None: any, as before
        # 2026-12-01; the benchmark sets that to measure the change).
        self.substring_word_rows: int | None = SUBSTRING_WORD_ROWS
        self._messages = None
        self._messages_lock = threading.Lock()
        # (searcher, {(term text, use_pairs, substring_word_rows): its tantivy query or None}): a
        # term's query depends only on the index state (the doc_freqs that choose words, phrase or
        # substring), so it is built once per state (analysis and 5-15 doc_freq calls a term), not
        # once per search.
        self._term_queries: tuple = (None, {})
        self._within: tuple = (None, {})  # _items_within's counts for one index state
        self._fold_for: tuple = (None, None)  # (FTS5 index stats, _rescoring's tokenizer for them)

    @property
    def message_index(self):
        if self._messages is None:
            from jezero_index_tantivy.messages import MessageIndex

            with self._messages_lock:
                if self._messages is None:
                    self._messages = MessageIndex(self.library)
        return self._messages

    def catch_up(self, rebuild: bool = False, limit: int | None = None) -> int:
        """Both indexes brought in step (see DerivedIndex.catch_up); the items written (the
        messages written: `messages_written`)."""
        written = super().catch_up(rebuild, limit)
        self.messages_written = self.message_index.catch_up(rebuild, limit)
        return written

    def _held(self) -> list[DerivedIndex]:
        return [self, self.message_index]

    def condition(self) -> str | None:
        """What `jezero status` says when an index is not in step with the library (damaged, not
        built, built from another library, behind); None when both are in step. Reads only."""
        conn = open_readonly(self.library)
        try:
            head = library_head(conn)
            older = head is None and conn.execute(  # (no meta: an empty file, not a library yet)
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").fetchone() is not None
        finally:
            conn.close()
        if older:  # said nothing, while every search of such a library is FTS5's
            return ("the library predates the change log an index follows (an older schema): fts5 answers "
                    "until `jezero run` upgrades it, and builds the index")
        if head is None:
            return None
        notes, locked = [], []
        for index, what in ((self, "items"), (self.message_index, "messages")):
            try:
                searcher, applied = index._current()
            except ValueError as e:
                if LOCK_REFUSED in str(e):  # a read-only mount: tantivy's reader cannot take its lock file
                    why = re.search(r'message: "([^"]*)"', str(e))
                    locked.append((what, why.group(1) if why else str(e)[:200]))
                    continue
                if not damaged(e):
                    raise
                notes.append(f"its {what} index is damaged: fts5 answers until `jezero run` or `jezero reindex` "
                             "rebuilds it")
                continue
            if searcher is None or applied is None:
                # (never built, or a rebuild interrupted before its last part: the run's sync builds
                # it as `jezero reindex` does)
                notes.append(f"its {what} index is not built: fts5 answers until `jezero run` or `jezero reindex` "
                             "builds it")
            elif applied.library != head.library:
                notes.append(f"its {what} index was built from another library: the next `jezero run` rebuilds it")
            elif applied.seq < head.seq:
                notes.append(f"its {what} index is {head.seq - applied.seq} change(s) behind the library: "
                             "searches catch up, or `jezero reindex --catch-up`")
        if locked:
            whats = " and ".join(w for w, _ in locked)
            notes.insert(0, f"its {whats} index{'es' if len(locked) > 1 else ''} cannot be read here: tantivy's reader "
                            f"must write a lock file in the index folder ({locked[0][1]}), so fts5 answers every search")
        return "; ".join(notes) or None

    def message_matches(self, conn: apsw.Connection, request):
        answer = self.message_index.matches(conn, request)
        if request.order == "per_term" and answer is not None and (
                request.sources is not None or request.source is not None or request.projects is not None
                or request.since is not None or request.before is not None):
            answer.items_within = self._items_within(conn, request)
        return answer

    def _items_within(self, conn: apsw.Connection, request) -> int | None:
        """How many items pass the request's sources, projects and times (the lane's estimate of
        a common word's sessions, jezero.query.fused._common_floors, counts them over the items
        table: an index walk of every such item, ~50 ns each, 1-2.5 ms at 100,000 items), when
        this index's state is exactly the library's head the reader sees (then it holds exactly
        the library's items; the state document has no source, project or time, so any of these
        filters leaves it out); None otherwise."""
        head = library_head(conn)
        searcher = None if head is None else self._in_step(head)
        state, applied = self._state
        if searcher is None or state is not searcher or applied != head:
            return None
        # a function of the state and the filters alone: counted once per state (~0.15 ms at
        # 20,000 items, for every search of a key limited to some sources)
        key = (None if request.sources is None else tuple(request.sources), request.source,
               None if request.projects is None else tuple(request.projects), request.since, request.before)
        kept = self._within
        if kept[0] is not searcher:
            kept = self._within = (searcher, {})
        if key in kept[1]:
            return kept[1][key]
        within = self._count_within(searcher, request)
        if len(kept[1]) < WITHIN_KEPT:
            kept[1][key] = within
        return within

    def _count_within(self, searcher, request) -> int | None:
        filters = source_filters(self.schema, request.sources, request.source)
        if request.projects is not None:
            filters.append(any_term(self.schema, "f_project", request.projects))
        if request.since is not None or request.before is not None:
            filters.append(time_range(self.schema, request.since, request.before))
        if not filters:
            return None
        query = filters[0] if len(filters) == 1 else tantivy.Query.boolean_query(
            [(tantivy.Occur.Must, f) for f in filters])
        return searcher.search(query, limit=1, count=True).count

    def _add_all(self, writer, conn: apsw.Connection) -> int:
        written = 0
        for row in conn.execute(_ITEM_SQL):
            writer.add_document(_document(row, self.pairs))
            written += 1
        return written

    def _replace(self, writer, conn: apsw.Connection, item_id: int) -> int:
        # (by query: a term of a Python int is taken as signed, and misses)
        writer.delete_documents_by_query(tantivy.Query.term_query(self.schema, "id", item_id))
        row = conn.execute(f"{_ITEM_SQL} WHERE id = ?", (item_id,)).fetchone()
        if row is None:
            return 0
        writer.add_document(_document(row, self.pairs))
        return 1

    # -- answering -------------------------------------------------------------------------------

    def candidates(self, conn: apsw.Connection, request: Request) -> list[tuple[int, float, str]] | None:
        searcher = self._searcher_for(conn)
        if searcher is None:
            return None
        query = self._query(searcher, request)
        if query is None:
            return []
        index, tokenizer = self._rescoring(conn) if ITEMS_RESCORE else (None, None)
        limit = request.pool if tokenizer is None else min(request.pool, RESCORE_POOL)
        found = _best(searcher, query, limit)
        if not found:
            return []
        return found if tokenizer is None else self._rescored(conn, request, found, tokenizer, index)

    def _rescoring(self, conn: apsw.Connection):
        """(the FTS5 index's stats, the library's tokenizer) when its items can be re-scored as
        FTS5 scores them (ITEMS_RESCORE): its tokenizer is a case-folding trigram one (a
        rare.folder) and its index holds rows; else (stats, None). The tokenizer is looked up
        once per FTS5 index state (it is the index's own: another one is another index)."""
        index = stats.index_stats(conn)
        kept = self._fold_for
        if kept[0] is index:
            return index, kept[1]
        row = conn.execute("SELECT value FROM meta WHERE key='tokenizer'").fetchone()
        tokenizer = row[0] if row else ""
        fold = rare.folder(*split_tokenizer(tokenizer))
        tokenizer = tokenizer if fold is not None and index.rows else None
        self._fold_for = (index, tokenizer)
        return index, tokenizer

    @staticmethod
    def _rescored(conn: apsw.Connection, request: Request, found: list, tokenizer: str, index=None) -> list:
        """The items tantivy found, each scored by FTS5's bm25 of the query's terms, as
        fts5_aux.c computes it (ITEMS_RESCORE): its five columns read from the library and folded
        as FTS5's trigram tokenizer folds them (`tokenizer`; kept per index state with the items'
        current-first's texts: current.folded_rows), each term counted in each column as FTS5
        counts a phrase's hits (overlaps included), the row's size its folded columns' trigrams
        (what FTS5's docsize table holds), each term's n as FTS5 counts it (jezero.query.stats,
        kept per index state and saved beside the library). An item that holds none of the terms'
        texts (found by a stem alone: FTS5 does not find it) is left out, unless no item holds
        one: then the stems' finds stand, on tantivy's scores. `index`: the FTS5 index's stats, when
        the caller has them."""
        if index is None:
            index = stats.index_stats(conn)
        terms = [t for t in request.terms if t.key]
        needles = [rare.folded(t) for t in terms]
        # each term's text, IDF, and the step to its next hit (1 where two hits can overlap)
        parts = [(needle, bm25.idf(index.rows, stats.exact_count(conn, index, t)),
                  1 if _overlaps(needle) else len(needle))
                 for t, needle in zip(terms, needles) if needle]
        avgdl = index.tokens / index.rows
        k1, b, weights = bm25.K1, bm25.B, bm25.WEIGHTS
        at_of = {i: at for i, _, at in found}
        out = []
        # Its candidates' folded columns, kept with the index state's texts (current.folded_rows:
        # the same rows the items' current-first reads; an item changed since is read again).
        rows = current.folded_rows(conn, list(at_of), tokenizer)
        for rowid in sorted(rows):  # (in id order, as the read of them was)
            row, text = rows[rowid]
            columns = row.text
            size = sum([len(c) - 2 for c in columns if len(c) > 2])
            k = k1 * (1 - b + b * size / avgdl) if avgdl else k1
            relevance = 0.0
            starts = None  # where each column starts in `text`, once a term is found
            for needle, idf, step in parts:
                at = text.find(needle)
                if at < 0:
                    continue
                if starts is None:
                    starts, edge = [], 0
                    for column in columns:
                        starts.append(edge)
                        edge += len(column) + 1
                # each hit weighs its column's weight (a term holds no separator: no hit spans
                # two columns); halves add up exactly, in any order
                f = 0.0
                while at >= 0:
                    f += weights[bisect_right(starts, at) - 1]
                    at = text.find(needle, at + step)
                relevance += idf * ((f * (k1 + 1.0)) / (f + k))
            if relevance > 0.0:
                out.append((rowid, relevance, at_of[rowid]))
        if out:
            return out
        return [hit for hit in found if hit[0] in rows]  # (an item deleted since: search leaves it out)

    def _query(self, searcher, request: Request):
        clauses = []
        cached = self._term_queries
        if cached[0] is not searcher:  # another index state: its doc_freqs may differ
            cached = self._term_queries = (searcher, {})
        built = cached[1]
        for term in request.terms:
            key = (term.text, self.use_pairs, self.substring_word_rows)
            q = built.get(key, _UNBUILT)
            if q is _UNBUILT:
                q = self._term_query(searcher, term.text)
                if len(built) < TERM_QUERIES_KEPT:
                    built[key] = q
            if q is not None:
                clauses += [(tantivy.Occur.Should, part) for part in (q if isinstance(q, tuple) else (q,))]
        if not clauses:
            return None
        text = tantivy.Query.boolean_query(clauses)
        filters = self._filters(request)
        if not filters:
            return text
        return tantivy.Query.boolean_query(
            [(tantivy.Occur.Must, text)] + [(tantivy.Occur.Must, tantivy.Query.const_score_query(f, 0.0))
                                            for f in filters])

    def _term_query(self, searcher, text: str):
        """One term: its words (one word, or a phrase of them, stemmed) and, when its words are
        rare, the term as a substring (a phrase of its trigrams, on FTS5's IDF), the better of the
        two (SUBSTRING_AS_FTS5); only the substring when the index does not hold all its words (a
        fragment, a word no item has)."""
        words = self.words.analyze(text)
        held = [searcher.doc_freq("words", w) for w in words]
        whole = bool(words) and all(held)
        grams = trigrams(text)
        substring = self._substring(searcher, grams, held if whole else None)
        if not whole:
            return None if substring is None else tantivy.Query.boost_query(substring[0], FRAGMENT_WEIGHT)
        wq = (tantivy.Query.term_query(self.schema, "words", words[0]) if len(words) == 1
              else self._phrase(words))
        n = self._substring_count(searcher, grams, substring) if len(words) == 1 else None
        if ITEMS_FTS5_IDF and len(words) == 1:
            wq = _on_fts5_idf(wq, searcher.num_docs, held[0], n)
        if len(words) == 1 and EXACT_WEIGHT:
            wq = self._exact(searcher, text, wq, held[0], n)
        if substring is None:
            return wq
        if isinstance(wq, tuple):
            wq = tantivy.Query.boolean_query([(tantivy.Occur.Should, part) for part in wq])
        q, freqs = substring
        if not SUBSTRING_AS_FTS5:
            tq = tantivy.Query.boost_query(q, SUBSTRING_SUM_WEIGHT)
            return tantivy.Query.boolean_query([(tantivy.Occur.Should, wq), (tantivy.Occur.Should, tq)])
        if n is None:
            n = searcher.search(q, limit=1, count=True).count
        tq = tantivy.Query.boost_query(_substring_on_fts5_idf(searcher, q, grams, freqs, n), SUBSTRING_WEIGHT)
        return tantivy.Query.disjunction_max_query([wq, tq], 0.0)

    def _substring(self, searcher, grams: list[str], held: list[int] | None):
        """The term's trigram query and its trigrams' doc_freqs, when the term is looked up as a
        substring: always for a fragment (`held` None: the words field lacks a word of it), for a
        held word only when that is cheap (SUBSTRING_MIN_GRAMS, SUBSTRING_WORD_ROWS,
        SUBSTRING_MAX_ROWS); else None (also when no item holds one of its trigrams)."""
        if not grams:
            return None
        if held is not None and len(grams) < SUBSTRING_MIN_GRAMS:
            return None
        if held is not None and self.substring_word_rows is not None and max(held) > self.substring_word_rows:
            return None  # the words field answers a word this common (SUBSTRING_WORD_ROWS)
        freqs = {g: searcher.doc_freq("tri", g) for g in set(grams)}
        rarest = min(freqs.values())
        if rarest == 0 or (held is not None and rarest > SUBSTRING_MAX_ROWS):
            return None
        q = (tantivy.Query.term_query(self.schema, "tri", grams[0]) if len(grams) == 1
             else tantivy.Query.phrase_query(self.schema, "tri", grams))
        return q, freqs

    @staticmethod
    def _substring_count(searcher, grams: list[str], substring) -> int | None:
        """How many items hold the term's text, as FTS5 counts it (ITEMS_SUBSTRING_COUNT), when
        that is cheap: a term of one trigram (its list's length), a word whose substring the query
        looks up anyway (one count of the phrase per index state, kept with the term's query);
        else None."""
        if not ITEMS_SUBSTRING_COUNT or not grams:
            return None
        if len(grams) == 1:
            return searcher.doc_freq("tri", grams[0])
        if substring is None or not SUBSTRING_AS_FTS5:
            return None
        return searcher.search(substring[0], limit=1, count=True).count

    def _exact(self, searcher, text: str, stem, stem_n: int, fts5_n: int | None = None):
        """A one-word term's stem query `stem` (in `stem_n` items) weighted 1 - EXACT_WEIGHT, with
        the word itself in the exact field weighted EXACT_WEIGHT (on FTS5's IDF of its own count, or of
        FTS5's count `fts5_n` when known and larger: ITEMS_SUBSTRING_COUNT):
        a tuple of the two, which the query's OR takes as two of its clauses (an OR of term
        queries only, which tantivy prunes by block-max scores; an OR inside it is not pruned).
        When as many items hold the word itself as its stem (no other form of it is said
        anywhere: most words), the stem alone, at full weight: the same score, one list less to
        walk (at 100k items the second clause cost ~20% at p50)."""
        words = self.exact.analyze(text)
        n = searcher.doc_freq("exact", words[0]) if len(words) == 1 else 0
        if n == stem_n:
            return stem
        stem = tantivy.Query.boost_query(stem, 1.0 - EXACT_WEIGHT)
        if not n:
            return stem
        exact = tantivy.Query.term_query(self.schema, "exact", words[0])
        exact = _on_fts5_idf(exact, searcher.num_docs, n, fts5_n) if ITEMS_FTS5_IDF else exact
        return (stem, tantivy.Query.boost_query(exact, EXACT_WEIGHT))

    def _phrase(self, words: list[str]):
        """A phrase of words, filtered by its word pairs (WordPairs), which lets tantivy walk their
        short lists instead of the words' long ones. The filter scores 0: the score stays the
        phrase's."""
        phrase = tantivy.Query.phrase_query(self.schema, "words", words)
        if not self.use_pairs:
            return phrase
        pairs = [tantivy.Query.const_score_query(tantivy.Query.term_query(self.schema, "pairs", p), 0.0)
                 for p in dict.fromkeys(self.pairs.of_stems(words))]
        return tantivy.Query.boolean_query([(tantivy.Occur.Must, q) for q in [phrase, *pairs]])

    def _filters(self, request: Request) -> list:
        out = source_filters(self.schema, request.sources, request.source)
        if request.project is not None:
            out.append(tantivy.Query.term_query(self.schema, "f_project", request.project))
        if request.since is not None:
            out.append(time_range(self.schema, request.since, None))
        return out
