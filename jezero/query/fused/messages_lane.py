"""The messages lane: sessions ranked by their transcripts.

For each ranking term (not a stop word, terms.is_stop_word, nor under three characters, unless
quoted), FTS5 scores every message holding it with bm25 for that term alone (its frequency in
the message, the message's length), its IDF counted over sessions (SESSION_IDF); a session scores,
per term, its best message's score, summed over the terms it holds, times the IDF-weighted share
of the query's words it holds to COVERAGE_POWER. So a session holding more of the query's rarer
words comes first, and a word said in one short message counts more than the same word lost in a
long log. On a near tie (NEAR_TIE) the session whose best message is newer goes first. The
session is shown by its best message (the highest sum over its terms). A word also matches its
other English forms (terms.word_forms); when only those forms make it common (below), it is also
read as written (WRITTEN_FORM). A term in more than LANE_MAX_ROWS messages is read at its newest
LANE_MAX_ROWS (what passes the filters), each scored alike: older sessions holding only that word
are not seen by this lane (`explain` says so; the items lane still reads it). Its IDF counts it
as held by its share of the sessions within those rows' time, over every session within the
filters (WINDOW_DENSITY), not by the few sessions its newest rows reached. A term the index reads
as a phrase (`scripts/order_event.py`: four words) is looked up only when its words are in
PHRASE_MAX_ROWS messages at most, together: FTS5 reads every word's list to check positions,
which for four common words cost 10-40 ms at 2,000 sessions. Such identifiers are what the items'
trigram index finds well.

The rules named here are constants of rules.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from operator import itemgetter

import apsw

from jezero.query import bm25, stats
from jezero.query import messages as mq
from jezero.query.common import Hits, budget, time_conditions
from jezero.query.fused import rules
from jezero.query.terms import Term, is_stop_word, word_forms


@dataclass
class LaneHit:
    """A session as the messages lane found it: the item holding its best message."""

    item_id: int
    source: str
    session_id: str
    rank: int  # from 1
    match: mq.Match
    left_out: list[str]  # query phrases too costly for this lane
    capped: list[str] = ()  # query words ranked among their newest LANE_MAX_ROWS messages only
    near_tie: bool = False  # moved above a near-tie older session (NEAR_TIE)


def message_lane(conn: apsw.Connection, query: str, *, sources, source, project, since, time_budget_ms: int,
                 sessions: int = rules.LANE_SESSIONS, engine: str | None = None) -> Hits:
    """Sessions ranked by their messages (see the module docstring): for each ranking term, FTS5's
    bm25 of every message holding it (its newest LANE_MAX_ROWS); a session scores its best
    message's per term, summed over the terms it holds. Shown by its best message. With a derived
    index `engine` (tantivy), its messages index reads the terms by the same rules
    (messages.engine_term_matches; its BM25 for the words below LANE_MAX_ROWS)."""
    if not mq.has_messages(conn):
        return Hits()
    terms = mq.terms_for(conn, query)
    if not terms:
        return Hits()
    filters = mq.MessageFilters(sources=sources, source=source, projects=[project] if project else None,
                                include_tools=True, include_subagents=True, since=since)
    with budget(conn, time_budget_ms):
        try:
            ranker = mq.backend(conn)  # a backend ranking the messages itself counts its own rows
            total, sessions_n = ranker.message_rows() if ranker is not None else \
                (mq.message_count(conn), stats.index_stats(conn).rows)
            answered = mq.engine_term_matches(conn, engine, [t for t in terms if _ranking(t)], filters,
                                              rules.LANE_MAX_ROWS, rules.PHRASE_MAX_ROWS,
                                              bm25.idf(total, rules.LANE_MAX_ROWS)
                                              if total > rules.LANE_MAX_ROWS else None)
            per_term: list[tuple[str, list[tuple]]]
            per_term, left_out, capped = answered if answered is not None else ([], [], [])
            # how many messages hold each term, up to LANE_MAX_ROWS (for its IDF over sessions):
            # before the filters, as the FTS5 path below counts it (the n of the IDF its bm25 used,
            # which _by_sessions replaces), where the engine counted it; else its filtered matches
            counted = getattr(per_term, "held", None) or {}
            held_by = {text: rules.LANE_MAX_ROWS if text in capped
                       else min(counted.get(text, len(found)), rules.LANE_MAX_ROWS)
                       for text, found in per_term}
            for t in terms if answered is None else ():
                if not _ranking(t):
                    continue  # "did", "where", "de", "on": they say nothing about which session is meant
                if len(t.key) > 1 and not _cheap_phrase(conn, t.key):
                    left_out.append(t.text)  # a phrase of common words: see the module docstring
                    continue
                held = mq.count_up_to(conn, mq.lane_expression(t), rules.LANE_MAX_ROWS + 1)
                common = held > rules.LANE_MAX_ROWS
                if common:
                    capped.append(t.text)  # read at its newest messages, each scored as if in LANE_MAX_ROWS
                found = mq.term_matches(conn, t, filters, rules.LANE_MAX_ROWS,
                                        bm25.idf(total, rules.LANE_MAX_ROWS) if common else None)
                if found:
                    held_by[t.text] = min(held, rules.LANE_MAX_ROWS)
                    per_term.append((t.text, found))
            if rules.WRITTEN_FORM:  # a word common only through its other forms is also read as written
                for label, found, held in written_forms(conn, engine, terms, capped, filters):
                    per_term.append((label, found))
                    held_by[label] = held
            # how many messages were read per term (an engine gives a common word's first message
            # per session alone, with that count: messages.Newest)
            read = {text: getattr(found, "read", len(found)) for text, found in per_term}
            floors = _common_floors(conn, per_term, capped, filters, sessions_n, read,
                                    getattr(per_term, "items_within", None)) if rules.WINDOW_DENSITY else {}
            weights: dict[str, float] = {}  # each term's IDF over sessions, for coverage
            factors: dict[str, float] = {}  # each term's relevance scaled to its IDF over sessions
            for text, found in per_term:
                factors[text], weights[text] = _by_sessions(found, held_by[text], total, sessions_n,
                                                            floors.get(text, 0.0))
            # a session missing the query's rarer words gives way (COVERAGE_POWER)
            if rules.WRITTEN_HOLDS_FORMS:  # a session saying the word as written says the word
                per_term = _written_holds_forms(per_term)
            scored = _scores(per_term, factors, weights if rules.COVERAGE_POWER else None)
            ranked = _rank_sessions(scored, sessions)
            shown = mq.rows(conn, [best for best, _, _ in ranked], mq.MessageFilters(include_tools=True,
                                                                                      include_subagents=True))
            moved: set[int] = set()
            if rules.NEAR_TIE:
                ranked, moved = _newer_on_near_ties(ranked, shown)
            out = Hits()
            out.evidence = {key: score for key, score, _ in scored}  # for the items' gate
            out.held = {key: by_term.keys() for key, _, by_term in scored}  # the terms each transcript holds
            out.names = frozenset(t.text for t in terms if t.part_of is None and _is_name(t))
            # for the items' gate (unread_evidence): each term's weight, and what each message of a
            # common word read at its newest only scored (alike, by the rule above)
            out.weights, out.filters, by_text = weights, filters, {t.text: t for t in terms}
            out.common = {text: mq.common_word(conn, t, found[0][3] * factors[text],
                                               _is_name(t) or t.part_of is not None, t.part_of)
                          for text, found in per_term if text in capped and read[text] >= rules.LANE_MAX_ROWS
                          for t in (by_text.get(text),) if t is not None}
            # each common word's estimated share of the sessions within the filters (READ_WORDS)
            out.spread = getattr(floors, "share", None) or {}
            for best, score, matched in ranked:
                m = shown.get(best)
                if m is None:
                    continue  # deleted by a writer since the lane read it
                m.coverage, m.bm25, m.matched = len(matched), -score, matched
                out.append(LaneHit(m.item_id, m.source, m.session_id, len(out) + 1, m, left_out, capped,
                                   best in moved))
            return out
        except apsw.InterruptError:
            out = Hits()  # out of work: the items lane answers alone
            out.cut = True
            return out


def written_forms(conn: apsw.Connection, engine: str | None, terms, capped, filters: mq.MessageFilters
                  ) -> list[tuple[str, list[tuple], int]]:
    """WRITTEN_FORM: for each plain word of the query that is common (`capped`: read at its newest
    LANE_MAX_ROWS messages, each scoring alike) only through its other forms (terms.word_forms),
    the word as written, when at most LANE_MAX_ROWS messages hold it: (its label, `"word"`; its
    messages with their bm25 for the word alone, as term_matches() gives them; how many messages
    hold it). On the configured index engine when it answers (messages.engine_term_matches)."""
    capped = set(capped)
    written = [Term(t.text, t.key, exact=True) for t in terms
               if t.text in capped and t.part_of is None and not t.exact and len(t.key) == 1
               and word_forms(t.key[0]) and _ranking(t)]
    if not written:
        return []
    out = []
    # (a relevance given for common words, so the engine says which are: those are left as they were,
    # and their messages are not read: read_common)
    answered = mq.engine_term_matches(conn, engine, written, filters, rules.LANE_MAX_ROWS, None, 0.0, read_common=False)
    if answered is not None:
        per_term, _, common = answered
        counted = getattr(per_term, "held", None) or {}
        for text, found in per_term:
            if text not in common and found:
                out.append((written_label(text), found, min(counted.get(text, len(found)), rules.LANE_MAX_ROWS)))
        return out
    for w in written:
        held = mq.count_up_to(conn, w.quoted, rules.LANE_MAX_ROWS + 1)
        if not held or held > rules.LANE_MAX_ROWS:
            continue  # common as written too: the lane's reading of it stands
        found = mq.term_matches(conn, w, filters, rules.LANE_MAX_ROWS)
        if found:
            out.append((written_label(w.text), found, held))
    return out


def written_label(word: str) -> str:
    """The lane's label of a word read as written (WRITTEN_FORM): the word in double quotes."""
    return f'"{word}"'


