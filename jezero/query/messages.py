"""The messages index as the query layer reads it: which messages match, ranked how, and what
each one holds. recall.py (messages for an agent) and fused/ (messages as a second ranking of
search) are built on this module.

Matching is literal, like the items index: the query's words and "quoted phrases", each quoted,
so nothing typed is an FTS5 operator; a boolean expression is accepted only where the caller asks
for one (recall's opt-in), and it is checked first. The index is word-level (see
jezero/store/messages.py), so a term is a whole word, or a phrase of words when it holds
punctuation (`fs.inotify.max_user_watches` matches those four words in a row).
"""

from __future__ import annotations

import re
import threading
import weakref
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field

import apsw

from jezero.query.common import scope_conditions, time_conditions
from jezero.query.errors import QueryError
from jezero.query.terms import Term, match_expression, parse_terms, word_forms
from jezero.store import engines, varints
from jezero.store.messages import MESSAGES_TOKENIZER, ROLES

# Fields of a message row, in this order, as recall returns them.
MESSAGE_FIELDS = ("id", "item_id", "source", "session_id", "parent_session_id", "project", "segment_index", "seq",
                  "role", "tool", "at")
_COLS = ", ".join(f"m.{c}" for c in MESSAGE_FIELDS)
# A boolean expression is text an agent wrote: longer than this it is a paste, not a query.
MAX_EXPRESSION_CHARS = 1000
_SURROGATE = re.compile("[\ud800-\udfff]")
COVER_NAME = "jezero_matched"


def backend(conn: apsw.Connection):
    """The reader's store backend when it ranks the messages itself (a jezero.store.backends
    Ranker with the lane "messages", e.g. PostgreSQL): it answers every messages request below,
    whatever `[search] engine` names, since the library has no FTS5 to fall back on. None on
    SQLite."""
    ranker = getattr(conn, "ranker", None)
    return ranker if ranker is not None and "messages" in ranker.lanes else None


def has_messages(conn: apsw.Connection) -> bool:
    """Whether this library has the messages layer (a reader may meet a library that no writer
    has migrated yet: it then searches the items alone)."""
    if backend(conn) is not None:
        return True
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='messages_fts'").fetchone() is not None


def messages_tokenizer(conn: apsw.Connection) -> str:
    row = conn.execute("SELECT value FROM meta WHERE key='messages_tokenizer'").fetchone()
    return row[0] if row else MESSAGES_TOKENIZER


def terms_for(conn: apsw.Connection, query: str) -> list[Term]:
    return parse_terms(query, messages_tokenizer(conn))


def check_expression(conn: apsw.Connection, expr) -> str:
    """A caller's own FTS5 expression, refused with a plain message when FTS5 cannot read it."""
    if not isinstance(expr, str) or not expr.strip():
        raise QueryError("boolean query: give an FTS5 expression, e.g. deploy AND (rollback OR revert)")
    if len(expr) > MAX_EXPRESSION_CHARS:
        raise QueryError(f"boolean query: longer than {MAX_EXPRESSION_CHARS} characters")
    if "\x00" in expr:
        raise QueryError("boolean query: contains a NUL character")
    if _SURROGATE.search(expr):  # a byte that is not UTF-8 in a command line; FTS5 cannot be handed it
        raise QueryError("boolean query: contains text that is not UTF-8 (a lone surrogate)")
    try:
        checker = _memory_fts() if backend(conn) is not None else conn  # FTS5 reads its own language
        checker.execute("SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? LIMIT 1", (expr,)).fetchall()
    except apsw.SQLError as e:
        reason = str(e).split(":", 1)[-1].strip()
        raise QueryError(f"boolean query is not a valid FTS5 expression ({reason}): {expr!r}; "
                         "use AND, OR, NOT, parentheses and \"quoted phrases\"") from None
    return expr


