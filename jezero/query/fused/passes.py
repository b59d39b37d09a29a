"""The passes over the fused order, before the current-first runs again (current_rule.py).

A hit whose transcript holds every query word of the hit above it and more, at a higher
evidence, goes before it (MORE_WORDS_HELD): the items' gated share alone does not pass such a
session. Where the lane cannot tell two transcripts apart (as many words, different ones, a near
tie) and the lower one's item holds more of the query's words, among them a common word its
transcript was never read for, the items' order decides (ITEMS_ON_NEAR_TIE). Where the lane read
common words at their newest rows only, the fused hits' transcripts are read for them, and the
hits holding a query word that fewer than half of the hits hold go before the hits holding none
(PAGE_WORDS). A name of the query the lane left out (a phrase of common words) is read in the
fused hits' transcripts, and the hits holding it go first (NAMES_READ).

The rules named here are constants of rules.py.
"""

from __future__ import annotations

from collections.abc import Callable

import apsw

from jezero.query import current
from jezero.query import messages as mq
from jezero.query.common import budget
from jezero.query.fused import rules
from jezero.query.fused.messages_lane import _NONE, _ranking
from jezero.query.fused.reads import TranscriptRead
from jezero.query.terms import parse_terms


def more_words_held_first(hits: list[dict], lane, read: dict | None = None,
                          item_hits: list[dict] | None = None) -> list[dict]:
    """MORE_WORDS_HELD: one pass down the fused order; a hit whose transcript holds every query
    word the hit above it holds and more (the lane's terms and the read's, lane.held), at a higher
    evidence, swaps with it, and the pair is passed (each session moves at most one place); with
    MORE_WORDS_NEAR_TIE also at an evidence within NEAR_TIE of it when the items lane (`item_hits`)
    ranks it higher. Not
    when its words are all common ones (read at their newest rows, each scoring alike: its
    evidence is then a count of alike scores, not a weighing)."""
    evidence = {**(getattr(lane, "evidence", None) or {}), **(read or {})}
    held = getattr(lane, "held", None) or {}
    capped = set(lane[0].capped) if lane else set()
    items_rank: dict[tuple[str, str], int] = {}
    for h in item_hits or ():
        items_rank.setdefault((h["source"], h["session_id"]), len(items_rank) + 1)
    unranked = len(items_rank) + 1
    out = list(hits)
    i = 1
    while i < len(out):
        upper, lower = ((h["source"], h["session_id"]) for h in out[i - 1:i + 1])
        ours, theirs = set(held.get(lower, ())), set(held.get(upper, ()))
        ev, above = evidence.get(lower, 0.0), evidence.get(upper, 0.0)
        near = rules.MORE_WORDS_NEAR_TIE and ev > 0 and ev >= (1 - rules.NEAR_TIE) * above \
            and items_rank.get(lower, unranked) < items_rank.get(upper, unranked)
        if theirs < ours and not ours <= capped and (ev > above or near):
            out[i - 1], out[i] = out[i], out[i - 1]
            if isinstance(out[i - 1].get("explain"), dict):
                out[i - 1]["explain"]["placed"] = {"rule": "more_words_held", "before": out[i]["id"],
                                                   "held_terms": sorted(ours)}
            i += 2
        else:
            i += 1
    return out


def items_on_near_ties(conn: apsw.Connection, query: str, hits: list[dict], item_hits: list[dict], lane,
                       read: dict | None = None) -> list[dict]:
    """ITEMS_ON_NEAR_TIE: one pass down the fused order; a hit the items lane ranks before the hit
    just above it swaps with it, and the pair is passed (each session moves at most one place),
    when the transcripts tie on both of seed 004's counts though they hold different words (as
    many of the query's words, the lane's terms and the read's, lane.held, not the same ones; the
    lower one's evidence within NEAR_TIE of the upper's), and the tie is not known: the lower
    one's item holds more of the query's words than the upper one's (item_words()), among them a
    common word (read at its newest rows only) its transcript was not seen to hold."""
    evidence = {**(getattr(lane, "evidence", None) or {}), **(read or {})}
    held = getattr(lane, "held", None) or {}
    capped = set(lane[0].capped)
    if not capped:
        return hits
    first: dict[tuple[str, str], tuple[int, dict]] = {}  # each session's items rank and best item
    for h in item_hits:
        first.setdefault((h["source"], h["session_id"]), (len(first) + 1, h))
    words = None
    out = list(hits)
    i = 1
    while i < len(out):
        upper, lower = ((h["source"], h["session_id"]) for h in out[i - 1:i + 1])
        ours, theirs = evidence.get(lower, 0.0), evidence.get(upper, 0.0)
        ours_held, theirs_held = set(held.get(lower, ())), set(held.get(upper, ()))
        if (lower in first and upper in first and first[lower][0] < first[upper][0]
                and ours > 0 and ours >= (1 - rules.NEAR_TIE) * theirs
                and len(ours_held) == len(theirs_held) and ours_held != theirs_held):
            if words is None:
                words = item_words(conn, query)
            in_item, in_upper_item = words(first[lower][1], first[upper][1])
            if len(in_item) > len(in_upper_item) and (in_item & capped) - ours_held:
                out[i - 1], out[i] = out[i], out[i - 1]
                if isinstance(out[i - 1].get("explain"), dict):
                    out[i - 1]["explain"]["placed"] = {"rule": "items_on_near_tie", "before": out[i]["id"],
                                                       "evidence_share": ours / theirs if theirs else 1.0,
                                                       "item_terms": sorted(in_item), "held_terms": sorted(ours_held)}
                i += 2
                continue
        i += 1
    return out


