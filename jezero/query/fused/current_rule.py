"""The current decision first, over the fused order.

After fusion the current-first rule runs again over the fused order (current_first()), guarded by
the transcripts' evidence. A revision the items lane's current-first placed before an older hit
whose transcript holds query words and only common ones (read at their newest rows, scoring
alike: the lane could not weigh it) keeps that place (CAPPED_REVISION): its evidence is unknown,
not lacking.

The rules named here are constants of rules.py.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import apsw

from jezero.query import current
from jezero.query.fused import rules
from jezero.query.fused.messages_lane import _NONE, LaneHit, written_label


def current_first(hits: list[dict], item_hits: list[dict], lane: list[LaneHit],
                  reorder: Callable[[list[dict], Callable | None, float], list[dict]], *,
                  conn: apsw.Connection | None = None) -> list[dict]:
    """The current decision first, over the fused order. The messages lane places the first
    session of a decision chain high (it states the subject at length, in the words people ask
    with), above the short revision the items lane had moved first. The rule (current.py) weighs
    each hit's score, so each hit carries its session's standing (its items relevance, or with
    LEAD_BY_EITHER_LANE its best share of either lane's best) while it runs; a session only
    the messages found has none, and the reorder never moves a hit before it (its score reads as
    unbounded; only current.newer_on_the_query, below, may). A newer hit
    moves only when its transcript holds CURRENT_EVIDENCE of the lane's best evidence, every name
    of the query the anchor's transcript holds and CURRENT_COVERAGE of the anchor's query terms
    (`reorder(hits, may_move, move_share)` checks the last two per pair, and the subject at
    FUSED_MOVE_SHARE). The lead the rule allows (current.MAX_LEAD) is read, with
    LEAD_BY_EITHER_LANE, in whichever lane ranks the hit best (standing()). Then, given `conn`,
    where an anchor's item does not say the query words its transcript holds (a fact said in
    passing), the newer session whose transcript holds them all comes first
    (current.newer_on_the_query, TRANSCRIPT_SUBJECT). With UNFOUND_ANCHOR an anchor the items
    lane did not find is left to that rule alone: its item's subject is not the query's."""
    evidence = getattr(lane, "evidence", None) if lane else None
    lane_best = max(evidence.values(), default=0.0) if evidence else 0.0
    relevance: dict[tuple[str, str], float] = {}
    items_score: dict[tuple[str, str], float] = {}
    for h in item_hits:
        key = (h["source"], h["session_id"])
        held = not evidence or evidence.get(key, 0.0) >= rules.CURRENT_EVIDENCE * lane_best
        relevance.setdefault(key, (h.get("score") or 0.0) if held else 0.0)
        items_score.setdefault(key, h.get("score") or 0.0)
    fused_score = {h["id"]: h["score"] for h in hits}
    items_best = max((h.get("score") or 0.0 for h in item_hits), default=0.0)

    def standing(key) -> float:
        """What MAX_LEAD compares (LEAD_BY_EITHER_LANE): the session's share of the best in the
        lane that ranks it best, items or messages; unbounded for a session only the messages found
        (the reorder moves nothing before it), 0 for one whose transcript holds too little (never
        moved)."""
        held_relevance = relevance.get(key)
        if held_relevance is None:
            return math.inf
        if not held_relevance or not rules.LEAD_BY_EITHER_LANE or items_best <= 0 or lane_best <= 0:
            return held_relevance
        return max(held_relevance / items_best, evidence.get(key, 0.0) / lane_best)

    def revision_standing(key) -> float:
        """What MAX_LEAD compares for a newer hit whose decision names the anchor's choice as
        replaced (current.NAMED_REVISION): its standing without CURRENT_EVIDENCE, since such a
        revision says the new choice in other words than its predecessor (but its transcript must
        hold some of the query's words)."""
        if key not in relevance or not evidence or items_best <= 0 or lane_best <= 0 or not evidence.get(key):
            return standing(key)
        return max(items_score[key] / items_best, evidence[key] / lane_best)

    for h in hits:
        key = (h["source"], h["session_id"])
        h["score"] = standing(key)
        h["revision_score"] = revision_standing(key)
    held, names = (getattr(lane, "held", None), getattr(lane, "names", None)) if lane else (None, None)

    def holds_enough(hit: dict, anchor: dict) -> bool:
        """A newer hit moves only when its transcript holds every name of the query the anchor's
        holds, and at least CURRENT_COVERAGE of the anchor's query terms."""
        if not holds_names(hit, anchor):
            return False
        if rules.UNFOUND_ANCHOR and (anchor["source"], anchor["session_id"]) not in relevance:
            return False
        theirs = held.get((anchor["source"], anchor["session_id"]), _NONE)
        ours = held.get((hit["source"], hit["session_id"]), _NONE)
        return not theirs or len(theirs & ours) >= rules.CURRENT_COVERAGE * len(theirs)

    left_names = names & set(lane[0].left_out) if lane and names and rules.NAMES_LEFT_OUT else _NONE

    def holds_names(hit: dict, anchor: dict) -> bool:
        """The names rule alone (what a revision naming the anchor's choice must meet)."""
        if not rules.NAMES_RULE:
            return True
        if left_names and (hit["source"], hit["session_id"]) not in relevance:
            return False
        theirs = held.get((anchor["source"], anchor["session_id"]), _NONE)
        ours = held.get((hit["source"], hit["session_id"]), _NONE)
        return (theirs & names) <= ours

    moved = reorder(hits, holds_enough if held else None, rules.FUSED_MOVE_SHARE if held else None,
                    holds_names if held else None)
    for h in moved:
        h["score"] = fused_score[h["id"]]
        h.pop("revision_score", None)
    if rules.CAPPED_REVISION and held and lane:
        moved = capped_revisions(moved, item_hits, held, capped_words(lane[0].capped), holds_names)
    if current.TRANSCRIPT_SUBJECT and held and evidence and conn is not None:
        # the newer session holding the query's words, where the items do not say them (current.py)
        moved = current.newer_on_the_query(conn, moved, held, evidence, lane[0].capped if lane else ())
    return moved


def capped_words(capped) -> set[str]:
    """The lane's common words (`capped`) and, with WRITTEN_STAYS_CAPPED, the labels of their
    written forms (written_forms(): `"word"`), for CAPPED_REVISION."""
    capped = set(capped)
    return capped | {written_label(w) for w in capped} if rules.WRITTEN_FORM and rules.WRITTEN_STAYS_CAPPED else capped


def capped_revisions(hits: list[dict], item_hits: list[dict], held: dict, capped: set,
                     holds_names: Callable[[dict, dict], bool]) -> list[dict]:
    """CAPPED_REVISION: each revision the items lane's current-first placed before an anchor
    (item_hits.placed) goes just before that anchor in the fused order, when the anchor stands
    above it, the revision's transcript holds query words and only common ones (`capped`: read
    at their newest rows, scoring alike; `held`: the lane's and the read's terms per session), and
    it holds every name of the query the anchor's transcript holds (`holds_names`)."""
    placed = getattr(item_hits, "placed", None) or {}
    if not placed or not capped:
        return hits
    by_id = {h["id"]: (h["source"], h["session_id"]) for h in item_hits}
    out = list(hits)
    for revision_id, anchor_id in placed.items():
        rev_key, anchor_key = by_id.get(revision_id), by_id.get(anchor_id)
        where = {(h["source"], h["session_id"]): i for i, h in enumerate(out)}
        if rev_key is None or anchor_key is None or rev_key not in where or anchor_key not in where:
            continue
        r, a = where[rev_key], where[anchor_key]
        terms = held.get(rev_key, _NONE)
        if r < a or not terms or not set(terms) <= capped or not holds_names(out[r], out[a]):
            continue
        hit = out.pop(r)
        out.insert(a, hit)
        if isinstance(hit.get("explain"), dict):
            hit["explain"]["placed"] = {"rule": "capped_revision", "before": out[a + 1]["id"],
                                        "held_terms": sorted(terms)}
    return out