@dataclass
class MessageFilters:
    """What recall and the fused search narrow the messages to. None means no condition."""

    sources: list[str] | None = None  # the caller's sources, expanded; None = every source
    source: str | None = None
    projects: list[str] | None = None
    roles: list[str] | None = None  # None: every role but "tool" unless include_tools
    include_tools: bool = False
    include_subagents: bool = False
    since: str | None = None  # inclusive, stored time text
    before: str | None = None  # exclusive, stored time text
    min_messages: int = 0  # a session needs at least this many messages

    def sql(self, alias: str = "m") -> tuple[str, list]:
        where, args = scope_conditions(alias, self.sources, self.source)
        if self.projects is not None:
            where.append(f"{alias}.project IN ({','.join('?' * len(self.projects))})")
            args += self.projects
        if self.roles is not None:
            where.append(f"{alias}.role IN ({','.join('?' * len(self.roles))})")
            args += self.roles
        elif not self.include_tools:
            where.append(f"{alias}.role != 'tool'")
        if not self.include_subagents:
            where.append(f"{alias}.parent_session_id IS NULL")
        when, when_args = time_conditions(f"{alias}.at", self.since, self.before)
        where += when
        args += when_args
        if self.min_messages > 1:
            where.append(f"(SELECT count(*) FROM messages AS x WHERE x.source = {alias}.source "
                         f"AND x.session_id = {alias}.session_id) >= ?")
            args.append(self.min_messages)
        return " AND ".join(where), args


def check_roles(roles) -> list[str] | None:
    if roles is None or roles == "" or roles == []:
        return None
    if isinstance(roles, str):
        roles = [roles]
    bad = [r for r in roles if r not in ROLES]
    if bad:
        raise QueryError(f"role must be one of {', '.join(ROLES)}; got {', '.join(map(repr, bad))}")
    return list(dict.fromkeys(roles))


@dataclass(slots=True)
class Match:
    """One matching message: where it is, and what ranked it."""

    id: int
    item_id: int
    source: str
    session_id: str
    parent_session_id: str | None
    project: str | None
    segment_index: int
    seq: int
    role: str
    tool: str | None
    at: str
    bm25: float
    bm25_rank: int  # its place in bm25 order among the fetched matches; -1 when a time order fetched it
    # distinct query terms it holds (in the fused lane, its terms: a word said as typed is two,
    # fused.WRITTEN_HOLDS_FORMS)
    coverage: int = 1
    matched: list[str] = field(default_factory=list)


# matches(): a term in more messages than this is ranked among its newest this many (bm25
# costs about a microsecond a row: 5 ms at most; benchmarks/messages/README.md). Newest by the
# messages' time: their ids follow it (jezero.store.messages.time_id), and FTS5 reads a word's
# list from the highest id down without sorting.
RANK_CAP = 5000

ORDERS = {
    "relevance": "b, m.id",
    "newest": "m.at DESC, m.id DESC",
    "oldest": "m.at ASC, m.id ASC",
}


def matches(conn: apsw.Connection, expr: str, filters: MessageFilters, fetch: int,
            order: str = "relevance", terms: Sequence[Term] = ()) -> tuple[list[Match], list[str]]:
    """The first `fetch` messages matching `expr` that pass `filters`, in `order`, and the terms
    whose matches were ranked among their RANK_CAP newest only.

    FTS5 computes bm25 for every matching row before LIMIT applies: a common word in a large
    library means scoring hundreds of thousands of messages. So, given the query's `terms`, a
    term in more than RANK_CAP messages is common: the rows of the other (rarer) terms are all
    ranked, by bm25 over those terms, and the common terms add their RANK_CAP most recent rows,
    by bm25 over the common terms (small: their IDF is low); newest by time, since message ids follow
    the messages' time (jezero.store.messages), however late a session was stored. The caller's coverage re-rank then
    puts a message holding both kinds first. Without a common term the answer is the plain full
    ranking. CROSS JOIN keeps the FTS5 table as the outer loop."""
    where, args = filters.sql()
    cond = f"messages_fts MATCH ? {'AND ' + where if where else ''}"
    if order != "relevance":
        rows = conn.execute(
            f"SELECT {_COLS}, 0.0 FROM messages_fts CROSS JOIN messages AS m ON m.id = messages_fts.rowid "
            f"WHERE {cond} ORDER BY {ORDERS[order]} LIMIT ?", [expr, *args, fetch]).fetchall()
        return [Match(*r[:11], r[11], -1) for r in rows], []
    common = [t for t in terms if _common(conn, t)]
    rarer = [t for t in terms if t not in common]
    ranked = f"SELECT {_COLS}, bm25(messages_fts) AS b FROM messages_fts CROSS JOIN messages AS m " \
             f"ON m.id = messages_fts.rowid WHERE {cond}"
    if not common:
        rows = conn.execute(f"{ranked} ORDER BY b, m.id LIMIT ?", [expr, *args, fetch]).fetchall()
    else:
        rows = conn.execute(
            f"SELECT * FROM ({ranked} ORDER BY messages_fts.rowid DESC LIMIT ?) ORDER BY b, id LIMIT ?",
            [match_expression(common), *args, RANK_CAP, fetch]).fetchall()
        if rarer:
            seen = {r[0] for r in rows}
            rows += [r for r in conn.execute(f"{ranked} ORDER BY b, m.id LIMIT ?",
                                             [match_expression(rarer), *args, fetch])
                     if r[0] not in seen]
            rows.sort(key=lambda r: (r[11], r[0]))
            rows = rows[:fetch]
    return [Match(*r[:11], r[11], i) for i, r in enumerate(rows)], [t.text for t in common]


