"""search, later and timeline: the ranked and the dated ways into the library."""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import apsw

from jezero.config import SearchConfig
from jezero.query import bm25, current, fused, rare, stats
from jezero.query.common import (
    HIT_FIELDS,
    LATER_DEFAULT_LIMIT,
    TIMELINE_DEFAULT_LIMIT,
    Hits,
    allowed_sources,
    budget,
    check_span,
    clamp_limit,
    fetch_hits,
    may_read,
    options_or_default,
    parse_stored,
    parse_time,
    reads_nothing,
    scope_conditions,
    time_conditions,
    utc_now,
)
from jezero.query.errors import ItemNotFound, QueryError
from jezero.query.terms import Term, check_query, parse_terms, split_tokenizer
from jezero.store import DEFAULT_TOKENIZER, FTS_COLUMNS, engines

# later(): how many subject hits to look at, and what a hit needs to count as on the same subject
# (terms are OR-ed, so one shared common word is enough to match). BM25 scores are not comparable
# across queries, so both bars are shares of scores for the same subject: current.SELF_SHARE of
# the item's own relevance (the scale of a full match), and LATER_MIN_SHARE of the best other hit
# (the seed's share, no longer of the item itself: the item matches its own title best by far, and
# set a bar that the revising session often missed).
LATER_POOL = 50
LATER_MIN_SHARE = 0.3
LATER_KEEP_CLOSEST = 2
# Revisions whose own subject is followed to the next one (each costs two searches). Half A: one
# found the third step of every coding chain; more also followed wrong hits in the chats (B 0.75 -> 0.55).
LATER_FOLLOW = 1
# In a project larger than LATER_POOL, the pool that distinctive_terms counts words in is the 50
# items that match the whole subject best (mostly the item's own small talk), not the project: a
# word most of them lack may still be in hundreds of the project's sessions (`Monday`, `party`,
# `Nadia` in a chat: 85, 50, 23 of 530). Then a hit must also hold a distinctive word that few
# items of the whole scope hold (at most distinctive_terms' bar, counted by a search of the word
# in the scope). The relevance bars stay on all the distinctive words: dropping the common ones
# from the subject instead lowered the item's own relevance and let three unrelated coding sessions
# in (padded coding precision 0.947 -> 0.818). Measured (benchmarks/retrieval/README.md, branch
# later3): padded chats precision 0.556 -> 1.000 (12 wrong -> 0, all in half B), recall 0.938
# unchanged; unpadded, where pools are not full, nothing changes.
LATER_COUNT_IN_SCOPE = True

# _in_parts(): a term in at most DRIVER_MAX_ROWS / 2 rows (by the sample) can drive a query whose
# other terms include one in HEAVY_ROWS rows and HEAVY_SHARE of the library or more (below that,
# scoring the frequent term costs less than the attempt risks). At most DRIVER_MAX_ROWS rows are
# scored that way (the frequent terms' part of each costs a Python call, ~5 us).
DRIVER_MAX_ROWS = 1000
HEAVY_ROWS = 3000
HEAVY_SHARE = 0.1

BEST_BM25 = "best_bm25"  # the candidate_pool rows with the best bm25 (the normal case)
NEWEST = "newest_matches"  # the most recently stored matches (common words only, or time budget)


@dataclass
class _Filters:
    sources: list[str] | None  # None: every source
    source: str | None
    project: str | None
    since: str | None
    until: str | None = None

    def sql(self, alias: str = "i") -> tuple[str, list]:
        where, args = scope_conditions(alias, self.sources, self.source)
        if self.project is not None:
            where.append(f"{alias}.project = ?")
            args.append(self.project)
        when, when_args = time_conditions(f"{alias}.occurred_at", self.since, self.until)
        return " AND ".join(where + when), args + when_args

    def accepts(self, row) -> bool:
        """What sql() selects, for a row in hand (source, project and occurred_at compare the
        same way: SQLite's BINARY collation orders UTF-8 text as Python orders str)."""
        return ((self.sources is None or row.source in self.sources)
                and (self.source is None or row.source == self.source)
                and (self.project is None or row.project == self.project)
                and (self.since is None or row.occurred_at >= self.since)
                and (self.until is None or row.occurred_at < self.until))


@dataclass(slots=True)
class _Candidate:
    id: int
    bm25: float
    occurred_at: str
    pool: str
    terms: list[Term]  # the terms of the MATCH that scored it
    idfs: list[float] | None = None  # given to jezero_bm25; None when FTS5 computed them

    def __post_init__(self):
        self.bm25 = settled(self.bm25)


