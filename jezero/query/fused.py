"""Search over both layers: the items' ranking and the messages' ranking, fused per session.

An item indexes what a summarizer kept of a session (title, summary, questions, atoms); the exact
words someone later types (an error code, a flag, a name said once) are often only in the
transcript. search() therefore ranks twice and fuses:

- the items lane is search as it always was (BM25 over the item fields, times recency);
- the messages lane ranks sessions by their transcripts: a session scores the IDF of every
  distinct query word found in any of its messages (a BM25 over whole transcripts counts them
  the same way, less term frequency and length), and is shown by its best message. It reads only
  the query's rarer words: a word in more than LANE_MAX_ROWS messages, or in half of them, is
  left out of this lane (the items lane still uses it). Such a word says little about which
  session is meant (its IDF is low), and reading every message that holds it would cost more
  than the whole items search (benchmarks/messages/README.md). A query made only of common
  words is answered by the items. Words under three characters are left out too.
  A term the index reads as a phrase (`scripts/order_event.py`: four words) is looked up only
  when its words are in PHRASE_MAX_ROWS messages at most, together: FTS5 reads every word's list
  to check positions, which for four common words cost 10-40 ms at 2,000 sessions. Such
  identifiers are what the items' trigram index finds well.

Fusion is reciprocal rank fusion over sessions: score = sum over lanes of weight / (RRF_K +
rank), rank counted from 1 within each lane, weight 1 for the items and MESSAGES_WEIGHT (0.75)
for the messages, each times the lane's separation: how far its first score stands above its
SEPARATION_DEPTH-th (separation()). A lane's order means something when its best hits stand out
(an error code in one summary); when they all score alike it says little, as in small talk,
where every item's summary matches a query only through its common words and the items lane
would otherwise bury the one session whose transcript holds the fact. A session found by both
lanes rises above one found by either; one found by one lane only still ranks. Each session is shown by one item: the best item
of the items lane when that lane found the session (its title and atoms lead), else the item
whose transcript holds the best message. On equal scores the items lane's order decides.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import apsw

from jezero.query import bm25
from jezero.query import messages as mq
from jezero.query.common import Hits, budget, fetch_hits
from jezero.query.errors import QueryError

LANES = ("items", "messages")
# The semantic lane (query/vectors.py), chosen only when `[semantic]` turns it on. It joins the
# reciprocal rank fusion below with its own weight ([semantic] weight), unscaled: cosine
# similarities of a query against a library all lie close together, so their separation would
# say nothing.
VECTORS = "vectors"
# The usual constant of reciprocal rank fusion (Cormack et al. 2009): large enough that the first
# few places of one lane do not drown the other lane, small enough that place 1 still counts.
RRF_K = 60
# The messages lane's say next to the items lane's (1.0), before each is scaled by its separation
# (below; these figures predate it). The items are the condensed, curated
# view; the transcripts a wider, noisier one. On benchmarks/retrieval (109 queries) overall
# R@1 / R@5 / MRR@10 were 0.783 / 0.942 / 0.865 at 1.0, 0.792 / 0.951 / 0.870 at 0.75,
# 0.783 / 0.960 / 0.867 at 0.5 and 0.755 / 0.942 / 0.849 at 1.5. With 0.75 a session that only
# the messages found, at their rank 1, places as the items' rank 21 would alone.
MESSAGES_WEIGHT = 0.75
# A lane's weight is scaled by how clearly it separates its best session from the rest: its
# SEPARATION_DEPTH-th score (or its last, when it found fewer) against its first, as
# (first - that) / first, to the power SEPARATION_POWER. A lane whose best hits all score about
# the same (the items of small talk, where only common words matched the summaries) says little
# about which session is meant and gives way to the other lane. Chosen on one half of
# benchmarks/retrieval's queries (see its README); the other half is the check.
SEPARATION_DEPTH = 20
SEPARATION_POWER = 2
# A term in more messages than this is left out of the messages lane: walking its list up to the
# cap costs well under a millisecond, reading where each of its messages belongs about a
# microsecond each (more from a cold page); past it the term's IDF is low.
LANE_MAX_ROWS = 1000
# A phrase (a term the index reads as several words) is looked up only when its words' lists hold
# this many rows at most, together.
PHRASE_MAX_ROWS = 10_000
# Words shorter than this say nothing about a session ("de", "on", "a") and, in a word-level
# index, match whole transcripts in one language: the lane leaves them out, as the items'
# trigram index (three characters at least) does.
LANE_MIN_CHARS = 3
# Messages read per step while walking the lane's order, and sessions taken from each lane.
LANE_FETCH = 200
LANE_SESSIONS = 50


def check_lanes(lanes, *, vectors: bool = False) -> tuple[str, ...]:
    """The chosen lanes in their fixed order; None: every lane that is on. `vectors`: whether
    the semantic lane is on (then "vectors" may be chosen)."""
    known = LANES + ((VECTORS,) if vectors else ())
    if lanes is None:
        return known
    if isinstance(lanes, str):
        lanes = (lanes,)
    try:
        chosen = tuple(dict.fromkeys(lanes))
    except TypeError:
        raise QueryError(f"lanes must be a list of {', '.join(known)}") from None
    if not chosen or any(lane not in known for lane in chosen):
        off = " (vectors needs the semantic lane on: [semantic] enabled = true)" if VECTORS in chosen else ""
        raise QueryError(f"lanes must be one or more of {', '.join(known)}; got {list(chosen)!r}{off}")
    return tuple(lane for lane in known if lane in chosen)


@dataclass
class LaneHit:
    """A session as the messages lane found it: the item holding its best message."""

    item_id: int
    source: str
    session_id: str
    rank: int  # from 1
    match: mq.Match
    left_out: list[str]  # query words too common for this lane


def message_lane(conn: apsw.Connection, query: str, *, sources, source, project, since, time_budget_ms: int,
                 sessions: int = LANE_SESSIONS) -> Hits:
    """Sessions ranked by the IDF of the distinct query words their messages hold; on a tie, by
    their best message's, then the newer. Each kept word's messages are read once, as a list of
    ids (the walk that also tells whether the word is rare enough); bm25's term frequency and
    length normalisation would need a second, ranked pass over the same lists, which cost more
    than the items search itself (benchmarks/messages/README.md)."""
    if not mq.has_messages(conn):
        return Hits()
    terms = mq.terms_for(conn, query)
    if not terms:
        return Hits()
    filters = mq.MessageFilters(sources=sources, source=source, projects=[project] if project else None,
                                include_tools=True, include_subagents=True, since=since)
    with budget(conn, time_budget_ms):
        try:
            total = mq.message_count(conn)
            kept: list[tuple] = []  # (term, ids)
            left_out = []
            for t in terms:
                if len(t.text) < LANE_MIN_CHARS:
                    continue  # "de", "on", "a": the items' trigram index cannot look them up either
                if len(t.key) > 1 and not _cheap_phrase(conn, t.key):
                    left_out.append(t.text)  # a phrase of common words: see the module docstring
                    continue
                ids = mq.ids_up_to(conn, t, LANE_MAX_ROWS + 1)
                if len(ids) > LANE_MAX_ROWS or 2 * len(ids) >= total:  # (bm25 floors the IDF at N/2 too)
                    left_out.append(t.text)
                elif ids:
                    kept.append((t, ids))
            if not kept:
                return Hits()
            held: dict[int, list[str]] = {}  # message id -> the kept terms it holds
            score: dict[int, float] = {}  # message id -> the sum of their IDFs
            weights: dict[str, float] = {}
            for t, ids in kept:
                weight = weights[t.text] = bm25.idf(total, len(ids))
                for i in ids:
                    held.setdefault(i, []).append(t.text)
                    score[i] = score.get(i, 0.0) + weight
            # A session holds the terms of all its messages: it scores the IDF of every distinct
            # term found anywhere in it (as a BM25 over whole transcripts would count them), and
            # is shown by its best message.
            ids = sorted(held)
            found: dict[tuple[str, str], dict] = {}
            for start in range(0, len(ids), LANE_FETCH * 5):
                rows = mq.rows(conn, ids[start:start + LANE_FETCH * 5], filters)
                for i, m in rows.items():
                    entry = found.setdefault((m.source, m.session_id), {"terms": {}, "best": None})
                    for t in held[i]:
                        entry["terms"][t] = weights[t]
                    best = entry["best"]
                    if best is None or (score[i], i) > (score[best.id], best.id):
                        entry["best"] = m
            ranked = sorted(found.values(), key=lambda e: (-sum(e["terms"].values()), -score[e["best"].id],
                                                           -e["best"].id))[:sessions]
            out = Hits()
            for e in ranked:
                m = e["best"]
                m.coverage, m.bm25, m.matched = len(e["terms"]), -sum(e["terms"].values()), sorted(e["terms"])
                out.append(LaneHit(m.item_id, m.source, m.session_id, len(out) + 1, m, left_out))
            return out
        except apsw.InterruptError:
            out = Hits()  # out of work: the items lane answers alone
            out.cut = True
            return out


def _cheap_phrase(conn: apsw.Connection, tokens: tuple) -> bool:
    """Whether FTS5 can find this phrase within PHRASE_MAX_ROWS rows of its words' lists: it reads
    the list of every word of a phrase to check their positions."""
    budget_rows = PHRASE_MAX_ROWS
    for tok in tokens:
        budget_rows -= mq.token_rows(conn, tok, budget_rows + 1)
        if budget_rows < 0:
            return False
    return True


def fuse(conn: apsw.Connection, item_hits: list[dict], lane: list[LaneHit], limit: int, *,
         explain: bool = False, near=()) -> list[dict]:
    """One hit per session, by reciprocal rank fusion of the lanes' session orders; `near`: the
    vector lane's sessions (query/vectors.py VectorHits), when it ran."""
    sessions: dict[tuple[str, str], dict] = {}
    for h in item_hits:
        key = (h["source"], h["session_id"])
        if key not in sessions:
            sessions[key] = {"item": h, "items_rank": len(sessions) + 1, "lane": None, "near": None}
    items_ranked = len(sessions)
    for hit in lane:
        entry = sessions.setdefault((hit.source, hit.session_id),
                                    {"item": None, "items_rank": None, "lane": None, "near": None})
        entry["lane"] = hit
    for hit in near:
        entry = sessions.setdefault((hit.source, hit.session_id),
                                    {"item": None, "items_rank": None, "lane": None, "near": None})
        entry["near"] = hit
    items_weight = separation([h.get("score") or 0.0 for h in item_hits])
    messages_weight = MESSAGES_WEIGHT * separation([-hit.match.bm25 for hit in lane])
    vectors_weight = getattr(near, "weight", 0.0)
    for entry in sessions.values():
        score = 0.0
        if entry["items_rank"] is not None:
            score += items_weight / (RRF_K + entry["items_rank"])
        if entry["lane"] is not None:
            score += messages_weight / (RRF_K + entry["lane"].rank)
        if entry["near"] is not None:
            score += vectors_weight / (RRF_K + entry["near"].rank)
        entry["score"] = score
        entry["weights"] = (items_weight, messages_weight, vectors_weight)
    order = sorted(sessions.values(),
                   key=lambda e: (-e["score"], e["items_rank"] or items_ranked + 1, e["lane"].rank if e["lane"] else 0,
                                  e["near"].rank if e["near"] else 0))
    order = order[:limit]
    missing = [_shown_by(e) for e in order if e["item"] is None]
    rows = fetch_hits(conn, missing)
    hits = []
    for e in order:
        base = e["item"] if e["item"] is not None else rows.get(_shown_by(e))
        if base is None:
            continue  # deleted by a writer since the lane read it
        hit = {k: v for k, v in base.items() if k != "explain"}
        hit["score"] = e["score"]
        if explain:
            hit["explain"] = {**(base.get("explain") or {}), "fusion": _why(e)}
        hits.append(hit)
    return hits