# -- through a derived index engine ([search] engine, e.g. tantivy) ----------------------------------

# engine_matches(): with a minimum of messages per session (the one filter a derived index does
# not hold), the engine is asked for this many times more matches until enough pass it.
REFILL_GROWTH = 4
REFILL_MAX = 100_000


def request_for(terms: Sequence[tuple[str, ...]], filters: MessageFilters, order: str, limit: int,
                phrase_rows: int | None = None, common_rows: int | None = None,
                common_read: bool = True) -> engines.MessageRequest:
    """`filters` as an engine reads them (everything but min_messages, which the caller checks)."""
    if filters.roles is not None:
        roles = tuple(filters.roles)
    elif not filters.include_tools:
        roles = tuple(r for r in ROLES if r != "tool")
    else:
        roles = None
    return engines.MessageRequest(
        terms=tuple(tuple(t) for t in terms),
        sources=tuple(filters.sources) if filters.sources is not None else None, source=filters.source,
        projects=tuple(filters.projects) if filters.projects is not None else None, roles=roles,
        subagents=filters.include_subagents, since=filters.since, before=filters.before, order=order, limit=limit,
        phrase_rows=phrase_rows, common_rows=common_rows, common_read=common_read)


def engine_matches(conn: apsw.Connection, engine: str, terms: Sequence[Term], filters: MessageFilters, fetch: int,
                   order: str = "relevance") -> list[Match] | None:
    """matches() and cover() answered by the configured index engine: the first `fetch` messages
    holding any of `terms` (each literal, as written) that pass `filters`, in `order`, each with
    its coverage; None when the engine is FTS5 or cannot answer (then FTS5 does). Every match
    is ranked (the engine's top matches are exact: no RANK_CAP)."""
    ranker = backend(conn)
    if (ranker is None and (not engine or engine == engines.BUILTIN)) or not terms:
        return None
    limit = fetch
    while True:
        request = request_for([(t.text,) for t in terms], filters, order, limit)
        answer = ranker.message_matches(request) if ranker is not None else engines.messages(conn, engine, request)
        if answer is None:
            return None
        # The library's own rows, through the same filters: a message deleted since the index
        # caught up (a reader's older snapshot) is dropped, and min_messages applies here.
        shown = rows(conn, [mid for mid, _, _ in answer], filters)
        kept = [(shown[mid], score, mask) for mid, score, mask in answer if mid in shown]
        if len(kept) >= fetch or len(answer) < limit or filters.min_messages <= 1 or limit >= REFILL_MAX:
            break
        limit = min(limit * REFILL_GROWTH, REFILL_MAX)
    out = Matches(capped=[terms[i].text for i in getattr(answer, "capped", ())])
    for rank, (m, score, mask) in enumerate(kept[:fetch]):
        m.bm25 = -score  # FTS5's sign: less is better
        m.bm25_rank = rank if order == "relevance" else -1
        m.matched = [t.text for i, t in enumerate(terms) if mask >> i & 1]
        m.coverage = len(m.matched)
        out.append(m)
    return out