# Significant digits a relevance keeps. Which plan scores a row (one MATCH of every term, the
# parts of _in_parts, rare.score in Python, a floored word's jezero_bm25) depends on what the
# process has learnt (term counts, warm or cold, persisted.py), and each plan adds the same terms'
# parts in another order: the sums differ in their last bits (-11.141773746881867 cold,
# ...869 warm), and so did the answer's numbers between two calls or two workers. Rounded to
# SETTLED_DIGITS they are the same whichever plan ran; no two rows' real scores are that close.
SETTLED_DIGITS = 10


def settled(value: float) -> float:
    return float(f"{value:.{SETTLED_DIGITS}g}")


def search(
    conn: apsw.Connection,
    query: str,
    *,
    allowed: Sequence[str] = ("*",),
    source: str | None = None,
    project: str | None = None,
    since: str | datetime | None = None,
    limit: int | None = None,
    options: SearchConfig | None = None,
    explain: bool = False,
    now: datetime | None = None,
    recency_weight: float | None = None,
    lanes: Sequence[str] | None = None,
    current_first: bool = True,
    semantic=None,
) -> list[dict]:
    """Items matching any term of `query`, best first: BM25 over the indexed fields, then a
    recency factor (see the package docstring for the method and for what the time budget does).

    `lanes` chooses the rankings: ("items",) is the items search alone; ("messages",) the
    messages index alone, each session shown by the item holding its best message; both (the
    default) fuses them per session (query/fused/). `semantic`, a query.vectors.VectorLane
    (given when `[semantic]` turns the lane on), adds the lane "vectors" to the default and to
    the choices; when the library's vectors cannot answer (another model, none yet) the hits'
    `notes` say why and the keyword lanes answer alone.

    Each hit: id, title, summary, project, source, agent, session_id, occurred_at, score; with
    `explain`, an `explain` dict of the numbers behind the score. Never raises for what the query
    text contains; raises QueryError for a bad since, limit, recency_weight or lanes.

    With `current_first` (the default), a hit that has a newer hit of its project on its subject
    further down the items ranking gets that hit placed just before it (current.py: the current
    decision first, the old one kept). In a fused search this happens in the items lane, before
    fusion (its rule compares items' scores, which fusion scores are not), and once more over the
    fused order, where a newer session moves only when its transcript holds the words too
    (fused.current_first).
    """
    opts = options_or_default(options)
    chosen = fused.check_lanes(lanes, vectors=semantic is not None)
    ranker = getattr(conn, "ranker", None)  # a backend ranking in its own engine (jezero.store.backends)
    if ranker is not None and not set(chosen) <= set(ranker.lanes):
        hits = search(conn, query, allowed=allowed, source=source, project=project, since=since, limit=limit,
                      options=options, explain=explain, now=now, recency_weight=recency_weight,
                      lanes=ranker.lanes, current_first=current_first)
        hits = hits if isinstance(hits, Hits) else Hits(hits)
        hits.notes = (*hits.notes, f"the {ranker.name} backend ranks the {', '.join(ranker.lanes)} lane only")
        return hits
    if chosen != ("items",):
        return _fused(conn, query, chosen, allowed=allowed, source=source, project=project, since=since,
                      limit=clamp_limit(limit, opts.default_limit, opts.max_limit), options=opts, explain=explain,
                      now=now, recency_weight=recency_weight, current_first=current_first, semantic=semantic)
    hits = _search(
        conn, query, allowed=allowed, source=source, project=project, since=since,
        limit=clamp_limit(limit, opts.default_limit, opts.max_limit), options=opts, explain=explain, now=now,
        recency_weight=recency_weight,
    )
    return _current_first(conn, hits, opts) if current_first else hits


def _current_first(conn, hits: list[dict], options: SearchConfig, may_move=None,
                   move_share: float | None = None, may_revise=None) -> list[dict]:
    """current.current_first over an items ranking, keeping whether the search was cut; the
    result's `placed` is {moved hit's id: the id of the hit it was placed before}."""
    if len(hits) < 2:
        return hits
    placed: dict = {}
    with budget(conn, options.time_budget_ms):
        moved = Hits(current.current_first(conn, hits, library_tokenizer(conn), may_move=may_move,
                                           move_share=move_share, placed=placed, may_revise=may_revise))
    moved.cut = getattr(hits, "cut", False)
    moved.placed = placed
    return moved


def _search(conn, query, *, allowed=("*",), source=None, project=None, since=None, limit, options, explain=False,
            now=None, recency_weight=None, prune=True) -> list[dict]:
    """search() with the limit already decided. `prune=False` runs the plain algorithm (every
    term in one ranked MATCH), which the benchmark and the tests compare against."""
    since_text = parse_time(since, "since")
    now_dt = utc_now(now)
    weight = options.recency_weight if recency_weight is None else _weight(recency_weight)
    if query is None:
        return []
    if not isinstance(query, str):
        raise QueryError(f"query must be text, got {type(query).__name__}")
    check_query(query)
    tokenizer = library_tokenizer(conn)
    terms = parse_terms(query, tokenizer)
    if not terms:
        return []
    sources = allowed_sources(conn, allowed)
    if reads_nothing(sources, source):
        return []
    filters = _Filters(sources, source or None, project or None, since_text)
    with budget(conn, options.time_budget_ms) as b:
        try:
            hits = Hits(_ranked(conn, b, terms, filters, tokenizer, limit=limit, options=options, explain=explain,
                                now=now_dt, weight=weight, prune=prune))
        except apsw.InterruptError:
            hits = Hits()  # out of work where no partial answer exists (e.g. reading the index stats)
        hits.cut = b.interrupted
        return hits