def names_read_first(conn: apsw.Connection, query: str, hits: list[dict], lane, time_budget_ms: int) -> list[dict]:
    """NAMES_READ: the query's names the lane left out (a phrase of common words: lane.names and
    the lane's left_out) are looked up in the transcript of each hit of the fused order (FTS5's
    match within the id range of each of the session's items, the lane's filters; the first match
    ends it), and the hits holding more of them go first, each group in the fused order. A hit
    found holding a name holds it for the fused current-first too (lane.held: its names rule). A
    hit whose transcript lacks a part of the name that the lane read whole (not common) is not
    read: it cannot hold the name."""
    names = sorted(set(getattr(lane, "names", None) or ()) & set(lane[0].left_out))
    if not names or mq.backend(conn) is not None:
        return hits
    read_whole = set(getattr(lane, "weights", None) or ()) - set(lane[0].capped)
    parts = {name: {t.text for t in mq.terms_for(conn, query) if t.part_of == name} & read_whole for name in names}
    read = TranscriptRead.of(conn, lane)
    found: dict[tuple[str, str], tuple[str, ...]] = {}
    with budget(conn, time_budget_ms):
        try:
            for h in hits:
                key = (h["source"], h["session_id"])
                if key in found:
                    continue
                have = set((getattr(lane, "held", None) or {}).get(key, _NONE))
                found[key] = tuple(name for name in names if parts[name] <= have
                                   and read.session_holds(key, '"' + name.replace('"', '""') + '"'))
        except apsw.InterruptError:
            return hits  # out of work: the fused order stands
    if len({len(f) for f in found.values()}) < 2:
        return hits  # every hit holds as many of the names: nothing to tell apart
    held = getattr(lane, "held", None)
    if held is not None:
        lane.held = {**held, **{k: frozenset(held.get(k, ())) | frozenset(f) for k, f in found.items() if f}}
    out = sorted(hits, key=lambda h: -len(found[(h["source"], h["session_id"])]))
    for before, h in zip(hits, out):
        if h is not before and isinstance(h.get("explain"), dict):
            h["explain"]["placed"] = {"rule": "names_read", "names": list(found[(h["source"], h["session_id"])])}
    return out


def page_words_first(conn: apsw.Connection, hits: list[dict], lane, time_budget_ms: int) -> list[dict]:
    """PAGE_WORDS: when the lane read some of the query's words at their newest rows only
    (lane.common), each hit's transcript is read for those it was not seen to hold (FTS5's match
    within the id range of each of the session's items, the lane's filters; the first match ends
    it). A query word held by fewer than half of the hits tells them apart; the hits holding one
    go before the hits holding none, each group in the fused order."""
    common = getattr(lane, "common", None) or {}
    if not common or mq.backend(conn) is not None:
        return hits
    held = getattr(lane, "held", None) or {}
    # each hit's query terms (a word as written is its own): the lane's, and what the read finds
    words = {key: set(held.get(key, ())) for key in dict.fromkeys((h["source"], h["session_id"]) for h in hits)}
    read = TranscriptRead.of(conn, lane)
    with budget(conn, time_budget_ms):
        try:
            for t in common:  # word by word: a word half the hits hold tells none apart, and its read stops
                holding = sum(t in have for have in words.values())
                for key, have in words.items():
                    if holding >= len(words) / 2:
                        break
                    if t in have:
                        continue
                    if read.session_holds(key, common[t][1]):
                        have.add(t)
                        holding += 1
        except apsw.InterruptError:
            return hits  # out of work: the fused order stands
    spread: dict[str, int] = {}
    for have in words.values():
        for t in have:
            spread[t] = spread.get(t, 0) + 1
    telling = {t for t, n in spread.items() if n < len(words) / 2}
    tells = {key: sorted(have & telling) for key, have in words.items()}
    out = [h for h in hits if tells[(h["source"], h["session_id"])]]
    out += [h for h in hits if not tells[(h["source"], h["session_id"])]]
    for before, h in zip(hits, out):
        if h is not before and tells[(h["source"], h["session_id"])] and isinstance(h.get("explain"), dict):
            h["explain"]["placed"] = {"rule": "page_words", "words": tells[(h["source"], h["session_id"])]}
    return out


def item_words(conn: apsw.Connection, query: str) -> Callable[..., tuple[set[str], ...]]:
    """The query's ranking words (_ranking: what the messages lane ranks by) each of some item
    hits' indexed text holds, as the items' index matches them (current.terms_held, one read for
    the hits together)."""
    from jezero.query.search import library_tokenizer

    tokenizer = library_tokenizer(conn)
    terms = [t for t in parse_terms(query, tokenizer) if t.part_of is None and _ranking(t)]

    def held_by(*hits: dict) -> tuple[set[str], ...]:
        held = current.terms_held(conn, [h["id"] for h in hits], terms, tokenizer)
        return tuple(held[h["id"]] for h in hits)
    return held_by