class Matches(list):
    """engine_matches()'s answer: the matches, and the terms ranked among their newest RANK_CAP
    matches only (a backend that keeps FTS5's cap says which; a derived index caps nothing)."""

    def __init__(self, found=(), capped=()):
        super().__init__(found)
        self.capped = list(capped)


def answered_by(conn: apsw.Connection, engine: str | None) -> str:
    """What engine_matches() names as the engine that matched: the backend's when it ranks the
    messages, else the configured one."""
    ranker = backend(conn)
    return ranker.name if ranker is not None else engine


# engine_term_matches(): an engine whose state is exactly the library's may keep the sessions of
# the items its matches name (PerTerm.sessions in jezero_index_tantivy): they are read from the
# items table once per index state instead of once per search (an item's row is a page read:
# ~0.4 ms a search at 20,000 items). At most this many items are kept per state (~10 MB); 0
# reads every search's items from the library.
SESSIONS_KEPT = 50_000


def engine_term_matches(conn: apsw.Connection, engine: str, terms: Sequence[Term], filters: MessageFilters,
                        cap: int, phrase_rows: int | None = None, common_relevance: float | None = None,
                        read_common: bool = True) -> tuple[list, list[str], list[str]] | None:
    """The lane's term_matches() for every term at once, answered by the configured index engine:
    per term (a single word also in its other forms, terms.word_forms), its `cap` best messages
    by BM25 for that term alone that pass `filters`, as (term text, [(id, source, session_id,
    relevance)]). A word in more than `cap` messages is common, when `common_relevance` is given:
    its `cap` newest messages each score that, as on FTS5, given as a Newest (each session's
    newest of them alone, with how many were read and the lowest id). The first is a TermMatches. A
    phrase whose words are in more than `phrase_rows` messages together is left out (as the
    FTS5 lane leaves it out). With `read_common` False the common words' messages need not be
    read (the engine is asked not to: MessageRequest.common_read): they are named common, with
    no matches. Returns (those per term, the phrases left out, the common words); None when the
    engine is FTS5 or cannot answer (then FTS5 does)."""
    ranker = backend(conn)
    if ranker is None and (not engine or engine == engines.BUILTIN):
        return None
    if not terms:
        return [], [], []
    alternatives = [(t.key[0], *word_forms(t.key[0])) if len(t.key) == 1 and not t.exact else (t.text,)
                    for t in terms]
    request = request_for(alternatives, filters, "per_term", cap, phrase_rows,
                          cap if common_relevance is not None else None, read_common)
    answer = ranker.message_matches(request) if ranker is not None else engines.messages(conn, engine, request)
    if answer is None:
        return None
    known = getattr(answer, "sessions", None) if SESSIONS_KEPT else None
    within = getattr(answer, "items_within", None)
    left_out = [t.text for t, found in zip(terms, answer) if found is None]
    common = [t.text for t, found in zip(terms, answer)
              if isinstance(found, engines.CommonUnread) or (found and found[0][2] is None)]
    if not read_common:  # named common, nothing kept of their messages (an engine may have read them)
        unread = set(common)
        answer = [[] if t.text in unread else found or [] for t, found in zip(terms, answer)]
    else:
        answer = [found or [] for found in answer]
    wanted = set()
    for found in answer:  # (an engine may give a term's items as a column: NewestHits.items)
        wanted.update(getattr(found, "items", None) or [item for _, item, _ in found])
    read = item_sessions(conn, sorted(wanted if known is None else wanted.difference(known)))
    if known is None:
        get = read.get
    elif len(known) + len(read) <= SESSIONS_KEPT:
        known.update(read)
        get = known.get
    else:  # the map is full: it still answers for what it holds
        get = lambda item: known.get(item) or read.get(item)  # noqa: E731
    out = TermMatches()
    out.items_within = within
    out.held = {t.text: found.held for t, found in zip(terms, answer) if getattr(found, "held", None) is not None}
    for t, found in zip(terms, answer):
        if found and found[0][2] is None:
            kept = _newest_per_session(found, get, common_relevance)
        else:
            kept = [(mid, *pair, score) for mid, item, score in found if (pair := get(item)) is not None]
        if kept:
            out.append((t.text, kept))
    return out, left_out, common