def _fused(conn, query, lanes, *, allowed, source, project, since, limit, options, explain, now,
           recency_weight, current_first, semantic=None) -> list[dict]:
    """search() over the messages lane too (query/fused/); the items lane is _search."""
    since_text = parse_time(since, "since")
    if recency_weight is not None:
        _weight(recency_weight)
    if query is None:
        return []
    if not isinstance(query, str):
        raise QueryError(f"query must be text, got {type(query).__name__}")
    check_query(query)
    sources = allowed_sources(conn, allowed)
    if reads_nothing(sources, source):
        return []

    def items_lane(n: int) -> list[dict]:
        hits = _search(conn, query, allowed=allowed, source=source, project=project, since=since, limit=n,
                       options=options, explain=explain, now=now, recency_weight=recency_weight)
        return _current_first(conn, hits, options) if current_first else hits

    def vectors_lane():
        return semantic.sessions(conn, query, sources=sources, source=source or None, project=project or None,
                                 since=since_text)

    return fused.search(conn, query, lanes, items_lane, sources=sources, source=source or None,
                        project=project or None, since=since_text, limit=limit,
                        time_budget_ms=options.time_budget_ms, explain=explain,
                        reorder=(lambda hits, may_move, move_share, may_revise=None:
                                 _current_first(conn, hits, options, may_move, move_share, may_revise))
                        if current_first else None,
                        vectors_lane=vectors_lane if semantic is not None else None, engine=options.engine)


def _ranked(conn, b, terms, filters, tokenizer, *, limit, options, explain, now, weight, prune) -> list[dict]:
    pool = options.candidate_pool
    ranker = getattr(conn, "ranker", None)
    if ranker is not None:  # a backend ranking in its own engine: its pool, after the same filters
        index, picked, engine = None, ranker.candidates(terms, filters, pool), ranker.name
    else:
        index = stats.index_stats(conn)
        if index.rows == 0:
            return []
        # Seam (issue 13): the candidate pool from the configured index engine; None means FTS5's
        # path below. The engine applies the filters before its cut; floored words need no care there.
        picked = engines.pool(conn, options.engine, terms, filters, pool) if prune else None
        engine = options.engine
    kept, floored = stats.classify(conn, index, terms) if prune and picked is None else (terms, [])
    candidates: list[_Candidate] = []
    complete = False
    parts = None
    if picked is not None:
        parts = [_Candidate(i, -relevance, at, engine, kept) for i, relevance, at in picked], True
    elif kept and prune:
        try:
            parts = _in_parts(conn, index, kept, filters, tokenizer, pool, limit, now,
                              options.recency_half_life_days, weight)
        except apsw.InterruptError:
            parts = None  # the full query below will meet the same deadline and fall back
    if parts is not None:
        candidates, complete = parts
    elif kept:
        try:
            candidates = _best(conn, kept, filters, pool)
            complete = len(candidates) < pool
        except apsw.InterruptError:
            # Ranking every match took longer than the budget: rank the most recent matches
            # instead, with a fresh allowance. If that too runs out, return nothing.
            b.renew()
            try:
                candidates = _newest(conn, kept, filters, pool, None)
            except apsw.InterruptError:
                candidates = []
    if floored and (not kept or (complete and len(candidates) < limit)):
        # Only words in half the library or more: their bm25 is ~1e-6 for every row, so
        # there is no relevance to sort on. Take the newest matches, scored exactly as
        # bm25 would score them. Also used to fill a short result with such rows, which
        # plain bm25 would list after every real match.
        if b.expired():
            b.renew()
        try:
            exclude = [c.id for c in candidates]
            idfs = [bm25.IDF_FLOOR] * len(floored)
            candidates += _newest(conn, floored, filters, pool - len(candidates), idfs, exclude)
        except apsw.InterruptError:
            pass
    ranked = _rank(candidates, now, options.recency_half_life_days, weight, limit)
    b.renew()  # the ranking is done: fetching its rows must not cost the answer
    rows = fetch_hits(conn, [c.id for c, _, _, _ in ranked])
    hits = []
    # An item deleted by a writer since stage 1 (another snapshot) is simply left out.
    ranked = [r for r in ranked if r[0].id in rows]
    for cand, score, factor, age in ranked:
        hit = dict(rows[cand.id])
        hit["score"] = score
        if explain:
            hit["explain"] = {
                "bm25": cand.bm25, "relevance": -cand.bm25, "fields": None, "recency_factor": factor,
                "age_days": age, "score": score, "matched_terms": [], "candidates": cand.pool,
                "ignored_terms": [t.text for t in floored] if cand.terms is not floored else [],
            }
        hits.append(hit)
    cut = b.interrupted  # the answer was cut only if the ranking was, not the explanation
    if explain and hits and index is not None:
        b.renew()
        try:
            _explain(conn, index, tokenizer, [(h, c) for h, (c, _, _, _) in zip(hits, ranked)])
        except apsw.InterruptError:
            pass  # the ranking numbers are there; the column split is left as None
    b.interrupted = cut
    return hits


