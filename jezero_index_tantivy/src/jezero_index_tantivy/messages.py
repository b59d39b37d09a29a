"""The messages index beside a library: every stored message (the library's `messages` and
`message_texts`, already redacted and bounded) as a tantivy document, for recall and search's
messages lane when `[search] engine = "tantivy"`.

It is a derived index of its own (`library.sqlite3.tantivy-messages-N/`), kept in step by the
same change log as the items index: messages are written, replaced, retagged and deleted with
their item, in the item's transaction, so an item's change number covers its messages too. A
catch-up replaces the messages of each changed item; the state it reached is recorded in the same
tantivy commit.

Analysis is FTS5's `unicode61 remove_diacritics 2` as closely as tantivy's filters give it:
words split on anything but letters and digits, lowercased, accents folded, no stems (recall is
literal; the lane lists a word's other forms itself, as it does with FTS5). A term of several
words is a phrase of them. BM25 is tantivy's (k1 1.2, b 0.75, as FTS5's bm25(); its IDF is
ln(1 + (N - n + 0.5) / (n + 0.5)) where FTS5 takes the log without the 1 +), and the top
matches of a term are found by block-max WAND without scoring every message a common word is in.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from itertools import islice, repeat
from pathlib import Path

import apsw
import tantivy

from jezero.plugin import MessageRequest, library_head
from jezero.query.common import library_sources

try:
    from jezero.plugin import CommonUnread
except ImportError:  # a core before MessageRequest.common_read never asks for it
    CommonUnread = list
from jezero_index_tantivy.index import (Composed, DerivedIndex, any_term, composed, micros, source_filters, time_range,
                                        to_tie_end)

# Bump when the schema or the analysis changes: a new folder is built, the old one is left alone.
# 4: the text composed first (index.Composed).
FORMAT = 4
_WORDS = "jz_message_words"
# Longer tokens are dropped (base64, hashes pasted whole): FTS5 keeps them, but nobody types one
# longer than this, and they would make most of the term dictionary.
MAX_TOKEN = 100
# A reader catches up inline with the messages of at most this many changed items (about 49
# messages each in benchmarks/messages' sessions, indexed at about 25,000 a second of CPU: 0.4 s
# at most); past that the writer, or `jezero reindex`, does it and FTS5 answers meanwhile.
READER_CATCH_UP = 200

# A common term's newest messages (MessageIndex._newest): the id range first searched holds this
# many times the share of the term's messages that should give `limit` of them, and grows this
# many times while it holds fewer (filters, deleted ids).
NEWEST_SLACK = 2
NEWEST_GROWTH = 4
# A block of ids (2^20 ms: 17.5 minutes of messages) for the range of a common term's newest.
BLOCK_BITS = 20
# A common term's newest (MessageIndex._newest) are read three ways, whichever should cost least
# (each gives the same answer): the term's whole list when it is in at most 1/WHOLE_SHARE of the
# messages the id range should hold; a range over the ids' blocks when the range should hold at
# most 1/BLOCK_SHARE of the term's messages (the most common words); else the id range. Measured
# warm, best of 3, on the 315 common words of the 200 load searches (us a search, 100k / 20k
# libraries): the id range alone 1,820 / 635, whole lists alone 14,697 / 2,973, blocks alone
# 4,492 / 2,621, whole at 1/4 else blocks 1,385 / 455, these 1,201 / 420 (1/8 and 1/2:
# 1,219 / 418; 1/32: 1,280 / 415), the best per word 1,078 / 387.
WHOLE_SHARE = 16
BLOCK_SHARE = 2
# ... but with a filter (sources, projects, since), unless WHOLE_FILTERED, the whole list is read
# only when the range would cover every id: the whole list intersected with a key's sources (an OR of long lists) cost
# 959 us a read against 235 us for a range over the blocks; on the 643 newest reads of the 400
# load searches at 20k items (tidied library), 452 -> 378 us a read, the same hits
# (benchmarks/load/README.md, 2026-12-03, `tantivy7`).
WHOLE_FILTERED = False
# The terms' answers kept per index state (_Kept): the last this many terms read (each at most
# the lane's 300 matches, ~45 KB; ~20 MB at most). 0: none is kept.
TERMS_KEPT = 512
# MessageIndex._top: the broad filters are checked on the query's best hits this many times
# deeper than asked, then as many times deeper again while too few pass, up to this depth.
POST_FACTOR = 4
POST_MAX_DEPTH = 5000
# A cut of BM25's best at a limit (MessageIndex._ranked, _per_term) is exact on ties, as the items
# pool's (index._best, with its TIE_FIRST, TIE_FACTOR and TIE_FETCH_MAX): tantivy orders equal
# scores by segment, then document, so the messages tied at the edge are all read (to_tie_end)
# and cut by message id, the way the FTS5 lane cuts them: recall's relevance order lowest id first
# (jezero.query.messages.matches: ORDER BY bm25, id), the lane's per-term best newest first (its
# term_matches reads a term's newest: ORDER BY rowid DESC).
# A term whose words' doc_freq sum is within this many times the cap is counted exactly.
NEAR_CAP = 4
# Texts whose analysis is kept (MessageIndex._words): the alternatives of recent queries' terms.
ANALYZED_KEPT = 4096
# A "per_term" answer's BM25 best (a term in at most the lane's cap of messages: every message
# holding it that passes the filters) re-scored with FTS5's bm25 of the term, as the FTS5 lane
# scores them (jezero.query.messages.term_matches: -bm25(messages_fts) of the term's forms OR-ed),
# so that the lane weighs what tantivy found as on FTS5 (_rescored). tantivy's BM25 takes a
# message's length from a one-byte norm (exact for short messages only), and on
# the padded chats set that moved a session of `how long is the cousin from Ireland staying` from
# first to second (benchmarks/retrieval/README.md, 2026-12-03, `tantivy7`).
MESSAGES_RESCORE = True

# A key's sources as a filter (MessageIndex._narrow): where the index is exactly at the reader's
# state, and the library's other sources hold fewer messages than the key's (their doc_freq), the
# messages of those others are taken out (MustNot) instead of the key's kept in (Must: an OR of
# their long lists): the same messages, since every message's source is one of the library's
# then. On the 369 newest reads of the 400 load searches with the `*-local` key (20k items; it
# reads 2 sources of 6, 65% of the messages), 995 -> 542 us a read, the same hits
# (benchmarks/load/README.md, 2026-12-03, `load8`). False: always the key's sources.
EXCLUDE_OTHERS = True

# Codes ordered so that the usual choices are one range: every role but tool (the default), all.
ROLE_CODES = {"user": 0, "assistant": 1, "system": 2, "tool": 3}

_MESSAGE_SQL = ("SELECT m.id, m.item_id, m.source, m.project, m.role, m.parent_session_id IS NOT NULL, m.at, t.text "
                "FROM messages AS m JOIN message_texts AS t ON t.id = m.id")


def folder_for(library: Path) -> Path:
    return library.with_name(f"{library.name}.tantivy-messages-{FORMAT}")


def _schema() -> tantivy.Schema:
    b = tantivy.SchemaBuilder()
    # Signed integers: a term query of a Python int is taken as signed (an unsigned field misses).
    b.add_integer_field("id", indexed=True, fast=True)
    # The id's block (id >> BLOCK_BITS) as a term, not fast: a range over it reads the postings
    # of the blocks in range (MessageIndex._newest), where a range over `id` reads its column
    # over every message.
    b.add_integer_field("block", indexed=True, fast=False)
    b.add_integer_field("item", indexed=True, fast=True)
    b.add_integer_field("at", indexed=True, fast=True)  # microseconds since 1970
    b.add_text_field("f_source", tokenizer_name="raw", index_option="basic")
    b.add_text_field("f_project", tokenizer_name="raw", index_option="basic")
    # Role and lineage as fast integers: a filter on them is a range checked per candidate, where
    # a term filter intersected its long list (user, assistant and system: most of the messages)
    # with every query's (a common word's search went from 1.8 to 4.8 ms with that filter).
    b.add_integer_field("role", fast=True)  # ROLE_CODES
    b.add_integer_field("sub", fast=True)  # 1: a subagent's session
    b.add_text_field("words", tokenizer_name=_WORDS, index_option="position")
    b.add_text_field("kind", tokenizer_name="raw", index_option="basic")  # "state": the one state document
    b.add_text_field("state", stored=True)
    return b.build()


def words_analyzer() -> tantivy.TextAnalyzer:
    return (tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple()).filter(tantivy.Filter.remove_long(MAX_TOKEN))
            .filter(tantivy.Filter.lowercase()).filter(tantivy.Filter.ascii_fold()).build())


def _document(row) -> tantivy.Document:
    message_id, item_id, source, project, role, sub, at, text = row
    doc = tantivy.Document()
    doc.add_integer("id", message_id)
    doc.add_integer("block", message_id >> BLOCK_BITS)
    doc.add_integer("item", item_id)
    doc.add_integer("at", micros(at))
    doc.add_text("f_source", source)
    if project is not None:
        doc.add_text("f_project", project)
    doc.add_integer("role", ROLE_CODES.get(role, ROLE_CODES["system"]))
    doc.add_integer("sub", 1 if sub else 0)
    doc.add_text("words", composed(text))
    return doc


class PerTerm(list):
    """A "per_term" answer. `sessions`, when the index's state is exactly the library's head the
    reader sees (not a state before it, nor after), is the item -> (source, session id) map kept
    for that state: the caller may read the items its matches name from it and add those it read
    from the library (jezero.query.messages.engine_term_matches). An item's source and session
    never change (its uid holds them), and at that state the index holds exactly the library's
    items, so the map cannot name an item the reader's library lacks; a new state (any write)
    starts a new map."""

    sessions: dict | None = None
    # how many items pass the request's sources, projects and times, when the items index's state
    # is exactly that head too (TantivyIndex._items_within); None: not known
    items_within: int | None = None


class Ranked(list):
    """A term's best messages by BM25 in a "per_term" answer; `held`: how many messages hold the
    term before the filters, as FTS5 counts it (the n of the IDF in their scores)."""

    held: int | None = None


class NewestHits(list):
    """A common term's newest in a "per_term" answer, (message id, item id, None) each; also as
    the two columns `ids` and `items` (the caller reads them whole:
    jezero.query.messages.engine_term_matches)."""

    ids: list
    items: list


_UNKEPT = object()


class _Unread:
    """A term's hits whose fast fields are read with every other term's of the request
    (MessageIndex._read_fields): `newest`, ordered by id (each hit holds its id); `forms`, the
    term's FTS5 expression when its BM25 best are to be re-scored (MESSAGES_RESCORE)."""

    __slots__ = ("hits", "newest", "held", "forms", "limit")

    def __init__(self, hits: list, newest: bool, limit: int | None = None):
        # `limit`: BM25's best hold the whole tie at their edge (to_tie_end), cut by id once read
        self.hits, self.newest, self.held, self.forms, self.limit = hits, newest, None, None, limit