def item_sessions(conn, items: list[int]) -> dict[int, tuple[str, str]]:
    """item id -> (source, session id) of these items (those the library holds). On SQLite the
    ids are given as one array (apsw.carray): a statement of its own for every count of ids was
    prepared anew each time (~1% of a fused search at 100k), one page read per item either way."""
    if not items:
        return {}
    if _CARRAY is not None and isinstance(conn, apsw.Connection):
        return {item: (source, sid) for item, source, sid in conn.execute(
            "SELECT i.id, i.source, i.session_id FROM carray(?) AS j CROSS JOIN items AS i ON i.id = j.value",
            (_CARRAY(array("q", items)),))}
    read = {}
    for chunk in range(0, len(items), 900):
        part = items[chunk:chunk + 900]
        read.update({item: (source, sid) for item, source, sid in conn.execute(
            f"SELECT id, source, session_id FROM items WHERE id IN ({','.join('?' * len(part))})", part)})
    return read


_CARRAY = getattr(apsw, "carray", None)  # the locked apsw has it; an older one reads the IN lists as before


class TermMatches(list):
    """engine_term_matches()'s matches per term; `items_within`, when the engine knows it exactly
    for the reader's state, how many items pass the filters' sources, projects and times (the
    lane's estimate of a common word's sessions counts them: fused._common_floors); `held`, per
    term the engine counted, how many messages hold it before the filters (the n of its bm25's
    IDF, as FTS5's lane counts it: fused.message_lane replaces that IDF by the one over sessions)."""

    items_within: int | None = None
    held: dict | None = None


class Newest(list):
    """A common word's newest messages as engine_term_matches() gives them: each session's first
    (its newest) alone, in the engine's order, as (id, source, session_id, relevance), every one
    scoring alike; `read`: how many of the word's messages were read (those whose item the library
    holds), `oldest`: the lowest id among them. The lane keeps, per term, only a session's best
    message, the first on a tie (fused._scores), and counts the term's sessions, not its rows,
    so these are all it needs of the rest (half the rows of the load benchmark's searches)."""

    read: int = 0
    oldest: int | None = None


def _newest_per_session(found: list, get, relevance: float) -> Newest:
    # (the engine may give the ids and items as columns: NewestHits)
    mids = getattr(found, "ids", None)
    items = getattr(found, "items", None) if mids is not None else None
    if items is None:
        mids, items = [r[0] for r in found], [r[1] for r in found]
    # Each item looked up once, in the order the items come (a session's first item holds its
    # first row); each item's first row (reversed, the first overwrites the later).
    order = list(dict.fromkeys(items))
    pairs = list(map(get, order))
    if None in pairs:  # items deleted since the engine caught up (or not in the reader's snapshot)
        held = dict(zip(order, pairs))
        kept = [(mid, held[item]) for mid, item in zip(mids, items) if held[item] is not None]
        mids, pairs = [mid for mid, _ in kept], [pair for _, pair in kept]
        first = dict(zip(reversed(pairs), reversed(mids)))
        out = Newest([(first[pair], *pair, relevance) for pair in dict.fromkeys(pairs)])
        out.read, out.oldest = len(mids), min(mids, default=None)
        return out
    item_first = dict(zip(reversed(items), reversed(mids)))
    session_first = dict(zip(reversed(pairs), reversed(order)))  # each session's first item
    out = Newest([(item_first[session_first[pair]], *pair, relevance) for pair in dict.fromkeys(pairs)])
    out.read, out.oldest = len(mids), min(mids, default=None)
    return out


def _common(conn: apsw.Connection, term: Term) -> bool:
    """Whether more than RANK_CAP messages hold `term`. A phrase with one word under the cap is
    under it too, which saves walking the phrase (FTS5 reads every word's list for it)."""
    if len(term.key) > 1 and any(token_rows(conn, tok, RANK_CAP + 1) <= RANK_CAP for tok in term.key):
        return False
    return len(ids_up_to(conn, term, RANK_CAP + 1)) > RANK_CAP


