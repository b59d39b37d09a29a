"""The messages layer ranked in PostgreSQL: recall and search's messages lane on this backend.

The rows (`messages`, `message_texts`) are the SQLite library's. What FTS5's `messages_fts` is
there, `messages_search` is here (migration 2): each message's words exactly as FTS5's messages
tokenizer (`unicode61 remove_diacritics 2`, jezero.store.messages) reads them, tokenized by that
very tokenizer (SQLite's, in memory) when the message is written, and stored as a tsvector of
those words and their positions, with the message's length in tokens. A GIN index finds a word,
or a phrase of words (`<->`: the words in a row, as FTS5 matches `fs.inotify.max_user_watches`),
without PostgreSQL's own parser ever splitting the text: the same words match on both backends,
whole words only, case and accents folded.

Ranking is FTS5's bm25(), computed the same way: for each phrase of the query, its hits in the
message (from the stored positions of the query's words: `ts_filter` keeps only those), the
message's length against the average (`messages_totals`: rows and tokens per item, so nothing
a write touches is one row every write updates), and the phrase's IDF over every message, its
rows counted up to half the messages (at half or more FTS5 floors the IDF, so the count is exact
where it matters). The same placing rules run above it (jezero.query.messages, recall.py,
query/fused/): a recall term in more than RANK_CAP messages is ranked among its newest RANK_CAP, as
on FTS5; the lane reads a common word at its newest LANE_MAX_ROWS, scored alike, and leaves out
a phrase of common words. Filters apply in the same SQL, before the cut. The only difference
from FTS5 is the floating-point order of bm25's sums, and a word repeated more than 255 times in
one message counting as 255 (tsvector's limit: bm25 has long saturated by then).

The query layer reaches this through the reader's Ranker (search.py inherits MessageRanking):
`message_matches` answers the same requests a derived index engine does (jezero.store.engines
MessageRequest), `message_rows` gives N for the lane's IDFs, `message_projects` recall's
discovery, `boolean_matches` recall's boolean mode (FTS5's expression language, checked by FTS5
itself in memory and translated to a tsquery).
"""

from __future__ import annotations

import re
import threading
from contextlib import contextmanager

import apsw

from jezero.query import bm25
from jezero.store.messages import MESSAGES_TOKENIZER

# tsvector's limits: a lexeme under 2,048 bytes (longer tokens are pastes nobody types: left out
# of the index, still counted in the length), at most 255 positions kept per lexeme.
MAX_LEXEME_BYTES = 2000
MAX_POSITIONS = 255
MAX_POSITION = 16383

_local = threading.local()


def _tokenizer():
    tok = getattr(_local, "tokenizer", None)
    if tok is None:
        conn = apsw.Connection(":memory:")
        name, *args = MESSAGES_TOKENIZER.split()
        tok = conn.fts5_tokenizer(name, args)
        _local.conn, _local.tokenizer = conn, tok
    return tok


def tokens(text: str, query: bool = False) -> list[str]:
    """The words FTS5's messages tokenizer reads in `text`, in order."""
    flags = apsw.FTS5_TOKENIZE_QUERY if query else apsw.FTS5_TOKENIZE_DOCUMENT
    return list(_tokenizer()(text.encode("utf-8", "replace"), flags, None, include_offsets=False,
                             include_colocated=False))


def _quote(lexeme: str) -> str:
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def tsvector_text(words: list[str]) -> str:
    """The tsvector literal of these words at their positions (1-based)."""
    positions: dict[str, list[int]] = {}
    for i, w in enumerate(words, start=1):
        if len(w.encode("utf-8")) > MAX_LEXEME_BYTES:
            continue
        kept = positions.setdefault(w, [])
        if len(kept) < MAX_POSITIONS:
            kept.append(min(i, MAX_POSITION))
    return " ".join(f"{_quote(w)}:{','.join(map(str, dict.fromkeys(p)))}" for w, p in positions.items())


def index(db, item_id: int, rows: list[tuple[int, str]]) -> None:
    """Index an item's messages, (message id, text) each, just written in the item's transaction
    (its earlier messages, and so their rows here, were deleted first)."""
    total = 0
    for message_id, text in rows:
        words = tokens(text)
        total += len(words)
        db.execute("INSERT INTO messages_search(id, words, length) VALUES(?, ?::tsvector, ?)",
                   (message_id, tsvector_text(words), len(words)))
    db.execute("INSERT INTO messages_totals(item_id, rows, tokens) VALUES(?, ?, ?) ON CONFLICT(item_id) DO UPDATE "
               "SET rows = excluded.rows, tokens = excluded.tokens", (item_id, len(rows), total))


