"""The fusion of the lanes: each lane's session order (Ranked) and fuse().

Fusion is weighted reciprocal rank fusion over sessions (fuse(), a list of lanes, so a third
lane is one more Ranked): score = sum over lanes of weight * gate / (RRF_K + rank), rank counted
from 1 within each lane. The messages lane weighs MESSAGES_WEIGHT times its separation (below;
its terms weighed by the sessions that hold them, SESSION_IDF); a place of it held by common
words alone (read at their newest rows, scoring alike) counts only for a session the items lane
found too (CAPPED_ALONE), and then only as far as that session's items gate (CAPPED_ALONE_GATED).
The items lane weighs its separation (how far its first score stands above its
SEPARATION_DEPTH-th: a lane whose hits all score alike says little), and each of its sessions is
gated by the messages lane's evidence for it (gate.py). Each session is shown by one item: the
best item of the items lane when that lane found it (its title and atoms lead), else the item
whose transcript holds the best message. On equal scores the items lane's order decides.

The rules named here are constants of rules.py.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import apsw

from jezero.query.common import fetch_hits
from jezero.query.errors import QueryError
from jezero.query.fused import rules
from jezero.query.fused.messages_lane import LaneHit


def check_lanes(lanes, *, vectors: bool = False) -> tuple[str, ...]:
    """The chosen lanes in their fixed order; None: every lane that is on. `vectors`: whether
    the semantic lane is on (then "vectors" may be chosen)."""
    known = rules.LANES + ((rules.VECTORS,) if vectors else ())
    if lanes is None:
        return known
    if isinstance(lanes, str):
        lanes = (lanes,)
    try:
        chosen = tuple(dict.fromkeys(lanes))
    except TypeError:
        raise QueryError(f"lanes must be a list of {', '.join(known)}") from None
    if not chosen or any(lane not in known for lane in chosen):
        off = " (vectors needs the semantic lane on: [semantic] enabled = true)" if rules.VECTORS in chosen else ""
        raise QueryError(f"lanes must be one or more of {', '.join(known)}; got {list(chosen)!r}{off}")
    return tuple(lane for lane in known if lane in chosen)


@dataclass
class Ranked:
    """One lane's session order, as fuse() reads it: best first, one entry per session. `weight` is
    the lane's say; `gate`, when given, scales each session's share (see items_lane())."""

    name: str
    weight: float
    sessions: list[tuple[str, str]]  # (source, session_id)
    shown: list  # what shows each session: an item hit (dict) or a LaneHit (its item is fetched)
    gate: dict[tuple[str, str], float] | None = None


def lane_separation(lane) -> float:
    """separation() of the messages lane's session scores."""
    scores = sorted((-x.match.bm25 for x in lane), reverse=True)
    if not scores or scores[0] <= 0:
        return 0.0
    below = scores[min(rules.SEPARATION_DEPTH, len(scores)) - 1] if len(scores) > 1 else 0.0
    return (scores[0] - below) / scores[0]


def messages_ranked(lane: list[LaneHit], items_found: set | None = None, items_gate: dict | None = None) -> Ranked:
    """The messages lane's session order for fusion, weighed by its separation. With
    CAPPED_ALONE and `items_found` (the sessions of the items lane), a session whose lane
    evidence is words read at their newest rows only (each scoring alike: its place is its
    messages' time) has no say unless the items lane found it too, and then (CAPPED_ALONE_GATED,
    `items_gate`: the items lane's gate per session) as much as its items gate."""
    weight = rules.MESSAGES_WEIGHT
    if rules.MESSAGES_SEPARATION and lane:
        weight *= lane_separation(lane) ** rules.MESSAGES_SEPARATION
    keys = [(x.source, x.session_id) for x in lane]
    gate = None
    if rules.CAPPED_ALONE and items_found is not None and lane and lane[0].capped:
        capped = set(lane[0].capped)
        alone = {key for key, x in zip(keys, lane)
                 if key not in items_found and capped.issuperset(x.match.matched or ())}
        if rules.CAPPED_ALONE_GATED and items_gate is not None:
            gate = {key: 0.0 if key in alone else 1.0 for key in keys}
            for key, x in zip(keys, lane):
                if key in items_found and capped.issuperset(x.match.matched or ()):
                    gate[key] = items_gate.get(key, 0.0)
        elif alone:
            gate = {key: 0.0 if key in alone else 1.0 for key in keys}
    return Ranked("messages", weight, keys, list(lane), gate)


def vectors_ranked(near, messages=None) -> Ranked:
    """The semantic lane's session order (query/vectors.py VectorHits), at its configured weight.
    Its shares follow the curve the lane chooses for the query from the messages lane's answer
    (`messages`, None when it did not run; query/vectors.py flat_curve(): weight / (K + rank)), through
    the per-session gate."""
    keys = [(x.source, x.session_id) for x in near]
    k = near.curve(messages) if hasattr(near, "curve") else rules.RRF_K
    gate = None if k == rules.RRF_K else {key: (rules.RRF_K + r) / (k + r) for r, key in enumerate(keys, start=1)}
    ranked = Ranked(rules.VECTORS, getattr(near, "weight", 0.0), keys, list(near), gate)
    ranked.rrf_k = k
    return ranked