def _weight(value) -> float:
    try:
        w = float(value)
    except (TypeError, ValueError):
        raise QueryError(f"recency_weight must be a number between 0 and 1, got {value!r}") from None
    if not 0.0 <= w <= 1.0:
        raise QueryError(f"recency_weight must be between 0 and 1, got {value!r}")
    return w


def library_tokenizer(conn: apsw.Connection) -> str:
    row = conn.execute("SELECT value FROM meta WHERE key='tokenizer'").fetchone()
    return row[0] if row else DEFAULT_TOKENIZER


def _expression(terms: list[Term]) -> str:
    return " OR ".join(t.quoted for t in terms)


def _best(conn, terms: list[Term], filters: _Filters, pool: int) -> list[_Candidate]:
    """Stage 1: the `pool` rows with the best bm25 among the rows that pass the filters; on a
    tie the newer id first, as the final ranking orders them (_by_relevance), so a tie at the
    pool's boundary keeps the rows the ranking would put first."""
    where, args = filters.sql()
    expr = _expression(terms)
    if where:
        # CROSS JOIN keeps items_fts as the outer loop: with items outside, SQLite would probe
        # FTS5 once per item by rowid, and each probe restarts the MATCH (and bm25's counts).
        sql = (f"SELECT items_fts.rowid, {bm25.BM25_SQL} AS b, i.occurred_at FROM items_fts "
               f"CROSS JOIN items AS i ON i.id = items_fts.rowid "
               f"WHERE items_fts MATCH ? AND {where} ORDER BY b, items_fts.rowid DESC LIMIT ?")
    else:
        # Without filters, join only the pool, not every match.
        sql = (f"SELECT c.id, c.b, i.occurred_at FROM (SELECT rowid AS id, {bm25.BM25_SQL} AS b "
               f"FROM items_fts WHERE items_fts MATCH ? ORDER BY b, rowid DESC LIMIT ?) AS c "
               f"CROSS JOIN items AS i ON i.id = c.id")
    params = [expr, *args, pool] if where else [expr, pool]
    return [_Candidate(r[0], r[1], r[2], BEST_BM25, terms) for r in conn.execute(sql, params)]