def _shown_by(entry: dict) -> int:
    """The item that shows a session no items-lane hit found: its best message's, else its
    nearest vector's."""
    return entry["lane"].item_id if entry["lane"] is not None else entry["near"].item_id


def separation(scores: list[float]) -> float:
    """How clearly a lane's first score stands above its SEPARATION_DEPTH-th (module constants):
    1 when the rest score nothing, 0 when they all score as the first. A lane with a single hit
    separates it fully."""
    ranked = sorted((s for s in scores if s > 0), reverse=True)
    if not ranked:
        return 0.0
    if len(ranked) == 1:
        return 1.0
    below = ranked[min(SEPARATION_DEPTH, len(ranked)) - 1]
    return ((ranked[0] - below) / ranked[0]) ** SEPARATION_POWER


def _why(entry: dict) -> dict:
    lane = entry["lane"]
    out = {"rule": "reciprocal rank fusion of the items and messages rankings, per session, each lane "
                   "weighted by how clearly it separates its best sessions",
           "score": entry["score"], "items_rank": entry["items_rank"],
           "items_weight": entry["weights"][0], "messages_weight": entry["weights"][1],
           "messages_rank": lane.rank if lane else None}
    if lane is not None:
        out.update(message_id=lane.match.id, message_role=lane.match.role, matched_terms=lane.match.matched,
                   coverage=lane.match.coverage, left_out_of_messages=lane.left_out)
    near = entry["near"]
    if len(entry["weights"]) > 2 and entry["weights"][2]:
        out.update(vectors_weight=entry["weights"][2], vectors_rank=near.rank if near else None)
        if near is not None:
            out.update(vectors_similarity=round(near.similarity, 4),
                       vectors_nearest="item" if near.window_id is None else f"message window {near.window_id}")
    return out