def is_written_label(text: str) -> bool:
    return text.startswith('"') and text.endswith('"')


def _written_holds_forms(per_term: list) -> list:
    """WRITTEN_HOLDS_FORMS: `per_term` with each session holding a word as written (written_forms(),
    labelled `"word"`) holding the word's forms too (the term `word`, read at its newest messages
    only, each scoring alike), at that alike score, as the lane would have read it there."""
    written = {text[1:-1]: found for text, found in per_term if is_written_label(text)}
    if not written:
        return per_term
    out = []
    for text, found in per_term:
        extra = written.get(text)
        if extra and found:
            have = {(r[1], r[2]) for r in found}
            added = [(mid, src, sid, found[0][3]) for mid, src, sid, _ in extra if (src, sid) not in have]
            if added:
                more = type(found)([*found, *added])
                if hasattr(found, "__dict__"):  # (a messages.Newest: how many were read, the oldest)
                    more.__dict__.update(found.__dict__)
                found = more
        out.append((text, found))
    return out


def _common_floors(conn: apsw.Connection, per_term, capped, filters: mq.MessageFilters,
                   sessions_n: int, read: dict[str, int] | None = None,
                   items_within: int | None = None) -> dict[str, float]:
    """WINDOW_DENSITY: for each common word read at its newest LANE_MAX_ROWS messages, the
    sessions estimated to hold it: those its rows reached, times the items within the filters over
    the items within the rows' time (those that end after the oldest row read). Items stand in for
    sessions (most sessions are one item): both counts are index searches of the items' times, per
    source, the window's counted up to WINDOW_MAX_ITEMS (a word whose newest rows span more is left
    as before: its rows reached many sessions; the sources are counted until the sum reaches it).
    `read`: the messages read per term, when `per_term` gives fewer (messages.Newest);
    `items_within`: the items within the filters, when the engine counted them for this state
    (messages.TermMatches; the table's count is an index walk of every one of them)."""
    out = _Floors()
    read = read or {}
    todo = [(text, found) for text, found in per_term
            if text in capped and read.get(text, len(found)) >= rules.LANE_MAX_ROWS]
    if not todo:
        return out  # under the cap once filtered: every message holding it was read
    if filters.source is not None:
        sources = [filters.source] if filters.sources is None or filters.source in filters.sources else []
    elif filters.sources is not None:
        sources = list(filters.sources)
    else:  # the library's sources, one index seek each
        sources = [r[0] for r in conn.execute(
            "WITH RECURSIVE s(x) AS (SELECT min(source) FROM items UNION ALL "
            "SELECT (SELECT min(source) FROM items WHERE source > s.x) FROM s WHERE s.x IS NOT NULL) "
            "SELECT x FROM s WHERE x IS NOT NULL")]
    where, args = ["i.source = ?"], []
    if filters.projects is not None:
        where.append(f"i.project IN ({','.join('?' * len(filters.projects))})")
        args += filters.projects

    def count(since: str | None, cap: int | None) -> int:
        """The items within the filters that end at `since` or after, counted up to `cap` over
        every source. (One lower bound: with two, the index search took the first, the
        filters' since, and walked every item from there to find the window's few.)"""
        when, when_args = time_conditions("i.occurred_at", since, filters.before)
        sql = f"SELECT 1 FROM items AS i WHERE {' AND '.join(where + when)}"
        # (The cap written in the SQL, not bound: SQLite prepares a statement whose LIMIT is a bound
        # value again at every execution, ~8 us each. Each source counted up to the whole cap: the
        # sum reaches it exactly when the sum of the exact counts does.)
        sql = f"SELECT count(*) FROM ({sql}{f' LIMIT {int(cap)}' if cap else ''}) AS w"
        counted = 0
        for src in sources:  # each source up to the cap: past it the sum says no more
            counted += conn.execute(sql, [src, *args, *when_args]).fetchone()[0]
            if cap and counted >= cap:
                return cap
        return counted

    scope = None
    for text, found in todo:
        lowest = getattr(found, "oldest", None)
        oldest = conn.execute("SELECT at FROM messages WHERE id = ?",
                              (min(r[0] for r in found) if lowest is None else lowest,)).fetchone()
        if oldest is None:
            continue  # deleted by a writer since the lane read it
        # at or after both the oldest row and the filters' since: the later of the two (stored text)
        window = count(oldest[0] if filters.since is None else max(oldest[0], filters.since), rules.WINDOW_MAX_ITEMS)
        if window >= rules.WINDOW_MAX_ITEMS:
            continue
        if scope is None:
            plain = filters.projects is None and filters.since is None and filters.before is None \
                and filters.source is None and filters.sources is None
            if plain:
                scope = sessions_n
            elif items_within is not None and len(set(sources)) == len(sources):  # (a source named twice counts twice)
                scope = items_within
            else:
                scope = count(filters.since, None)
        seen = len(found) if isinstance(found, mq.Newest) else len({(r[1], r[2]) for r in found})
        out[text] = seen * scope / max(window, seen, 1)
        out.share[text] = seen / max(window, seen, 1)
    return out