def _in_parts(conn, index: stats.IndexStats, kept: list[Term], filters: _Filters, tokenizer: str, pool: int,
              limit: int, now: datetime, half_life: float, weight: float) -> tuple[list[_Candidate], bool] | None:
    """The answer of _best (the same `limit` results, in the same order, with the same scores)
    without FTS5 walking every list: None when there is nothing to save (then _best runs). Also
    says whether the candidates are every match that passes the filters (to fill a short list).

    bm25 is a sum over the query's phrases, so the terms can be handled in parts:

    1. "found": terms whose trigram lists are long but whose rows are few (rare.worth_it). Their
       rows come from rare.find, with their exact n, and each such row is scored in Python for
       every kept term. No other row holds these terms.
    2. "rare": terms the sample shows in at most DRIVER_MAX_ROWS / 2 rows. FTS5 ranks their rows
       by its bm25 for these terms; the frequent terms' part is added through jezero_bm25 over
       `(rare) AND (frequent)` with their exact IDFs, where FTS5 only seeks the frequent lists.
    3. "frequent": the rest. A row holding only frequent terms scores at most (k1 + 1) x the sum
       of their IDFs (the recency factor is at most 1): once the `limit`-th result so far beats
       that, no such row can enter the answer. Otherwise FTS5's best `pool` rows for the frequent
       terms alone (their bm25 is their full score) are merged in.
    """
    fold = rare.folder(*split_tokenizer(tokenizer))
    found: dict[Term, rare.Found] = {}
    cheap: list[Term] = []
    frequent: list[Term] = []
    heavy = False
    for t in kept:
        if fold is not None and rare.worth_it(conn, index, t):
            hit = rare.find(conn, index, t, fold)
            if hit is not None:
                found[t] = hit
                stats.remember(index, t, hit.n, share=True)
                continue
        est = stats.estimated_rows(conn, index, t)
        if est is None:
            return None
        if est <= DRIVER_MAX_ROWS / 2:
            cheap.append(t)
        else:
            frequent.append(t)
            heavy = heavy or est >= max(HEAVY_ROWS, HEAVY_SHARE * index.rows)
    if not found and not (cheap and heavy):
        return None  # nothing a part would save: one MATCH of every term costs the least

    idfs: dict[Term, float] = {t: bm25.idf(index.rows, f.n) for t, f in found.items()}

    def idf(t: Term) -> float:
        if t not in idfs:
            idfs[t] = bm25.idf(index.rows, stats.exact_count(conn, index, t))
        return idfs[t]

    # 1. Rows holding a found term, scored in full.
    held = {r.id: r for f in found.values() for r in f.rows.values()}
    scored: dict[int, _Candidate] = {}
    if held:
        weights = [idf(t) for t in kept]
        needles = [rare.folded(t) for t in kept]
        avgdl = index.tokens / index.rows
        for r in held.values():
            if filters.accepts(r):
                scored[r.id] = _Candidate(r.id, rare.score(r, needles, weights, avgdl), r.occurred_at, BEST_BM25,
                                          kept, weights)
    # 2. Rows holding a rare term (and no found term).
    if cheap and frequent and heavy:
        rows = _rare_rows(conn, cheap, frequent, [idf(t) for t in frequent], filters)
        if rows is None:
            frequent += cheap  # more rows than a driver may have: rank them with the frequent ones
        else:
            for rowid, score, occurred_at in rows:
                if rowid not in held:
                    scored[rowid] = _Candidate(rowid, score, occurred_at, BEST_BM25, kept)
    else:
        frequent += cheap
    candidates = sorted(scored.values(), key=_by_relevance)
    if not frequent:
        return candidates[:pool], len(candidates) < pool
    # 3. Rows holding only frequent terms.
    bound = (bm25.K1 + 1.0) * sum(idf(t) for t in frequent)
    ranked = _rank(candidates[:pool], now, half_life, weight, limit)
    if len(ranked) == limit and ranked[-1][1] > bound:
        return candidates[:pool], False
    best = _best(conn, frequent, filters, pool)
    merged = sorted(candidates + [c for c in best if c.id not in scored and c.id not in held], key=_by_relevance)
    return merged[:pool], len(best) < pool and len(merged) < pool


def _rare_rows(conn, cheap: list[Term], frequent: list[Term], frequent_idfs: list[float],
               filters: _Filters) -> list[tuple] | None:
    """(rowid, bm25, occurred_at) of every row that holds a `cheap` term and passes the filters,
    bm25 counting the frequent terms too; None past DRIVER_MAX_ROWS rows."""
    where, args = filters.sql()
    sql = (f"SELECT items_fts.rowid, {bm25.BM25_SQL}, i.occurred_at FROM items_fts "
           f"CROSS JOIN items AS i ON i.id = items_fts.rowid WHERE items_fts MATCH ? "
           f"{'AND ' + where if where else ''} LIMIT ?")
    rows = conn.execute(sql, [_expression(cheap), *args, DRIVER_MAX_ROWS + 1]).fetchall()
    if len(rows) > DRIVER_MAX_ROWS:
        return None
    if not rows:
        return []
    bm25.register(conn)
    ids = [r[0] for r in rows]
    extra = dict(conn.execute(
        f"SELECT rowid, {bm25.aux_sql([0.0] * len(cheap) + frequent_idfs)} FROM items_fts "
        f"WHERE items_fts MATCH ? AND rowid BETWEEN ? AND ?",
        (f"({_expression(cheap)}) AND ({_expression(frequent)})", min(ids), max(ids))))
    return [(r[0], r[1] + extra.get(r[0], 0.0), r[2]) for r in rows]


def _newest(conn, terms: list[Term], filters: _Filters, count: int, idfs: list[float] | None,
            exclude: Sequence[int] = ()) -> list[_Candidate]:
    """The `count` most recently stored matches (highest ids), scored by bm25: FTS5's own when
    `idfs` is None, else jezero_bm25 with those IDFs (no pass over the whole index)."""
    if count <= 0:
        return []
    where, args = filters.sql()
    if exclude:
        where = " AND ".join(x for x in (where, f"items_fts.rowid NOT IN ({','.join('?' * len(exclude))})") if x)
        args = [*args, *exclude]
    if idfs is None:
        score = bm25.BM25_SQL
    else:
        bm25.register(conn)
        score = bm25.aux_sql(idfs)
    sql = (f"SELECT items_fts.rowid, {score}, i.occurred_at FROM items_fts "
           f"CROSS JOIN items AS i ON i.id = items_fts.rowid "
           f"WHERE items_fts MATCH ? {'AND ' + where if where else ''} ORDER BY items_fts.rowid DESC LIMIT ?")
    rows = conn.execute(sql, [_expression(terms), *args, count])
    return [_Candidate(r[0], r[1], r[2], NEWEST, terms, idfs) for r in rows]