def cover(conn: apsw.Connection, found: list[Match], terms: Sequence[Term]) -> None:
    """Set each match's coverage: how many distinct query terms it holds (FTS5 says which of the
    expression's phrases hit the row; nothing is re-tokenized in Python)."""
    if not found:
        return
    if len(terms) < 2:
        for m in found:
            m.coverage, m.matched = 1, [terms[0].text] if terms else []
        return
    _register(conn)
    by_id = {m.id: m for m in found}
    ids = list(by_id)
    rows = conn.execute(
        f"SELECT rowid, {COVER_NAME}(messages_fts) FROM messages_fts WHERE messages_fts MATCH ? "
        f"AND rowid IN ({','.join('?' * len(ids))})", [match_expression(terms), *ids])
    for rowid, mask in rows:
        m = by_id[rowid]
        m.matched = [t.text for i, t in enumerate(terms) if mask >> i & 1]
        m.coverage = len(m.matched)


def coverage_order(found: list[Match]) -> list[Match]:
    """More distinct query terms first; bm25 order (the fetch order) breaks ties."""
    return sorted(found, key=lambda m: -m.coverage)  # stable: keeps bm25 order within a coverage


def _matched_mask(api: apsw.FTS5ExtensionApi) -> int:
    mask = 0
    for i in range(api.phrase_count):
        if api.phrase_columns(i):
            mask |= 1 << i
    return mask


_registered: "weakref.WeakSet[apsw.Connection]" = weakref.WeakSet()
_lock = threading.Lock()


def _register(conn: apsw.Connection) -> None:
    with _lock:
        if conn not in _registered:
            conn.register_fts5_function(COVER_NAME, _matched_mask)
            _registered.add(conn)


def term_matches(conn: apsw.Connection, term: Term, filters: MessageFilters, cap: int,
                 relevance: float | None = None) -> list[tuple]:
    """The messages holding `term` (a single word also in its other forms, terms.word_forms) that
    pass `filters`, newest first, at most `cap`, as (id, source, session_id, relevance): FTS5's
    bm25 for this term alone (its IDF over the whole index, its frequency in the message, the
    message's length), negated so that more is better; or, when `relevance` is given, that number
    for every message, and bm25 is not computed (its IDF reads the term's whole list, which for a
    word in tens of thousands of messages costs more than the items search). One walk of the
    term's list, newest end first (the highest ids: ids follow the messages' time), joined to the
    rows it needs (rows() gives the rest)."""
    where, args = filters.sql()
    return conn.execute(
        f"SELECT m.id, m.source, m.session_id, {'-bm25(messages_fts)' if relevance is None else float(relevance)} "
        f"FROM messages_fts CROSS JOIN messages AS m "
        f"ON m.id = messages_fts.rowid WHERE messages_fts MATCH ? {'AND ' + where if where else ''} "
        f"ORDER BY messages_fts.rowid DESC LIMIT ?", [lane_expression(term), *args, cap]).fetchall()


def lane_expression(term: Term) -> str:
    """The FTS5 expression of a term as the messages lane reads it: a single word with its other
    forms (terms.word_forms), else the term as written."""
    if len(term.key) == 1 and not term.exact:
        return " OR ".join('"' + form + '"' for form in (term.key[0], *word_forms(term.key[0])))
    return term.quoted


class CommonWord(tuple):
    """What the lane keeps of a common word read at its newest only, for search's read of the
    sessions it never reached (fused.unread_evidence): (what each of its messages scored, its FTS5
    expression (lane_expression), whether it is a name or part of one, the name it is part of).

    Indexed (`word[1]`), the expression is the word's forms that the library's messages index
    holds (and the word itself), found on first use, one FTS5 lookup per other form: it matches
    the same messages (a form no message holds matches none), but each search of it walks only
    those forms, where FTS5 spends ~25 us on each form of an expression even when no message
    holds it (20,000 sessions; `tests` has 9 forms, 2 of them held), and unread_evidence searches
    it once per unread session and item (the slowest of the load benchmark's searches: 8-11 ->
    3-6 ms). Lazily, so a search that reads no unread session looks nothing up. Unpacked, it is
    the tuple as made (the full expression, the same matches)."""

    def __getitem__(self, i):
        if i != 1:
            return tuple.__getitem__(self, i)
        held = self.__dict__.get("held")
        if held is None:
            held = self.__dict__["held"] = self._held_forms()
        return held

    def _held_forms(self) -> str:
        forms = self.forms
        if len(forms) < 2:
            return tuple.__getitem__(self, 1)
        # the word itself is kept unasked (its newest were read: a held form costs a lookup most)
        held = forms[:1] + [f for f in forms[1:] if self.conn.execute(
            "SELECT 1 FROM messages_fts WHERE messages_fts MATCH ? LIMIT 1", (f,)).fetchone() is not None]
        del self.conn  # (an interrupted lookup leaves it, and the next use asks again)
        return " OR ".join(held)