class _Kept:
    """What the messages index keeps for one of its states (a searcher, which never changes):
    the items' sessions (PerTerm.sessions) and the last TERMS_KEPT terms' answers ("per_term",
    keyed by the term's alternatives and every field of the request that shapes its answer). A
    term's answer is a function of the state alone: its BM25 best come from the searcher, and
    its newest are its `limit` highest ids passing the filters, however _newest bounds the
    search. The answers are shared: read only."""

    def __init__(self, searcher):
        self.searcher = searcher
        self.sessions: dict = {}
        self.terms: OrderedDict = OrderedDict()
        self.lock = threading.Lock()
        self.sources: tuple | None = None  # (the library's head, its sources there): _library_sources

    def term(self, key):
        if not TERMS_KEPT:
            return _UNKEPT
        with self.lock:
            found = self.terms.get(key, _UNKEPT)
            if found is not _UNKEPT:
                self.terms.move_to_end(key)
            return found

    def keep(self, key, found) -> None:
        if not TERMS_KEPT:
            return
        with self.lock:
            self.terms[key] = found
            while len(self.terms) > TERMS_KEPT:
                self.terms.popitem(last=False)


class MessageIndex(DerivedIndex):
    """The messages of one library file, kept in step with its change log."""

    # A rebuild in one commit with tantivy's threads: messages are many (~49 an item) and small,
    # and the writer's heap already makes segments of many thousands of them.
    rebuild_part = None

    @property
    def reader_catch_up(self) -> int:
        return READER_CATCH_UP

    def __init__(self, library: Path):
        library = Path(library)
        super().__init__(library, folder_for(library), _schema())
        analyzer = words_analyzer()
        self.words = Composed(analyzer)
        self.tokenizers = {_WORDS: analyzer}
        self._kept = _Kept(None)
        self._analyzed: dict[str, list[str]] = {}

    def _words(self, text: str) -> list[str]:
        """A term's words as the index holds them (the analysis is a function of the text alone;
        a term's alternatives were analysed 3-4 times per request: _costly, _held, _term_query,
        _on_fts5_idf). Shared: read only."""
        words = self._analyzed.get(text)
        if words is None:
            if len(self._analyzed) >= ANALYZED_KEPT:
                self._analyzed.clear()
            words = self._analyzed[text] = self.words.analyze(text)
        return words

    def _add_all(self, writer, conn: apsw.Connection) -> int:
        written = 0
        for row in conn.execute(_MESSAGE_SQL):
            writer.add_document(_document(row))
            written += 1
        return written

    def _replace(self, writer, conn: apsw.Connection, item_id: int) -> int:
        writer.delete_documents_by_query(tantivy.Query.term_query(self.schema, "item", item_id))
        written = 0
        for row in conn.execute(f"{_MESSAGE_SQL} WHERE m.item_id = ?", (item_id,)):
            writer.add_document(_document(row))
            written += 1
        return written

    # -- answering -------------------------------------------------------------------------------

    def matches(self, conn: apsw.Connection, request: MessageRequest) -> list | None:
        head = library_head(conn)
        searcher = None if head is None else self._in_step(head)
        if searcher is None:
            return None
        if request.order == "per_term":
            out = PerTerm()
            kept = self._kept_for(searcher)
            state, applied = self._state
            exact = state is searcher and applied == head
            if exact:
                out.sessions = kept.sessions
            # the key's sources, or the library's others taken out (EXCLUDE_OTHERS: exact only)
            narrow = self._narrow(request, self._others(searcher, conn, kept, head, request) if exact else None)
            filters = narrow + self._broad(request)
            # FTS5's scores are the reader's library's: only where the index's state is exactly
            # that (kept apart from tantivy's own scores, which a state before or after it gets)
            rescore = exact and MESSAGES_RESCORE and _fts5_holds_messages(conn)
            bounds: list = []  # the library's message id range, read once (_newest)
            asked = (request.sources, request.source, request.projects, request.roles, request.subagents,
                     request.since, request.before, request.limit, request.phrase_rows, request.common_rows,
                     getattr(request, "common_read", True), rescore)
            unread: list = []  # (its place, its key, _Unread): the terms whose hits' fields are still to read
            for alternatives in request.terms:
                key = (alternatives, asked)
                found = kept.term(key)
                if found is _UNKEPT:
                    found = self._one_term(searcher, conn, alternatives, request, filters, bounds, rescore, narrow)
                    if isinstance(found, _Unread):
                        unread.append((len(out), key, found))
                    else:
                        kept.keep(key, found)
                out.append(found)
            if unread:
                self._read_fields(searcher, conn, out, kept, unread)
            return out
        filters = self._filters(request)
        terms = [self._term_query(alternatives) for alternatives in request.terms]
        kept = [q for q in terms if q is not None]
        if not kept:
            return []
        query = tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in kept])
        if request.order == "relevance":
            found = self._ranked(searcher, query, request)
        else:
            found = self._by_time(searcher, _with_filters(query, filters), request.limit, request.order == "newest")
        return self._masks(searcher, found, terms)

    def _read_fields(self, searcher, conn: apsw.Connection, out: list, kept: _Kept, unread: list) -> None:
        """The items of every term's hits (and the ids of BM25's best: the newest come with
        theirs), one fast field read each for the whole request, into `out` and what is kept
        (BM25's best re-scored by FTS5 where asked: _rescored). A read costs about 200 us at 4.9
        million messages whatever the hits (the index's segments' columns; 43 us at 980,000), once
        per term before (1.6 a search of the load benchmark's)."""
        items = iter(searcher.fast_field_values("item", [a for _, _, u in unread for _, a in u.hits]))
        best = [a for _, _, u in unread if not u.newest for _, a in u.hits]
        ids = iter(searcher.fast_field_values("id", best) if best else ())
        for slot, key, u in unread:
            held = list(islice(items, len(u.hits)))
            if u.newest:  # ordered by `id`, each hit came with its id
                mids = [mid for mid, _ in u.hits]
                found = NewestHits(zip(mids, held, repeat(None)))
                found.ids, found.items = mids, held
            else:
                found = Ranked(zip(islice(ids, len(u.hits)), held, (score for score, _ in u.hits)))
                # equal scores newest first, whatever order tantivy's segments gave (to_tie_end)
                found.sort(key=_by_score_then_newest)
                if u.limit is not None:
                    del found[u.limit:]
                if u.forms is not None:
                    found = _rescored(conn, u.forms, found)
                found.held = u.held
            out[slot] = found
            kept.keep(key, found)

    def _kept_for(self, searcher) -> _Kept:
        """What is kept for this index state (a searcher: another state starts over)."""
        kept = self._kept
        if kept.searcher is not searcher:  # another state: its items and its matches may differ
            kept = self._kept = _Kept(searcher)
        return kept

    def _one_term(self, searcher, conn, alternatives: tuple[str, ...], request: MessageRequest, filters: list,
                  bounds: list, rescore: bool = False, narrow: list | None = None):
        """One term of a "per_term" request: None (a costly phrase), or its matches (BM25's best
        to be re-scored by FTS5 when `rescore`: MESSAGES_RESCORE). `filters`: the request's
        (`narrow`: its sources, source and projects alone), as _filters gives them or with the
        library's other sources taken out (_others)."""
        if request.phrase_rows is not None and self._costly(searcher, alternatives, request.phrase_rows):
            return None
        q = self._term_query(alternatives)
        if q is None:
            return []
        held = self._held(searcher, q, alternatives, request.common_rows)
        if request.common_rows is not None and held > request.common_rows:
            if not getattr(request, "common_read", True):  # the caller needs to know it is common, no more
                return CommonUnread()
            return self._newest(searcher, conn, q, filters, request.limit, held, bounds,
                                self._narrow_share(searcher, request))
        found = self._per_term(searcher, self._on_fts5_idf(searcher, alternatives), request, request.limit, narrow)
        if not found:
            found = Ranked()
        # Every message holding the term, before the filters (FTS5's count for the lane: the IDF
        # its bm25 used, which the lane replaces by the IDF over sessions); exact: a message
        # holding two forms counts once, a phrase counts its matches.
        found.held = (held if len(alternatives) == 1 and held else
                      searcher.search(q, limit=1, count=True).count)
        if rescore and found and found.held <= request.limit:  # (FTS5 scores every message holding it)
            found.forms = self._fts5_expression(searcher, alternatives)
        return found

    def _top(self, searcher, query, request: MessageRequest, limit: int, must: list | None = None) -> list:
        """The `limit` best hits of `query` that pass the request's filters, exactly as a search
        with the filters inside would give them, but cheaper. A filter inside the query keeps
        tantivy from pruning by block-max scores (a common word's top 50 took 4 ms with the
        default filter, no tools and no subagents, against 0.9 ms without): the broad filters
        (role, subagents, time) are therefore checked on the best hits of the query without
        them, taken POST_FACTOR times deeper while too few pass, which gives the same hits: any
        passing hit past the depth read ranks below every one before it. Past POST_MAX_DEPTH
        (a filter that passes few), the filters go inside the query. `must`: the narrow filters
        when already made (_one_term's), else _filters'."""
        if must is None:
            must = self._filters(request, broad=False)
        broad = self._filters(request, broad=True)
        if not broad:
            return searcher.search(_with_filters(query, must), limit=limit, count=False).hits
        inner = _with_filters(query, must)
        depth = limit * POST_FACTOR
        while depth <= POST_MAX_DEPTH:
            hits = searcher.search(inner, limit=depth, count=False).hits
            passing = self._passing(searcher, hits, request)
            if len(passing) >= limit or len(hits) < depth:
                return passing[:limit]
            depth *= POST_FACTOR
        return searcher.search(_with_filters(query, must + broad), limit=limit, count=False).hits

    def _ranked(self, searcher, query, request: MessageRequest) -> list[tuple[int, float]]:
        """_top's hits as (message id, score), best first and equal scores by id, lowest first (FTS5's
        ORDER BY bm25, id), whatever the index's segments (to_tie_end)."""
        limit = request.limit
        hits = to_tie_end(lambda depth: self._top(searcher, query, request, depth), limit)
        ids = searcher.fast_field_values("id", [a for _, a in hits])
        found = sorted(((mid, score) for (score, _), mid in zip(hits, ids)), key=lambda f: (-f[1], f[0]))
        return found[:limit]

    def _passing(self, searcher, hits: list, request: MessageRequest) -> list:
        """The hits that pass the request's role, subagent and time filters (read from fast fields)."""
        addresses = [a for _, a in hits]
        ok = [True] * len(hits)
        if request.roles is not None:
            codes = {ROLE_CODES[r] for r in request.roles if r in ROLE_CODES}
            ok = [k and r in codes for k, r in zip(ok, searcher.fast_field_values("role", addresses))]
        if not request.subagents:
            ok = [k and not s for k, s in zip(ok, searcher.fast_field_values("sub", addresses))]
        if request.since is not None or request.before is not None:
            low = micros(request.since) if request.since is not None else None
            high = micros(request.before) if request.before is not None else None
            ok = [k and (low is None or at >= low) and (high is None or at < high)
                  for k, at in zip(ok, searcher.fast_field_values("at", addresses))]
        return [h for h, k in zip(hits, ok) if k]

    def _term_query(self, alternatives: tuple[str, ...]):
        """A term: any of its alternatives, each a word or a phrase of words (scores add up, as
        FTS5's bm25 of `a OR b` does)."""
        parts = []
        for text in alternatives:
            words = self._words(text)
            if not words:
                continue
            parts.append(tantivy.Query.term_query(self.schema, "words", words[0]) if len(words) == 1
                         else tantivy.Query.phrase_query(self.schema, "words", words))
        if not parts:
            return None
        return parts[0] if len(parts) == 1 else tantivy.Query.boolean_query(
            [(tantivy.Occur.Should, q) for q in parts])

    def _on_fts5_idf(self, searcher, alternatives: tuple[str, ...]):
        """_term_query with each alternative's score on FTS5's IDF (bm25(): log((N - n + 0.5) /
        (n + 0.5)), floored at 1e-6; a phrase's n is its own matches) instead of tantivy's (ln(1 +
        the same ratio); a phrase's, the sum of its words'), as the FTS5 lane scores them: the lane
        replaces that IDF by the term's IDF over sessions (fused._by_sessions divides by FTS5's),
        so with tantivy's a word in 5-10% of the messages weighed 2-5% more than on FTS5, and in
        a small library up to several times more. A boost per alternative keeps the scores exact
        (a sum over the forms, as FTS5's bm25 of `a OR b`); for a term read by BM25 only (at most
        the lane's cap of messages: block-max pruning has nothing to cut there)."""
        total = searcher.num_docs  # (the state document is no message: FTS5's N is one less)
        parts = []
        for text in alternatives:
            words = self._words(text)
            if not words:
                continue
            if len(words) == 1:
                q = tantivy.Query.term_query(self.schema, "words", words[0])
                n = searcher.doc_freq("words", words[0])
                ours = _tantivy_idf(total, [n])
            else:
                q = tantivy.Query.phrase_query(self.schema, "words", words)
                n = searcher.search(q, limit=1, count=True).count
                ours = _tantivy_idf(total, [searcher.doc_freq("words", w) for w in words])
            if n:
                q = tantivy.Query.boost_query(q, _fts5_idf(total - 1, n) / ours)
            parts.append(q)
        if not parts:
            return None
        return parts[0] if len(parts) == 1 else tantivy.Query.boolean_query(
            [(tantivy.Occur.Should, q) for q in parts])

    def _fts5_expression(self, searcher, alternatives: tuple[str, ...]) -> str:
        """The term as the FTS5 lane matches it (jezero.query.messages.lane_expression: its
        alternatives quoted, OR-ed), less the words no message holds: such a phrase adds nothing
        to any message's bm25 (no hit), but FTS5 looks each one up (~25 us)."""
        held = [text for text in alternatives
                if len(words := self._words(text)) != 1 or searcher.doc_freq("words", words[0])]
        return " OR ".join('"' + text.replace('"', '""') + '"' for text in held or alternatives[:1])

    def _costly(self, searcher, alternatives: tuple[str, ...], rows: int) -> bool:
        """Whether this term is read only as phrases whose words are in more than `rows` messages
        together (doc_freq: exact and cheap here, where FTS5 walks each word's list to count)."""
        phrases = [self._words(text) for text in alternatives]
        if not phrases or any(len(words) < 2 for words in phrases):
            return False
        return all(sum(searcher.doc_freq("words", w) for w in words) > rows for words in phrases)

    def _held(self, searcher, query, alternatives: tuple[str, ...], cap: int | None) -> int:
        """How many messages hold the term, before the filters (as the FTS5 lane counts): its
        words' doc_freq summed (a message holding two forms counts twice), counted exactly when
        that sum is near `cap`. A term of phrases only is not counted (0)."""
        held = 0
        for text in alternatives:
            words = self._words(text)
            if len(words) == 1:
                held += searcher.doc_freq("words", words[0])
        if cap is not None and cap < held <= NEAR_CAP * cap:
            held = searcher.search(query, limit=1, count=True).count
        return held

    def _per_term(self, searcher, query, request: MessageRequest, limit: int, narrow: list | None = None):
        """The term's `limit` best messages by BM25 that pass the filters, to be read as (message
        id, item id, score) (_Unread, _read_fields)."""
        hits = to_tie_end(lambda depth: self._top(searcher, query, request, depth, narrow), limit)
        return _Unread(hits, False, limit) if hits else []

    def _narrow_share(self, searcher, request: MessageRequest) -> float:
        """About the share of the messages that pass the request's sources and projects (each
        filter's terms' doc_freq over the messages, multiplied; 1.0 without them)."""
        share = 1.0
        total = max(searcher.num_docs, 1)
        source = (request.source,) if request.source is not None else None
        for field, values in (("f_source", request.sources), ("f_source", source), ("f_project", request.projects)):
            if values is not None:
                share *= min(1.0, sum(searcher.doc_freq(field, v) for v in dict.fromkeys(values)) / total)
        return share

    def _newest(self, searcher, conn, query, filters, limit: int, held: int, bounds: list | None = None,
                share: float = 1.0):
        """A common term's `limit` newest messages that pass the filters, to be read as (message
        id, item id, None) (_Unread, _read_fields) (highest ids first, as
        FTS5's `ORDER BY rowid DESC LIMIT`: message ids follow the messages' time,
        jezero.store.messages.time_id), score None (the caller scores them alike). Ordering
        the whole list by id costs as much as ranking it (2-3 ms for a word in a third of 490,000
        messages); the newest lie in the last ids, so the search is bounded to an id range that
        should hold `limit` of them (from the term's share of the messages, spread over the ids
        in use), widened until it does or covers every id: 0.3 ms.

        The bound is a range over the `id` fast field, or for the most common words over the
        ids' blocks (`block`, an indexed term: its postings, where a range over `id` reads that
        column; BLOCK_SHARE); a block below `low` holds ids under it, which changes nothing
        (the hits are still the highest ids). The term's list is read whole instead when it is
        short next to the range and no filter applies (WHOLE_SHARE), or the range would cover
        every id.
        Either way the answer is the term's `limit` highest ids that pass the filters. `bounds`:
        the library's (max id, min id), read here once per request. `share`: about the share of
        the term's messages the sources and projects let pass (_narrow_share): the first range is
        that much wider, where it was widened NEWEST_GROWTH times for a filter passing a third
        (a search more, each reading the filter's long list)."""
        if not bounds:
            # two subqueries: SQLite reads max() or min() alone from the end of the rowid B-tree,
            # but both in one SELECT scan the whole table (60 ms at a million messages)
            found = conn.execute("SELECT (SELECT max(id) FROM messages), (SELECT min(id) FROM messages)").fetchone()
            if bounds is None:
                bounds = []
            bounds[:] = found
        top, bottom = bounds
        if top is None:
            return []
        total = max(searcher.num_docs, 1)
        spread = max(top - bottom + 1, total)  # ids per message: 1 when numbered densely
        span = max(int(NEWEST_SLACK * limit * spread / max(held * share, 1)), limit)
        while True:
            low = top - span
            holds = total * span / spread  # about how many messages the range holds
            whole = low <= bottom or ((WHOLE_FILTERED or not filters) and held * WHOLE_SHARE <= holds)
            if whole:
                bounded = query
            else:
                blocks = holds * BLOCK_SHARE <= held
                field, bound = ("block", low >> BLOCK_BITS) if blocks else ("id", low)
                bounded = tantivy.Query.boolean_query([
                    (tantivy.Occur.Must, query),
                    (tantivy.Occur.Must, tantivy.Query.range_query(self.schema, field, tantivy.FieldType.Integer,
                                                                   lower_bound=bound, upper_bound=None))])
            hits = searcher.search(_with_filters(bounded, filters), limit=limit, count=False, order_by_field="id",
                                   order=tantivy.Order.Desc).hits
            if len(hits) >= limit or whole:
                break
            span *= NEWEST_GROWTH
        # ordered by `id`, each hit comes with its id: only the items are read from the column
        return _Unread(hits, True) if hits else []

    def _by_time(self, searcher, query, limit: int, newest: bool) -> list[tuple[int, float]]:
        """The first `limit` matches in time order, ties in message id order the same way (as
        FTS5's `ORDER BY m.at DESC, m.id DESC`): the matches at the last time taken are all read
        and ordered by id, since tantivy orders by one field."""
        order = tantivy.Order.Desc if newest else tantivy.Order.Asc
        hits = searcher.search(query, limit=limit, count=False, order_by_field="at", order=order).hits
        if not hits:
            return []
        addresses = [a for _, a in hits]
        rows = list(zip(searcher.fast_field_values("at", addresses), searcher.fast_field_values("id", addresses)))
        edge = rows[-1][0]
        rows = [r for r in rows if r[0] != edge]
        at_edge = tantivy.Query.boolean_query([
            (tantivy.Occur.Must, query),
            (tantivy.Occur.Must, tantivy.Query.range_query(self.schema, "at", tantivy.FieldType.Integer,
                                                           lower_bound=edge, upper_bound=edge))])
        tied = searcher.search(at_edge, limit=1, count=True).count
        tied_hits = searcher.search(at_edge, limit=max(tied, 1), count=False).hits
        rows += [(edge, mid) for mid in searcher.fast_field_values("id", [a for _, a in tied_hits])]
        rows.sort(key=lambda r: r, reverse=newest)
        return [(mid, 0.0) for _, mid in rows[:limit]]

    def _masks(self, searcher, found: list[tuple[int, float]], terms: list) -> list[tuple[int, float, int]]:
        """Which terms each found message holds (a bit per term, in the request's order): each
        term's query restricted to the found ids."""
        if not found:
            return []
        masks = dict.fromkeys((mid for mid, _ in found), 0)
        ids = tantivy.Query.term_set_query(self.schema, "id", list(masks))
        for bit, q in enumerate(terms):
            if q is None:
                continue
            query = tantivy.Query.boolean_query([(tantivy.Occur.Must, q), (tantivy.Occur.Must, ids)])
            hits = searcher.search(query, limit=len(masks), count=False).hits
            for mid in searcher.fast_field_values("id", [a for _, a in hits]):
                masks[mid] |= 1 << bit
        return [(mid, score, masks[mid]) for mid, score in found]

    def _filters(self, request: MessageRequest, broad: bool | None = None) -> list:
        """The request's filters as queries: all of them (`broad` None), or only the broad ones
        (role, subagents, time: True) or only the others (sources, source, projects: False)."""
        out = []
        if broad is not True:
            out += self._narrow(request)
        if broad is False:
            return out
        out += self._broad(request)
        return out

    def _narrow(self, request: MessageRequest, others: list[str] | None = None) -> list:
        """The sources, source and projects filters; with `others` (_others), the key's sources
        as the library's other sources taken out."""
        if others is None:
            out = source_filters(self.schema, request.sources, request.source)
        else:
            out = [_Unless([tantivy.Query.term_query(self.schema, "f_source", s) for s in others])]
            out += source_filters(self.schema, None, request.source)
        if request.projects is not None:
            out.append(any_term(self.schema, "f_project", request.projects))
        return out

    def _others(self, searcher, conn: apsw.Connection, kept: "_Kept", head, request: MessageRequest
                ) -> list[str] | None:
        """The library's sources other than the key's, when taking their messages out is the
        cheaper filter (EXCLUDE_OTHERS: they hold fewer messages, by doc_freq); else None. Only
        for an index exactly at the reader's state `head`: every message it holds is then of a
        source of the library's at that state (a message has its item's source, and is written and
        removed with it), so what the others leave is what the key's sources keep."""
        if not EXCLUDE_OTHERS or not request.sources:
            return None
        library = _library_sources(conn, kept, head)
        if library is None:
            return None
        allowed = set(request.sources)
        others = [s for s in library if s not in allowed]
        held = lambda names: sum(searcher.doc_freq("f_source", s) for s in names)  # noqa: E731
        return others if held(others) < held(dict.fromkeys(request.sources)) else None

    def _broad(self, request: MessageRequest) -> list:
        out = []
        if request.roles is not None:
            out.append(self._codes("role", sorted(ROLE_CODES[r] for r in request.roles if r in ROLE_CODES)))
        if not request.subagents:
            out.append(self._codes("sub", [0]))
        if request.since is not None or request.before is not None:
            out.append(time_range(self.schema, request.since, request.before))
        return out


    def _codes(self, field: str, codes: list[int]):
        """A fast field's value among `codes`: one range per run of consecutive codes."""
        runs: list[list[int]] = []
        for c in codes:
            if runs and c == runs[-1][1] + 1:
                runs[-1][1] = c
            else:
                runs.append([c, c])
        ranges = [tantivy.Query.range_query(self.schema, field, tantivy.FieldType.Integer, lower_bound=lo,
                                            upper_bound=hi) for lo, hi in runs]
        if not ranges:
            return tantivy.Query.empty_query()
        return ranges[0] if len(ranges) == 1 else tantivy.Query.boolean_query(
            [(tantivy.Occur.Should, q) for q in ranges])