def _rank(candidates: list[_Candidate], now: datetime, half_life: float, weight: float, limit: int):
    """Stage 2: relevance times the recency factor; the first `limit`, best first (newer first on
    a tie). The factor is at most 1, so once a candidate's relevance is below the limit-th score
    found so far, no later (less relevant) candidate can get in: the loop stops there."""
    best: list[tuple] = []  # a min-heap of the `limit` best so far: (score, id, ...), worst on top
    for c in sorted(candidates, key=_by_relevance):
        if len(best) == limit and -c.bm25 < best[0][0]:
            break
        age = max((now - parse_stored(c.occurred_at)).total_seconds() / 86400, 0.0)
        factor = (1 - weight) + weight * 0.5 ** (age / half_life)
        entry = (-c.bm25 * factor, c.id, factor, age, c)
        if len(best) < limit:
            heapq.heappush(best, entry)
        else:
            heapq.heappushpop(best, entry)
    best.sort(reverse=True)
    return [(c, score, factor, age) for score, _, factor, age, c in best]


def _by_relevance(c: _Candidate) -> tuple:
    return (c.bm25, -c.id)


def _explain(conn, index: stats.IndexStats, tokenizer: str, pairs: list[tuple[dict, _Candidate]]) -> None:
    """Fill each hit's explain with the column split and the matched terms (see bm25.py)."""
    try:
        tokenize_doc = _doc_tokenizer(conn, tokenizer)
    except apsw.Error:  # a custom tokenizer this connection lacks: no column split
        return
    ids = [c.id for _, c in pairs]
    texts = {r[0]: list(r[1:]) for r in conn.execute(
        f"SELECT rowid, {', '.join(FTS_COLUMNS)} FROM items_fts WHERE rowid IN ({','.join('?' * len(ids))})", ids)}
    known: dict[int, list[float]] = {}
    for hit, cand in pairs:
        idfs = cand.idfs or known.get(id(cand.terms))
        if idfs is None:
            idfs = known[id(cand.terms)] = [bm25.idf(index.rows, stats.exact_count(conn, index, t))
                                            for t in cand.terms]
        # one order whichever plan listed the terms (a found term first, or the frequent ones):
        # the column sums and matched_terms would follow it (-> same answer cold and warm)
        terms, idfs = zip(*sorted(zip(cand.terms, idfs), key=lambda p: p[0].key)) if cand.terms else ((), ())
        parts = bm25.explain_row(texts.get(cand.id, [""] * len(FTS_COLUMNS)), [t.key for t in terms], list(idfs),
                                 index.rows, index.tokens, tokenize_doc)
        hit["explain"]["fields"] = parts["fields"]
        hit["explain"]["matched_terms"] = [terms[i].text for i in parts["matched"]]


def _doc_tokenizer(conn, spec: str):
    name, args = split_tokenizer(spec)
    tok = conn.fts5_tokenizer(name, args)
    return lambda text: tok(text.encode("utf-8"), apsw.FTS5_TOKENIZE_DOCUMENT, None,
                            include_offsets=False, include_colocated=False)


# -- later --------------------------------------------------------------------------------------