def common_word(conn: apsw.Connection, term: Term, relevance: float, name: bool, part_of) -> CommonWord:
    """A CommonWord for `term` (its forms looked up in `conn`'s messages index when first asked)."""
    word = CommonWord((relevance, lane_expression(term), name, part_of))
    word.conn = conn
    word.forms = ['"' + form + '"' for form in (term.key[0], *word_forms(term.key[0]))] \
        if len(term.key) == 1 and not term.exact else []
    return word


def ids_up_to(conn: apsw.Connection, term: Term, cap: int) -> list[int]:
    """The ids of the messages holding `term`, at most `cap` of them."""
    return [r[0] for r in conn.execute("SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? LIMIT ?",
                                       (term.quoted, cap))]


def count_up_to(conn: apsw.Connection, expr: str, cap: int) -> int:
    """How many messages match the FTS5 expression `expr`, counting up to `cap` (a walk of rowids)."""
    return conn.execute("SELECT count(*) FROM (SELECT 1 FROM messages_fts WHERE messages_fts MATCH ? LIMIT ?)",
                        (expr, cap)).fetchone()[0]


def token_rows(conn: apsw.Connection, token: str, cap: int) -> int:
    """How many messages hold this one token (as the tokenizer wrote it), counting up to `cap`."""
    quoted = '"' + token.replace('"', '""') + '"'
    return conn.execute("SELECT count(*) FROM (SELECT 1 FROM messages_fts WHERE messages_fts MATCH ? LIMIT ?)",
                        (quoted, cap)).fetchone()[0]


def token_over(conn: apsw.Connection, token: str, rows: int) -> bool:
    """Whether more than `rows` messages hold this one token (as the tokenizer wrote it): one step
    past the first `rows` (OFFSET), without counting them."""
    quoted = '"' + token.replace('"', '""') + '"'
    return conn.execute("SELECT 1 FROM messages_fts WHERE messages_fts MATCH ? LIMIT 1 OFFSET ?",
                        (quoted, rows)).fetchone() is not None


def message_count(conn: apsw.Connection) -> int:
    """N as FTS5's bm25 sees it: the first varint of the index's averages record."""
    ranker = backend(conn)
    if ranker is not None:
        return ranker.message_rows()[0]
    row = conn.execute("SELECT block FROM messages_fts_data WHERE id = 1").fetchone()
    return varints(row[0])[0] if row else 0


def rows(conn: apsw.Connection, ids: Sequence[int], filters: MessageFilters) -> dict[int, Match]:
    """These messages, those of them that pass `filters`, by id (no ranking: bm25 0, rank -1)."""
    if not ids:
        return {}
    where, args = filters.sql()
    if _CARRAY is not None and isinstance(conn, apsw.Connection):  # one statement whatever the count (item_sessions)
        sql = (f"SELECT {_COLS} FROM carray(?) AS j CROSS JOIN messages AS m ON m.id = j.value"
               f"{' WHERE ' + where if where else ''}")
        return {r[0]: Match(*r, 0.0, -1) for r in conn.execute(sql, [_CARRAY(array("q", ids)), *args])}
    sql = (f"SELECT {_COLS} FROM messages AS m WHERE m.id IN ({','.join('?' * len(ids))})"
           f"{' AND ' + where if where else ''}")
    return {r[0]: Match(*r, 0.0, -1) for r in conn.execute(sql, [*ids, *args])}