def lane_only(conn: apsw.Connection, lane: list[LaneHit], limit: int, *, explain: bool = False) -> list[dict]:
    """The messages lane alone, as items (the benchmark's "messages alone")."""
    return fuse(conn, [], lane, limit, explain=explain)


def search(conn: apsw.Connection, query: str, lanes: Sequence[str], items_lane: Callable[[int], list[dict]], *,
           sources, source, project, since, limit: int, time_budget_ms: int, explain: bool,
           vectors_lane: Callable[[], list] | None = None) -> list[dict]:
    """The fused search; `items_lane(n)` runs the items search for its best n hits;
    `vectors_lane()` the vector lane (query/vectors.py), when "vectors" is chosen."""
    lane = message_lane(conn, query, sources=sources, source=source, project=project, since=since,
                        time_budget_ms=time_budget_ms) if "messages" in lanes else Hits()
    near = vectors_lane() if vectors_lane is not None and VECTORS in lanes else ()
    notes = (near.off,) if getattr(near, "off", None) else ()
    if "items" not in lanes:
        hits = Hits(fuse(conn, [], lane, limit, explain=explain, near=near))
        hits.cut, hits.notes = lane.cut, notes
        return hits
    item_hits = items_lane(max(limit, LANE_SESSIONS))
    hits = Hits(fuse(conn, item_hits, lane, limit, explain=explain, near=near))
    hits.cut = lane.cut or getattr(item_hits, "cut", False)
    hits.notes = notes
    return hits