def later(
    conn: apsw.Connection,
    item_id: int,
    query: str | None = None,
    *,
    allowed: Sequence[str] = ("*",),
    limit: int | None = None,
    options: SearchConfig | None = None,
    now: datetime | None = None,
) -> dict:
    """Newer items on the same subject as `item_id`, newest first.

    1. The subject: the item's distinctive words (current.distinctive_terms: of its decision,
       fact and file atoms, else its title, those few items of its project hold). Search them
       within the item's project (its source when it has none), since the item's time
       (inclusive), LATER_POOL results, pure relevance.
    2. Drop the item; keep hits with relevance >= current.DISTINCT_SELF_SHARE x the item's own
       and >= LATER_MIN_SHARE x the best other hit, and (current.FILES_ALONE) holding a word of
       the subject beyond the item's file paths when it has such words, and (LATER_COUNT_IN_SCOPE)
       in a project larger than LATER_POOL, a distinctive word that few items of the whole project
       hold; then the same from the oldest such hit's own subject, the chain's next step
       (LATER_FOLLOW: a chain drifts).
    With a query: search it the same way (current.SELF_SHARE x the item's own relevance for it),
    and keep only the hits that step 2 keeps too (its next step at current.SELF_SHARE: the query's
    bars apply as well): the words narrow the subject, they do not replace it.
    3. Keep the LATER_KEEP_CLOSEST most relevant; fill the other places with the newest.
    4. Newest first, at most `limit` (5 by default): matched_by = "subject".
    5. Nothing left: the project's (or source's) newer items by date: matched_by = "project_timeline".
    """
    opts = options_or_default(options)
    lim = clamp_limit(limit, min(LATER_DEFAULT_LIMIT, opts.max_limit), opts.max_limit)
    item = brief(conn, item_id, allowed)
    asked = isinstance(query, str) and bool(query.strip())
    scope = {"project": item["project"]} if item["project"] else {"source": item["source"]}
    if asked:
        # The agent's words narrow the subject; they do not replace it. Generic words ("how are
        # invoices generated") match much of a project: a hit must also be one that the item's
        # own subject finds.
        on_it = {h["id"] for h in _on_its_subject(conn, item, allowed, opts, now, scope, current.SELF_SHARE)}
        fair = sorted((h for h in _fair(conn, item, query, allowed, opts, now, scope) if h["id"] in on_it),
                      key=lambda h: (-h["score"], -h["id"]))
    else:
        fair = _on_its_subject(conn, item, allowed, opts, now, scope)
    if fair:  # the closest first
        chosen = fair[:LATER_KEEP_CLOSEST]
        chosen += _by_date(fair[LATER_KEEP_CLOSEST:])[: max(lim - len(chosen), 0)]
        return {"matched_by": "subject", "item": item, "items": _by_date(chosen)[:lim]}
    newer = _timeline(conn, since=item["occurred_at"], until=None, limit=lim + 1, allowed=allowed, **scope)
    return {"matched_by": "project_timeline", "item": item,
            "items": [h for h in newer if h["id"] != item["id"]][:lim]}


def _fair(conn, item: dict, subject: str, allowed, options: SearchConfig, now, scope: dict,
          share: float = current.SELF_SHARE) -> list[dict]:
    """The newer hits of the item's scope for `subject` that pass both bars: `share` of the item's
    own relevance and LATER_MIN_SHARE of the best other hit."""
    hits = _search(conn, subject, allowed=allowed, since=item["occurred_at"], limit=LATER_POOL, options=options,
                   now=now, recency_weight=0.0, **scope)
    own = next((h["score"] for h in hits if h["id"] == item["id"]), 0.0)
    others = [h for h in hits if h["id"] != item["id"]]
    best = max((h["score"] for h in others), default=0.0)
    bar = max(share * own, LATER_MIN_SHARE * best)
    return [h for h in others if h["score"] > 0 and h["score"] >= bar]


def _on_its_subject(conn, item: dict, allowed, options: SearchConfig, now, scope: dict,
                    follow_share: float = current.DISTINCT_SELF_SHARE) -> list[dict]:
    """The newer hits on the item's distinctive subject, then on the subjects of those kept, up
    to LATER_FOLLOW of them, oldest first: a chain of revisions drifts (Postgres FTS →
    Meilisearch → "replace Meilisearch with Typesense"), and its last step names the middle one's
    choice, not the first's. The closest first: the hits found directly by relevance, then those
    found through a revision (their scores are for another subject). `follow_share` is the bar
    for the next step: with a query, whose own bars apply too, the seed-derived SELF_SHARE."""
    kept: dict[int, dict] = {}
    anchors, followed = [item], 0
    while anchors and followed <= LATER_FOLLOW:
        anchor = anchors.pop(0)
        followed += 1
        (subject, terms), rare_terms = _distinctive(conn, anchor, allowed, options, now, scope)
        found = _fair(conn, anchor, subject, allowed, options, now, scope,
                      current.DISTINCT_SELF_SHARE if anchor is item else follow_share)
        if terms and found:  # a shared file is not a shared subject (current.FILES_ALONE)
            texts = current._Texts(conn, (), library_tokenizer(conn))
            found = current.beyond_files(texts, anchor, terms, found)
            if rare_terms is not None and len(rare_terms) < len(terms):
                # nor is a word hundreds of the project's items hold (LATER_COUNT_IN_SCOPE)
                found = [h for h in found if any(texts.held([h["id"]], t) for t in rare_terms)]
        new = sorted((h for h in found if h["id"] not in kept and h["id"] != item["id"]),
                     key=lambda h: (-h["score"], -h["id"]))
        kept.update((h["id"], h) for h in new)
        anchors = sorted([*anchors, *new], key=lambda h: (h["occurred_at"], h["id"]))
    return list(kept.values())