class _Floors(dict):
    """_common_floors()'s answer: per common word, the sessions estimated to hold it within the
    filters; `share`: that estimate as a share of the sessions within the filters."""

    def __init__(self):
        super().__init__()
        self.share: dict[str, float] = {}


def _newer_on_near_ties(ranked, shown):
    """The lane's order with recency on near ties (NEAR_TIE): one pass down `ranked` ((best message
    id, score, terms), best first); a session scoring at least (1 - NEAR_TIE) of the one above
    it, whose best message (in `shown`) is newer, swaps with it, and the pair is passed. Also the
    best message ids of the sessions that moved up."""
    ranked, moved = list(ranked), set()
    i = 1
    while i < len(ranked):
        (b0, s0, _), (b1, s1, _) = ranked[i - 1], ranked[i]
        m0, m1 = shown.get(b0), shown.get(b1)
        if m0 and m1 and s1 >= (1 - rules.NEAR_TIE) * s0 and m1.at > m0.at:
            ranked[i - 1], ranked[i] = ranked[i], ranked[i - 1]
            moved.add(b1)
            i += 2
        else:
            i += 1
    return ranked, moved


def _by_sessions(found: list[tuple], held: int, total: int, sessions_n: int,
                 floor: float = 0.0) -> tuple[float, float]:
    """What replaces bm25's IDF over messages in the term's matches by its IDF over sessions
    (SESSION_IDF): the factor each match's relevance is multiplied by (1.0: none), and that IDF:
    `held` messages of `total` hold it, the sessions are those of `found`, `sessions_n` the
    library's items. A common word (`held` at LANE_MAX_ROWS) counts as held by at least `floor`
    sessions too (WINDOW_DENSITY)."""
    if not sessions_n or not total:
        return 1.0, 1.0
    seen = len(found) if isinstance(found, mq.Newest) else len({(r[1], r[2]) for r in found})
    if held >= rules.LANE_MAX_ROWS:
        seen = max(seen, rules.LANE_MAX_ROWS * sessions_n / total, floor)
    by_sessions = bm25.idf(sessions_n, min(seen, sessions_n))
    if not rules.SESSION_IDF:
        return 1.0, by_sessions
    return by_sessions / bm25.idf(total, held), by_sessions


