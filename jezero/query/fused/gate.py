"""The items lane's gate: each of its sessions weighed by its transcript's evidence.

Each session of the items lane is gated by the messages lane's evidence for it, (that session's
messages score / the best of the sessions whose transcripts hold as many of the query's words,
COVERAGE_GATE) ** GATE_POWER. In small talk every item's summary matches a question through
everyday words, and the items' order is noise: a session the items put first whose transcript
holds few of the query's words gives way to the one whose transcript holds the fact. In coding
sessions the item that leads (an error in its atoms) is also the session whose transcript holds
the words, so it keeps its say. A session the lane never read is gated by what reading its own
messages found (reads.py, READ_UNREAD); one whose read found common words alone is gated against
the sessions whose evidence is common words alone too, not against one holding an uncapped word
at full bm25 (READ_ALIKE): like is compared with like. `explain` gives each item's gate and where
its evidence came from (gate_why()).

The rules named here are constants of rules.py.
"""

from __future__ import annotations

from collections.abc import Callable

from jezero.query import bm25
from jezero.query.fused import rules
from jezero.query.fused.fusion import Ranked, separation
from jezero.query.fused.messages_lane import LaneHit


def items_ranked(item_hits: list[dict], lane: list[LaneHit], read: dict | None = None) -> Ranked:
    """The items' session order for fusion. Its weight is its separation; each session's share is
    gated by the messages lane's evidence for it, (its messages score / the lane's best) **
    GATE_POWER: an item that leads on words its transcript barely holds (a chat summary matched
    through everyday words) gives way, one whose transcript agrees keeps its say. Without messages
    (an old library, a query of short words, a lane out of work) the items rank alone. `read`:
    the evidence of sessions whose transcripts were read for the lane's common words
    (unread_evidence(), READ_UNREAD), in place of the lane's own, never above the lane's best.
    With COVERAGE_GATE the best a session is compared with is that of the sessions holding at
    least as many of the query's words (coverage_bars()). With `explain`, each shown item's
    explain gets a "gate" entry (gate_why())."""
    keys, shown = [], []
    for h in item_hits:
        key = (h["source"], h["session_id"])
        if key not in keys:
            keys.append(key)
            shown.append(h)
    gate = None
    evidence = getattr(lane, "evidence", None)
    if lane and evidence:
        best = max(evidence.values())  # the lane's first may be a near tie moved up (NEAR_TIE)
        if read:
            evidence = {**evidence, **read}
        held = {**(getattr(lane, "held", None) or {}), **(getattr(read, "held", None) or {})}
        bar = coverage_bars(evidence, held, getattr(lane, "weights", None) or {}) if rules.COVERAGE_GATE else None
        bars = {key: bar(key) if bar else best for key in keys}
        gate = {key: (min(1.0, evidence[key] / bars[key]) if bars[key] > 0 else 1.0) ** rules.GATE_POWER
                if key in evidence else rules.UNHELD_GATE for key in keys}
        inherited: dict[tuple[str, str], tuple[str, str]] = {}
        if rules.INHERIT_GATE:
            by_id = {h["id"]: (h["source"], h["session_id"]) for h in item_hits}
            for moved, anchor in getattr(item_hits, "placed", {}).items():
                m, a = by_id.get(moved), by_id.get(anchor)
                if m in gate and a in gate and gate[a] > gate[m]:
                    gate[m] = gate[a]
                    inherited[m] = a
        capped = set(lane[0].capped) if rules.READ_ALIKE and read else set()
        if capped:  # a read session holding common words alone: compared with its like (READ_ALIKE)
            alike = max((ev for k, ev in evidence.items() if held.get(k) and set(held[k]) <= capped), default=0.0)
            for key in keys:
                if key in read and held.get(key) and set(held[key]) <= capped and alike > 0:
                    bars[key] = alike
                    gate[key] = max(gate[key], min(1.0, evidence[key] / alike) ** rules.GATE_POWER)
        for key, h in zip(keys, shown):
            if isinstance(h.get("explain"), dict):
                h["explain"]["gate"] = gate_why(key, gate, evidence, bars, best, held, read, inherited)
    return Ranked("items", separation([h.get("score") or 0.0 for h in item_hits]), keys, shown, gate)


def gate_why(key, gate, evidence, bars, best, held, read, inherited) -> dict:
    """What `explain` says of an item's gate: its value, the evidence it was read from and what
    that was compared with, the terms its transcript holds, and whether the evidence came from the
    lane or from reading the session's own messages (READ_UNREAD: `read_terms`, the words that
    read found), or was taken from the hit it was placed before (INHERIT_GATE)."""
    came = "read_unread" if read and key in read else "messages_lane" if key in evidence else "none"
    out = {"gate": gate[key], "power": rules.GATE_POWER, "evidence": evidence.get(key, 0.0), "compared_with": bars[key],
           "lane_best": best, "coverage_gate": rules.COVERAGE_GATE, "held_terms": sorted(held.get(key, ())),
           "evidence_from": came}
    if came == "read_unread":
        out["read_terms"] = sorted(getattr(read, "found", {}).get(key, ()))
    if key in inherited:
        out["inherited_from"] = inherited[key][1]
    return out


def coverage_bars(evidence: dict, held: dict, weights: dict) -> Callable[[tuple[str, str]], float]:
    """COVERAGE_GATE: what the items' gate compares a session's evidence with: the best evidence
    of the sessions whose transcripts hold at least as many of the query's words (`held`: the
    lane's and what unread_evidence() read), each word counted when the lane weighs it above
    bm25's floor (`weights`). A session holding none of those is compared with the lane's best."""
    counted = {t for t, w in weights.items() if w > bm25.IDF_FLOOR}
    inter, held_by = counted.intersection, held.get

    def count(key) -> int:
        return len(inter(held_by(key, ())))

    # (every session the lane scored, hundreds a search: the count inlined, max() as a test)
    best_of: dict[int, float] = {}
    for key, ev in evidence.items():
        n = len(inter(held_by(key, ())))
        was = best_of.get(n, 0.0)
        best_of[n] = ev if ev > was else was
    at_least, running = {}, 0.0
    for n in sorted(best_of, reverse=True):
        running = max(running, best_of[n])
        at_least[n] = running
    tiers = sorted(at_least)
    top = at_least[tiers[0]] if tiers else 0.0

    def bar(key) -> float:
        n = count(key)
        return next((at_least[t] for t in tiers if t >= n), top) or top
    return bar