def _distinctive(conn, item: dict, allowed, options: SearchConfig, now, scope: dict):
    """((subject, terms), rare terms). The subject: the item's subject (its decision, fact and file
    atoms, else its title) as the words that few items of its project hold
    (current.distinctive_terms), each quoted, measured on the project's items that match it best at
    any date; all the words of its title and atoms, with no terms, when none is that rare. The rare
    terms (LATER_COUNT_IN_SCOPE): those of the terms that few items of the whole scope hold, or None
    when the pool holds every item with a subject word and already counted them so."""
    tokenizer = library_tokenizer(conn)
    text = current.subject_text(conn, item)
    pool = _search(conn, text, allowed=allowed, limit=LATER_POOL, options=options, now=now, recency_weight=0.0,
                   **scope)
    # A pool under LATER_POOL holds every item of the scope with a subject word: a word's share is
    # then of the whole scope (in a project where every item names `heron`, a quarter of the
    # matches is not a quarter of the project).
    full = len(pool) >= LATER_POOL
    total = _scope_size(conn, allowed, scope) if not full else None
    terms = current.distinctive_terms(conn, item, pool, tokenizer, total=total)
    if full and terms and LATER_COUNT_IN_SCOPE:
        # A full pool is the LATER_POOL items that match the whole subject best, not the project:
        # a word most of them lack may still be in hundreds of the project's other items. Count
        # the holders in the scope itself, against the same bar (distinctive_terms' share of the
        # pool).
        bar = current.DISTINCT_SHARE * max(len([h for h in pool if h["id"] != item["id"]]), current.MIN_POOL)
        rare_terms = [t for t in terms if _holders(conn, t, item, allowed, options, now, scope, int(bar) + 1) <= bar]
    else:
        rare_terms = None
    return ((" ".join(t.quoted for t in terms), terms) if terms else (text, [])), rare_terms


def _holders(conn, term, item: dict, allowed, options: SearchConfig, now, scope: dict, enough: int) -> int:
    """How many items of the scope other than `item` hold `term`, counted up to `enough` (0 when
    the search was cut by the time budget: the term is then kept, as distinctive_terms keeps
    every term on an error)."""
    hits = _search(conn, term.quoted, allowed=allowed, limit=enough + 1, options=options, now=now,
                   recency_weight=0.0, **scope)
    if getattr(hits, "cut", False):
        return 0
    return sum(1 for h in hits if h["id"] != item["id"])


def _scope_size(conn, allowed, scope: dict) -> int:
    """How many items of the project (or source) the caller may read."""
    sources = allowed_sources(conn, allowed)
    where, args = _Filters(sources, scope.get("source"), scope.get("project"), None).sql("items")
    return conn.execute(f"SELECT count(*) FROM items WHERE {where}", args).fetchone()[0]


def _by_date(hits: list[dict]) -> list[dict]:
    return sorted(hits, key=lambda h: (h["occurred_at"], h["id"]), reverse=True)


def brief(conn: apsw.Connection, item_id, allowed) -> dict:
    """An item's hit fields, if the caller may read it."""
    ident = item_id_or_raise(item_id)
    row = fetch_hits(conn, [ident]).get(ident)
    if row is None or not may_read(row["source"], allowed):
        raise ItemNotFound(item_id)
    return row


MAX_ITEM_ID = 2**63 - 1  # SQLite's largest rowid


def item_id_or_raise(item_id) -> int:
    if isinstance(item_id, bool):
        raise ItemNotFound(item_id)
    try:
        value = int(item_id)
    except (TypeError, ValueError, OverflowError):
        raise ItemNotFound(item_id) from None
    if not 1 <= value <= MAX_ITEM_ID:  # SQLite cannot even bind a larger one (OverflowError)
        raise ItemNotFound(item_id)
    return value


# -- timeline -----------------------------------------------------------------------------------


def timeline(
    conn: apsw.Connection,
    *,
    project: str | None = None,
    source: str | None = None,
    since: str | datetime | None = None,
    until: str | datetime | None = None,
    limit: int | None = None,
    allowed: Sequence[str] = ("*",),
    options: SearchConfig | None = None,
) -> list[dict]:
    """A project's or a source's items by date, newest first; since inclusive, until exclusive.
    Hits carry score None (nothing is ranked)."""
    opts = options_or_default(options)
    if not project and not source:
        raise QueryError("timeline needs a project or a source")
    since, until = parse_time(since, "since"), parse_time(until, "until")
    check_span(since, until, "until")
    return _timeline(conn, project=project or None, source=source or None, since=since, until=until,
                     limit=clamp_limit(limit, min(TIMELINE_DEFAULT_LIMIT, opts.max_limit), opts.max_limit),
                     allowed=allowed)


def _timeline(conn, *, project=None, source=None, since=None, until=None, limit: int, allowed) -> list[dict]:
    sources = allowed_sources(conn, allowed)
    if sources is not None and (not sources or (source is not None and source not in sources)):
        return []
    where, args = _Filters(sources, source, project, since, until).sql("items")
    rows = conn.execute(
        f"SELECT {', '.join(HIT_FIELDS)} FROM items WHERE {where} ORDER BY occurred_at DESC, id DESC LIMIT ?",
        [*args, limit],
    )
    return [{**dict(zip(HIT_FIELDS, r)), "score": None} for r in rows]