class _Unless(list):
    """A filter of term queries whose documents are taken out (MustNot), for _with_filters."""


def _library_sources(conn: apsw.Connection, kept: "_Kept", head) -> list[str] | None:
    """The library's distinct sources at its state `head` (library_head's), or None when the
    library `conn` reads is no longer there: read between two reads of the head (every write adds
    a change, so the same head on both sides is one state), and kept for the index state (`kept`:
    the same head is the same items)."""
    known = kept.sources
    if known is not None and known[0] == head:
        return known[1]
    if library_head(conn) != head:
        return None
    sources = library_sources(conn)
    if library_head(conn) != head:
        return None
    kept.sources = (head, sources)
    return sources


def _fts5_holds_messages(conn: apsw.Connection) -> bool:
    """Whether the library's FTS5 messages index holds messages, from what the library records
    itself (not FTS5's own tables): its schema has the index (`messages_fts`, made with the
    messages table, jezero.store.messages.create) and its `messages` table a row. Every message
    is written into the index in its item's transaction, and removed from it with the message
    (jezero.store.messages.replace, remove; a migration's rebuild in its own), so the index holds
    messages exactly when the table does."""
    try:
        row = conn.execute("SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'messages_fts') "
                           "AND EXISTS (SELECT 1 FROM messages)").fetchone()
    except apsw.SQLError:  # no messages table
        return False
    return bool(row and row[0])