_NONE = frozenset()
_PLAIN_WORD = re.compile(r"[^\W\d_]+")


def _is_name(term) -> bool:
    """A term written as a name, not as a plain word: quoted, or holding digits or punctuation
    (`--clean`, `tripdata_nightly`, `app/services/pdf.py`, `2019-2024`)."""
    return term.exact or not _PLAIN_WORD.fullmatch(term.text)


def _ranking(t) -> bool:
    """Whether the lane ranks by this term (not a stop word, nor a short unquoted word)."""
    return not (is_stop_word(t) or (len(t.text) < rules.LANE_MIN_CHARS and not t.exact))


def _scores(per_term: list[tuple[str, list[tuple]]], factors: dict[str, float] | None = None,
            weights: dict[str, float] | None = None) -> list[tuple[tuple[str, str], float, dict]]:
    """Each session the terms' messages belong to: its score (per term, its best message's
    relevance, summed over the terms), and per term that best (relevance, message id). `factors`:
    each term's relevance is multiplied by its factor first (_by_sessions); `weights`: each
    session's score is multiplied by the share of the terms' weights it holds (of all the terms'
    weights) to COVERAGE_POWER."""
    # Of a session's messages scoring alike for a term, the newest (the highest id) is its best,
    # as FTS5's term_matches gives them (newest first, the first kept): an engine's BM25 gives
    # equal scores in the order it stored them (tantivy), which moved the session's best message,
    # and with it its place among sessions scoring alike (by their best message's id) and its time
    # for NEAR_TIE, with the index's build (TIE_BY_ID).
    # A session scores, per term, its best message's bm25 for it. Adding later messages too (0.05,
    # 0.1 or 0.3 of their own) lowered coding R@1 on half A (0.827 -> 0.792, 0.720, ~0.5): a word
    # repeated through a test log outweighed the message about it.
    # (One dict lookup a row where setdefault made a dict each time; a relevance above -1.0 is
    # kept, as against the default (-1.0, 0) before.)
    best: dict[tuple[str, str], dict[str, tuple[float, int]]] = {}
    get, by_id = best.get, rules.TIE_BY_ID
    for text, found in per_term:
        factor = factors[text] if factors is not None else 1.0
        if isinstance(found, mq.Newest) and found:  # one row per session, each scoring alike
            relevance = found[0][3] * factor
            if not relevance > -1.0:
                for _, source, session_id, _ in found:
                    best.setdefault((source, session_id), {})
                continue
            for mid, source, session_id, _ in found:
                key = (source, session_id)
                by_term = get(key)
                if by_term is None:
                    best[key] = {text: (relevance, mid)}
                    continue
                was = by_term.get(text)
                if was is None or relevance > was[0]:
                    by_term[text] = (relevance, mid)
            continue
        for mid, source, session_id, relevance in found:
            relevance *= factor
            key = (source, session_id)
            by_term = get(key)
            if by_term is None:
                best[key] = {text: (relevance, mid)} if relevance > -1.0 else {}
                continue
            was = by_term.get(text)
            if was is None:
                if relevance > -1.0:
                    by_term[text] = (relevance, mid)
            elif relevance > was[0] or (by_id and relevance == was[0] and mid > was[1]):
                by_term[text] = (relevance, mid)
    whole = sum(weights.values()) if weights else 0
    if not whole > 0:
        return [(key, sum([r for r, _ in by_term.values()]), by_term) for key, by_term in best.items()]
    # (A one-term session's share is its term's, computed once: (0 + w) / whole is w / whole.)
    alone = {t: (w / whole) ** rules.COVERAGE_POWER for t, w in weights.items()}
    out = []
    for key, by_term in best.items():
        if len(by_term) == 1:
            for t, (r, _) in by_term.items():
                out.append((key, (0 + r) * alone[t], by_term))
        else:
            out.append((key, sum([r for r, _ in by_term.values()]) *
                        (sum([weights[t] for t in by_term]) / whole) ** rules.COVERAGE_POWER, by_term))
    return out