def projects(conn: apsw.Connection, expr: str, terms: Sequence[Term], filters: MessageFilters,
             limit: int) -> list[tuple]:
    """Cross-project discovery: (project, matching messages, the id of its newest match) for each
    project holding a message that matches `expr` (the OR of `terms`) and passes `filters`, the
    project of the newest match first, at most `limit`."""
    ranker = backend(conn)
    if ranker is not None:
        return ranker.message_projects([t.text for t in terms], filters, limit, expr=None if terms else expr)
    where, args = filters.sql()
    cond = f"messages_fts MATCH ? {'AND ' + where if where else ''}"
    groups = conn.execute(
        f"SELECT m.project, count(*), max(m.at) FROM messages_fts CROSS JOIN messages AS m "
        f"ON m.id = messages_fts.rowid WHERE {cond} GROUP BY m.project ORDER BY 3 DESC LIMIT ?",
        [expr, *args, limit]).fetchall()
    out = []
    for project, count, _ in groups:
        row = conn.execute(
            f"SELECT m.id FROM messages_fts CROSS JOIN messages AS m ON m.id = messages_fts.rowid "
            f"WHERE {cond} AND m.project IS ? ORDER BY m.at DESC, m.id DESC LIMIT 1",
            [expr, *args, project]).fetchone()
        out.append((project, count, row[0]))
    return out


def boolean_matches(conn: apsw.Connection, expr: str, filters: MessageFilters, fetch: int) -> list[Match]:
    """recall's boolean mode on a backend that ranks the messages itself: the first `fetch`
    messages matching the FTS5 expression `expr` (already checked) that pass `filters`, by bm25."""
    ranker = backend(conn)
    answer = ranker.boolean_matches(expr, filters, fetch)
    shown = rows(conn, [mid for mid, _ in answer], filters)
    out = []
    for rank, (mid, score) in enumerate((mid, score) for mid, score in answer if mid in shown):
        m = shown[mid]
        m.bm25, m.bm25_rank = -score, rank
        out.append(m)
    return out


def texts(conn: apsw.Connection, ids: Sequence[int]) -> dict[int, str]:
    if not ids:
        return {}
    return dict(conn.execute(f"SELECT id, text FROM message_texts WHERE id IN ({','.join('?' * len(ids))})",
                             list(ids)))


def snippets(conn: apsw.Connection, expr: str, ids: Sequence[int], tokens: int = 24) -> dict[int, str]:
    """FTS5's own snippet of each message around its matched words, [marked]. A backend without
    FTS5 has it cut by FTS5 all the same, from the messages' texts in a table in memory (a snippet
    needs no statistics of the index, only the message's own words)."""
    if not ids:
        return {}
    if backend(conn) is not None:
        return _memory_snippets(texts(conn, ids), expr, tokens)
    rows = conn.execute(
        f"SELECT rowid, snippet(messages_fts, 0, '[', ']', '…', {int(tokens)}) FROM messages_fts "
        f"WHERE messages_fts MATCH ? AND rowid IN ({','.join('?' * len(ids))})", [expr, *ids])
    return dict(rows)


# -- FTS5 in memory, for a backend without it -------------------------------------------------------

_memory = threading.local()


def _memory_fts() -> apsw.Connection:
    """This thread's in-memory SQLite with an empty `messages_fts` of the messages tokenizer: what
    checks a boolean expression and cuts snippets for a backend that has no FTS5."""
    conn = getattr(_memory, "conn", None)
    if conn is None:
        conn = apsw.Connection(":memory:")
        conn.execute(f"CREATE VIRTUAL TABLE messages_fts USING fts5(text, tokenize='{MESSAGES_TOKENIZER}')")
        _memory.conn = conn
    return conn


def _memory_snippets(by_id: dict[int, str], expr: str, tokens: int) -> dict[int, str]:
    conn = _memory_fts()
    conn.execute("BEGIN")
    try:
        conn.executemany("INSERT INTO messages_fts(rowid, text) VALUES(?, ?)", list(by_id.items()))
        return dict(conn.execute(
            f"SELECT rowid, snippet(messages_fts, 0, '[', ']', '…', {int(tokens)}) FROM messages_fts "
            "WHERE messages_fts MATCH ?", (expr,)))
    finally:
        conn.execute("ROLLBACK")