def _rescored(conn: apsw.Connection, expression: str, found: Ranked) -> Ranked:
    """A term's BM25 best (message id, item id, score), each scored instead by FTS5's bm25 of the
    term's `expression`, as the FTS5 lane scores it (MESSAGES_RESCORE), best first and equal
    scores newest first (as the FTS5 lane reads them: whatever order tantivy stored them in). FTS5 scores every message holding the term (at most the lane's cap: the term
    was read by BM25, not at its newest). A message FTS5 does not match (the analyses differ:
    tantivy folds `straße` to `strasse`, FTS5 keeps it) is left out, as the FTS5 lane would not
    have it, unless FTS5 matches none of them: then tantivy's scores stand."""
    scores = dict(conn.execute("SELECT rowid, -bm25(messages_fts) FROM messages_fts WHERE messages_fts MATCH ?",
                               (expression,)))
    out = Ranked((mid, item, scores[mid]) for mid, item, _ in found if mid in scores)
    if not out:
        return found
    out.sort(key=lambda f: (-f[2], -f[0]))
    return out


def _fts5_idf(rows: int, n: int) -> float:
    """FTS5's bm25() IDF (jezero.query.bm25.idf)."""
    value = math.log((rows - n + 0.5) / (n + 0.5))
    return value if value > 0.0 else 1e-6


def _tantivy_idf(rows: int, doc_freqs: list[int]) -> float:
    """tantivy's BM25 IDF of a term (one doc_freq) or a phrase (its words', summed)."""
    return sum(math.log(1.0 + (rows - n + 0.5) / (n + 0.5)) for n in doc_freqs)


def _by_score_then_newest(found) -> tuple:
    """A term's best (message id, item id, score): best first, equal scores newest first."""
    return -found[2], -found[0]


def _with_filters(query, filters: list):
    if not filters:
        return query
    clauses = [(tantivy.Occur.Must, query)]
    for f in filters:
        if isinstance(f, _Unless):
            clauses += [(tantivy.Occur.MustNot, q) for q in f]
        else:
            clauses.append((tantivy.Occur.Must, tantivy.Query.const_score_query(f, 0.0)))
    return tantivy.Query.boolean_query(clauses)