def _rank_sessions(scored: list[tuple], sessions: int) -> list[tuple[int, float, list[str]]]:
    """The lane's first `sessions` sessions, best first, as (its best message, its score, the terms
    it holds). A session's best message is the one with the highest sum over the terms it is best
    for; on equal scores, the session whose best message scores more, then the newer. Only the
    sessions that can place are looked at message by message."""
    # (The bar from the scores alone, sorted as floats: the order below is total, message ids
    # being unique, so the sessions need no sort of their own first.)
    if len(scored) > sessions:
        bar = sorted([s[1] for s in scored], reverse=True)[sessions - 1]
        scored = [s for s in scored if s[1] >= bar]
    ranked = []
    for _key, score, by_term in scored:
        if len(by_term) == 1:  # one term: its best message is the session's
            (relevance, top), = by_term.values()
            ranked.append((score, 0.0 + relevance, top, list(by_term)))
            continue
        per_message: dict[int, float] = {}
        for relevance, mid in by_term.values():
            per_message[mid] = per_message.get(mid, 0.0) + relevance
        top, summed = max(per_message.items(), key=_SUM_THEN_ID)
        ranked.append((score, summed, top, sorted(by_term)))
    # (Descending on (score, sum, id) is ascending on their negations: the ids make every key distinct.)
    ranked.sort(key=_SCORE_SUM_ID, reverse=True)
    return [(top, score, matched) for score, _, top, matched in ranked[:sessions]]


_SUM_THEN_ID = itemgetter(1, 0)
_SCORE_SUM_ID = itemgetter(0, 1, 2)


def _cheap_phrase(conn: apsw.Connection, tokens: tuple) -> bool:
    """Whether FTS5 can find this phrase within PHRASE_MAX_ROWS rows of its words' lists: it reads
    the list of every word of a phrase to check their positions."""
    budget_rows = rules.PHRASE_MAX_ROWS
    for tok in tokens:
        if mq.token_over(conn, tok, budget_rows):  # (a skip to the row past the budget: a quarter cheaper
            return False                         # than counting up to it, and the usual answer at scale)
        budget_rows -= mq.token_rows(conn, tok, budget_rows + 1)
        if budget_rows < 0:
            return False
    return True