def fuse(conn: apsw.Connection, lanes: Sequence[Ranked], limit: int, *, explain: bool = False,
         arrange: Callable[[list[dict], list[str], int], list[dict]] | None = None) -> list[dict]:
    """One hit per session, by weighted reciprocal rank fusion of the lanes' session orders:
    sum over lanes of weight * gate / (RRF_K + rank). Ties go to the first lane's order, then the
    next. Each session is shown by the first lane (in `lanes` order) that gives it an item.
    `arrange(order, lane names, limit)`, when given, rearranges the whole fused order before the
    cut to `limit` (the vector lane's literal guard, query/vectors.py)."""
    sessions: dict[tuple[str, str], dict] = {}
    for lane in lanes:
        for rank, (key, shown) in enumerate(zip(lane.sessions, lane.shown), start=1):
            entry = sessions.setdefault(key, {"key": key, "ranks": {}, "shares": {}, "shown": None, "score": 0.0})
            gate = 1.0 if lane.gate is None else lane.gate.get(key, 0.0)
            share = lane.weight * gate / (rules.RRF_K + rank)
            entry["ranks"][lane.name], entry["shares"][lane.name] = rank, share
            entry["score"] += share
            if entry["shown"] is None or (not isinstance(entry["shown"], dict) and isinstance(shown, dict)):
                entry["shown"] = shown
    unranked = max((len(lane.sessions) for lane in lanes), default=0) + 1
    order = sorted(sessions.values(),
                   key=lambda e: (-e["score"], *(e["ranks"].get(lane.name, unranked) for lane in lanes)))
    order = (arrange(order, [lane.name for lane in lanes], limit) if arrange else order)[:limit]
    rows = fetch_hits(conn, [e["shown"].item_id for e in order if not isinstance(e["shown"], dict)])
    hits = []
    for e in order:
        shown = e["shown"]
        base = shown if isinstance(shown, dict) else rows.get(shown.item_id)
        if base is None:
            continue  # deleted by a writer since the lane read it
        hit = {k: v for k, v in base.items() if k != "explain"}
        hit["score"] = e["score"]
        if explain:
            hit["explain"] = {**(base.get("explain") or {}), "fusion": _why(e, lanes)}
        hits.append(hit)
    return hits


def separation(scores: list[float]) -> float:
    """How clearly a lane's first score stands above its SEPARATION_DEPTH-th (rules.py):
    1 when the rest score nothing, 0 when they all score as the first. A lane with a single hit
    separates it fully."""
    ranked = sorted((s for s in scores if s > 0), reverse=True)
    if not ranked:
        return 0.0
    if len(ranked) == 1:
        return 1.0
    below = ranked[min(rules.SEPARATION_DEPTH, len(ranked)) - 1]
    return ((ranked[0] - below) / ranked[0]) ** rules.SEPARATION_POWER


def _why(entry: dict, lanes: Sequence[Ranked]) -> dict:
    out = {"rule": "reciprocal rank fusion of the lanes' session orders, each lane weighted (the items by how "
                   "clearly they separate their best sessions, each item gated by its transcript's evidence)",
           "score": entry["score"], "lanes": {lane.name: lane.weight for lane in lanes},
           "ranks": dict(entry["ranks"]), "shares": dict(entry["shares"]),
           "items_rank": entry["ranks"].get("items"), "messages_rank": entry["ranks"].get("messages")}
    messages = next((lane for lane in lanes if lane.name == "messages"), None)
    hit = messages.shown[entry["ranks"]["messages"] - 1] if messages and "messages" in entry["ranks"] else None
    if hit is not None:
        out.update(message_id=hit.match.id, message_role=hit.match.role, matched_terms=hit.match.matched,
                   coverage=hit.match.coverage, left_out_of_messages=hit.left_out, capped_in_messages=list(hit.capped),
                   newer_on_near_tie=hit.near_tie)
        say = messages.gate.get(entry["key"], 1.0) if messages.gate is not None else 1.0
        if not say:
            out["messages_no_say"] = "capped_alone"  # its words read at their newest rows only (CAPPED_ALONE)
        elif say < 1.0:
            out["messages_say_by_items_gate"] = say  # the same, the items lane found it (CAPPED_ALONE_GATED)
    vectors = next((lane for lane in lanes if lane.name == rules.VECTORS), None)
    if vectors is not None:
        near = vectors.shown[entry["ranks"][rules.VECTORS] - 1] if rules.VECTORS in entry["ranks"] else None
        out.update(vectors_weight=vectors.weight, vectors_rank=entry["ranks"].get(rules.VECTORS),
                   vectors_rrf_k=getattr(vectors, "rrf_k", rules.RRF_K))
        if "kept_below" in entry:  # held below a literal match of the query (query/vectors.py)
            out.update(kept_below_literal_match=entry["kept_below"])
        if near is not None and hasattr(near, "similarity"):
            out.update(vectors_similarity=round(near.similarity, 4),
                       vectors_nearest="item" if near.window_id is None else f"message window {near.window_id}")
    return out