# -- reading ------------------------------------------------------------------------------------------

_LEXEME = re.compile(r"'((?:[^'\\]|''|\\.)*)':([0-9A-D,]+)")
_UNESCAPE = re.compile(r"''|\\(.)")


def parse_positions(text: str) -> dict[str, set[int]]:
    """A tsvector's text as {lexeme: positions}."""
    out = {}
    for lexeme, positions in _LEXEME.findall(text or ""):
        lexeme = _UNESCAPE.sub(lambda m: "'" if m.group(0) == "''" else m.group(1), lexeme)
        out[lexeme] = {int(p.rstrip("ABCD")) for p in positions.split(",")}
    return out


def phrase_hits(phrase: tuple[str, ...], positions: dict[str, set[int]]) -> int:
    """How many times the words of `phrase` stand in a row (FTS5's hits of a phrase)."""
    first = positions.get(phrase[0])
    if not first:
        return 0
    rest = [positions.get(w) for w in phrase[1:]]
    if any(not r for r in rest):
        return 0
    return sum(1 for p in first if all(p + k in r for k, r in enumerate(rest, start=1)))


def phrase_query(phrase: tuple[str, ...]) -> str:
    return " <-> ".join(_quote(w) for w in phrase)


def any_query(phrases) -> str:
    return " | ".join(f"({phrase_query(p)})" for p in phrases)


def _filters_sql(request) -> tuple[str, list]:
    """The request's filters (jezero.store.engines.MessageRequest) as the SQLite path writes them."""
    from jezero.query.messages import MessageFilters

    filters = MessageFilters(
        sources=list(request.sources) if request.sources is not None else None, source=request.source,
        projects=list(request.projects) if request.projects is not None else None,
        roles=list(request.roles) if request.roles is not None else None, include_tools=True,
        include_subagents=request.subagents, since=request.since, before=request.before)
    return filters.sql("m")


class _Scorer:
    """bm25 of a message for some phrases, as FTS5 computes it (jezero.query.bm25's formula with
    one column of weight 1)."""

    def __init__(self, rows: int, tokens_total: int, idfs: dict[tuple, float]):
        self.avgdl = tokens_total / rows if rows else 0.0
        self.idfs = idfs

    def score(self, phrases, length: int, positions) -> float:
        k = bm25.K1 * (1 - bm25.B + bm25.B * length / self.avgdl) if self.avgdl else bm25.K1
        total = 0.0
        for p in phrases:
            f = phrase_hits(p, positions)
            if f:
                total += self.idfs[p] * ((f * (bm25.K1 + 1.0)) / (f + k))
        return total


class MessageRanking:
    """The messages lane of the postgres reader's Ranker (search.py): `self.conn` is its connection."""

    conn = None

    # -- counts ---------------------------------------------------------------------------------------

    def message_rows(self) -> tuple[int, int]:
        """(messages, items) as FTS5's bm25 and the lane's session IDF count them: every message
        indexed, every item."""
        messages = self._totals()[0]
        items = self.conn.execute("SELECT count(*) FROM items").fetchone()[0]
        return messages, items

    def _totals(self) -> tuple[int, int]:
        row = self.conn.execute("SELECT coalesce(sum(rows), 0), coalesce(sum(tokens), 0) FROM messages_totals").fetchone()
        return int(row[0]), int(row[1])

    def _count(self, query: str, cap: int) -> int:
        """Messages matching the tsquery text `query`, counted up to `cap`."""
        return self._planned("SELECT count(*) FROM (SELECT 1 FROM messages_search WHERE words @@ ?::tsquery "
                             "LIMIT ?) AS c", (query, cap))[0][0]

    def _scorer(self, phrases, totals: tuple[int, int] | None = None) -> _Scorer:
        rows, tokens_total = totals or self._totals()
        half = (rows + 1) // 2
        idfs = {p: bm25.idf(rows, self._count(phrase_query(p), max(half, 1))) for p in dict.fromkeys(phrases)}
        return _Scorer(rows, tokens_total, idfs)

    def _fetch(self, query: str, lexemes, where: str, args: list, order: str, limit: int | None) -> list[tuple]:
        """(id, item id, length, {lexeme: positions} of `lexemes`) of the messages matching the
        tsquery `query` that pass the filters, in `order`, at most `limit`. The chosen rows first,
        then their words' positions: PostgreSQL computes a select list before it sorts, and the
        positions of every match of a common word (each tsvector read from TOAST) cost more
        than the search."""
        sql = (f"SELECT s.id, m.item_id, s.length FROM messages_search AS s JOIN messages AS m ON m.id = s.id "
               f"WHERE s.words @@ ?::tsquery{' AND ' + where if where else ''} ORDER BY {order}"
               + (" LIMIT ?" if limit is not None else ""))
        chosen = self._planned(sql, [query, *args] + ([limit] if limit is not None else []))
        if not chosen:
            return []
        positions = dict(self._planned(
            "SELECT id, ts_filter(setweight(words, 'A', ?::text[]), '{a}')::text FROM messages_search "
            "WHERE id = ANY(?)", [sorted(lexemes), [r[0] for r in chosen]]))
        return [(mid, item, length, parse_positions(positions.get(mid))) for mid, item, length in chosen]

    def _planned(self, sql: str, params) -> list:
        """The rows of `sql`, planned for its own words (a generic plan of `words @@ $1` read
        every message backwards for a rare word), with the word index preferred (inside
        _prefer_index: every request)."""
        return self.conn.execute(sql, params, prepare=False).fetchall()

    @contextmanager
    def _prefer_index(self):
        """One transaction for a request (one snapshot, too), in which the planner prefers the
        word index to reading every message: it counts a tsvector read from TOAST as free, and
        so, with statistics, chose a sequential scan to find a word (90 ms for 19,000 messages)
        over the GIN index (1 ms)."""
        if getattr(self, "_preferring", False):
            yield
            return
        with self.conn:
            self.conn.execute("SET LOCAL enable_seqscan = off")
            self.conn.execute("SET LOCAL jit = off")  # a disabled scan's cost would set JIT off (200 ms)
            self._preferring = True
            try:
                yield
            finally:
                self._preferring = False

    # -- what the query layer asks ----------------------------------------------------------------------

    def message_matches(self, request) -> list | None:
        with self._prefer_index():
            return self._message_matches(request)

    def _message_matches(self, request) -> list | None:
        """A derived engine's answer to `request` (jezero.store.engines.MessageRequest), from
        PostgreSQL: "relevance" / "newest" / "oldest": [(message id, score, mask of the terms it
        holds)], best first, with `capped` (the terms ranked among their newest RANK_CAP matches
        only, as FTS5's path ranks them); "per_term": per term [(message id, item id, score)]."""
        terms = [tuple(p for p in (tuple(tokens(a, query=True)) for a in alternatives) if p)
                 for alternatives in request.terms]
        where, args = _filters_sql(request)
        if request.order == "per_term":
            totals = self._totals()  # once for every term of the request
            return [self._per_term(phrases, request, where, args, totals) for phrases in terms]
        if not any(terms):
            return _Answer()
        lexemes = {w for phrases in terms for p in phrases for w in p}
        everything = any_query(p for phrases in terms for p in phrases)
        if request.order in ("newest", "oldest"):
            way = "DESC" if request.order == "newest" else "ASC"
            found = self._fetch(everything, lexemes, where, args, f"m.at {way}, m.id {way}", request.limit)
            return _Answer((mid, 0.0, _mask(terms, pos)) for mid, _, _, pos in found)
        return self._relevance(terms, lexemes, where, args, request.limit)

    def _relevance(self, terms, lexemes, where, args, fetch) -> list:
        """jezero.query.messages.matches()'s rule: a term in more than RANK_CAP messages is ranked
        among its RANK_CAP newest matches (by bm25 over such terms), every match of the rarer terms
        by bm25 over them; then by score, the lower id first on a tie."""
        from jezero.query import messages as mq

        cap = mq.RANK_CAP
        held = [p for p in terms if p]
        common = [p for p in held if self._common(p, cap)]
        rarer = [p for p in held if p not in common]
        positions: dict[int, dict] = {}
        totals = self._totals()

        def rank(group, limit, order):
            phrases = [p for t in group for p in t]
            scorer = self._scorer(phrases, totals)
            found = self._fetch(any_query(phrases), lexemes, where, args, order, limit)
            out = []
            for mid, _, length, pos in found:
                positions[mid] = pos
                out.append((scorer.score(phrases, length, pos), mid))
            return out

        if common:
            ranked = sorted(rank(common, cap, "s.id DESC"), key=lambda r: (-r[0], r[1]))[:fetch]
            if rarer:
                seen = {mid for _, mid in ranked}
                ranked += [r for r in rank(rarer, None, "s.id") if r[1] not in seen]
        else:
            ranked = rank(rarer, None, "s.id")
        ranked.sort(key=lambda r: (-r[0], r[1]))
        out = _Answer((mid, score, _mask(terms, positions[mid])) for score, mid in ranked[:fetch])
        out.capped = [i for i, t in enumerate(terms) if t in common]  # indexes of request.terms
        return out

    def _common(self, phrases, cap: int) -> bool:
        """Whether more than `cap` messages hold the term (messages._common: a phrase with one
        word under the cap is under it too)."""
        if len(phrases) == 1 and len(phrases[0]) > 1 and any(self._count(_quote(w), cap + 1) <= cap
                                                              for w in phrases[0]):
            return False
        return self._count(any_query(phrases), cap + 1) > cap

    def _per_term(self, phrases, request, where, args, totals) -> list | None:
        """One term of the lane: None for a phrase of common words (over `phrase_rows`); its
        `limit` newest matches scored None when it is common (over `common_rows`); else its
        matches' bm25 for it alone."""
        if not phrases:
            return []
        if request.phrase_rows is not None and len(phrases) == 1 and len(phrases[0]) > 1:
            budget_rows = request.phrase_rows
            for w in phrases[0]:
                budget_rows -= self._count(_quote(w), budget_rows + 1)
                if budget_rows < 0:
                    return None
        query = any_query(phrases)
        lexemes = {w for p in phrases for w in p}
        if request.common_rows is not None and self._count(query, request.common_rows + 1) > request.common_rows:
            found = self._fetch(query, lexemes, where, args, "s.id DESC", request.limit)
            return [(mid, item, None) for mid, item, _, _ in found]
        scorer = self._scorer(phrases, totals)
        found = self._fetch(query, lexemes, where, args, "s.id DESC", request.limit)
        out = [(mid, item, scorer.score(phrases, length, pos)) for mid, item, length, pos in found]
        out.sort(key=lambda r: -r[2])
        return out

    def message_projects(self, texts, filters, limit: int, expr: str | None = None) -> list[tuple]:
        with self._prefer_index():
            return self._message_projects(texts, filters, limit, expr)

    def _message_projects(self, texts, filters, limit: int, expr: str | None = None) -> list[tuple]:
        """Discovery: (project, matching messages, its newest matching message's id) per project
        holding a message with any of the terms `texts` (or matching the checked FTS5 expression
        `expr`, recall's boolean mode) that passes `filters` (the query layer's MessageFilters),
        the project with the newest match first."""
        if expr is not None:
            from jezero_store_postgres.boolean import to_tsquery

            query = to_tsquery(expr)[0]
        else:
            phrases = [p for p in (tuple(tokens(t, query=True)) for t in texts) if p]
            if not phrases:
                return []
            query = any_query(phrases)
        where, args = filters.sql("m")
        cond = f"s.words @@ ?::tsquery{' AND ' + where if where else ''}"
        base = "FROM messages_search AS s JOIN messages AS m ON m.id = s.id"
        groups = self.conn.execute(f"SELECT m.project, count(*), max(m.at) {base} WHERE {cond} GROUP BY m.project "
                                   f"ORDER BY 3 DESC, 1 LIMIT ?", [query, *args, limit]).fetchall()
        out = []
        for project, count, _ in groups:
            newest = self.conn.execute(f"SELECT m.id {base} WHERE {cond} AND m.project IS NOT DISTINCT FROM ? "
                                       "ORDER BY m.at DESC, m.id DESC LIMIT 1", [query, *args, project]).fetchone()
            out.append((project, count, newest[0]))
        return out

    def boolean_matches(self, expr: str, filters, fetch: int) -> list[tuple[int, float]]:
        with self._prefer_index():
            return self._boolean_matches(expr, filters, fetch)

    def _boolean_matches(self, expr: str, filters, fetch: int) -> list[tuple[int, float]]:
        """recall's boolean mode: (message id, bm25 relevance) of the first `fetch` messages that
        match the FTS5 expression `expr` (checked by FTS5 already) and pass `filters`, best first.
        The expression becomes a tsquery (boolean.py); bm25 sums over every phrase in it, as FTS5's."""
        from jezero_store_postgres.boolean import to_tsquery

        query, phrases = to_tsquery(expr)
        where, args = filters.sql("m")
        scorer = self._scorer(phrases)
        lexemes = {w for p in phrases for w in p}
        found = self._fetch(query, lexemes, where, args, "s.id", None)
        ranked = sorted(((scorer.score(phrases, length, pos), mid) for mid, _, length, pos in found),
                        key=lambda r: (-r[0], r[1]))
        return [(mid, score) for score, mid in ranked[:fetch]]


class _Answer(list):
    """Matches, and the indexes of the terms ranked among their newest RANK_CAP matches only."""

    capped: list = []


def _mask(terms, positions) -> int:
    mask = 0
    for i, phrases in enumerate(terms):
        if any(phrase_hits(p, positions) for p in phrases):
            mask |= 1 << i
    return mask

