"""Search over both layers: the items' ranking and the messages' ranking, fused per session.

An item indexes what a summarizer kept of a session (title, summary, questions, atoms); the exact
words someone later types (an error code, a flag, a name said once) are often only in the
transcript. search() therefore ranks twice and fuses:

- the items lane is search as it always was (BM25 over the item fields, times recency);
- the messages lane ranks sessions by their transcripts (messages_lane.py).

The package, in the order search() (below) runs it:

- messages_lane.py: the messages lane (message_lane(), LaneHit);
- reads.py: the sessions the lane never read, searched in their own messages (unread_evidence(),
  READ_UNREAD; TranscriptRead, the bounded read the later rules share);
- gate.py: the items lane's sessions gated by their transcripts' evidence (items_ranked(),
  coverage_bars(), gate_why());
- fusion.py: each lane's session order (Ranked) and their weighted reciprocal rank fusion (fuse());
- passes.py: the passes over the fused order (MORE_WORDS_HELD, ITEMS_ON_NEAR_TIE, PAGE_WORDS,
  NAMES_READ);
- current_rule.py: the current decision first, over the fused order (current_first());
- rules.py: every constant that tunes them, read at call time as `rules.X`: a test or a benchmark
  changes a rule there (`monkeypatch.setattr(rules, "NEAR_TIE", 0)`). `fused.NEAR_TIE` is the
  same attribute, read and written through (_Package below), never a copy.

search() calls the stages by their names in this module, so a stage is wrapped by patching it
here (`fused.current_first`); a stage's own helpers where that stage calls them
(`messages_lane._scores`). Every public name of the module fused.py was is importable from here,
and the lane's helpers that tests and benchmarks call; the other private ones from their modules.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from types import ModuleType

import apsw

from jezero.query.common import Hits
from jezero.query.fused import rules
from jezero.query.fused.current_rule import capped_revisions, capped_words, current_first
from jezero.query.fused.fusion import (Ranked, check_lanes, fuse, lane_separation, messages_ranked, separation,
                                       vectors_ranked)
from jezero.query.fused.gate import coverage_bars, gate_why, items_ranked
from jezero.query.fused.messages_lane import (LaneHit, _by_sessions, _common_floors, _is_name, _ranking, _scores,
                                              is_written_label, message_lane, written_forms, written_label)
from jezero.query.fused.passes import (item_words, items_on_near_ties, more_words_held_first, names_read_first,
                                       page_words_first)
from jezero.query.fused.reads import Cut, Read, TranscriptRead, unread_evidence

__all__ = [
    "Cut", "LaneHit", "Ranked", "Read", "TranscriptRead", "capped_revisions", "capped_words", "check_lanes",
    "coverage_bars", "current_first", "fuse", "gate_why", "is_written_label", "item_words", "items_on_near_ties",
    "items_ranked", "lane_separation", "message_lane", "messages_ranked", "more_words_held_first",
    "names_read_first", "page_words_first", "rules", "search", "separation", "unread_evidence", "vectors_ranked",
    "written_forms", "written_label",
    # (the messages lane's helpers that tests and benchmarks call: importable as before)
    "_by_sessions", "_common_floors", "_is_name", "_ranking", "_scores",
]


def search(conn: apsw.Connection, query: str, lanes: Sequence[str], items_lane: Callable[[int], list[dict]], *,
           sources, source, project, since, limit: int, time_budget_ms: int, explain: bool,
           reorder: Callable[[list[dict]], list[dict]] | None = None,
           vectors_lane: Callable[[], list] | None = None, engine: str | None = None) -> list[dict]:
    """The fused search; `items_lane(n)` runs the items search for its best n hits, `reorder` is
    the items' current-first rule (current.py), applied again to the fused order (below);
    `vectors_lane()` the semantic lane (query/vectors.py), when "vectors" is chosen."""
    lane = message_lane(conn, query, sources=sources, source=source, project=project, since=since,
                        time_budget_ms=time_budget_ms, engine=engine) if "messages" in lanes else Hits()
    near = vectors_lane() if vectors_lane is not None and rules.VECTORS in lanes else ()
    notes = (near.off,) if getattr(near, "off", None) else ()
    ranked = [messages_ranked(lane)] + ([vectors_ranked(near, lane if "messages" in lanes else None)] if near else [])
    arrange = near.literal_guard(lane) if near else None  # literal matches keep their place (query/vectors.py)
    if "items" not in lanes:
        hits = Hits(fuse(conn, ranked, limit, explain=explain, arrange=arrange))
        hits.cut, hits.notes = lane.cut, notes
        return hits
    item_hits = items_lane(max(limit, rules.ITEMS_SESSIONS))
    read = unread_evidence(conn, lane, item_hits, time_budget_ms) if rules.READ_UNREAD else None
    if rules.READ_HELD and getattr(read, "held", None):  # what the read found is held (the fused current-first)
        lane.held = {**lane.held, **read.held}
    items = items_ranked(item_hits, lane, read)
    if rules.CAPPED_ALONE and ranked[0].sessions:
        ranked[0] = messages_ranked(lane, {(h["source"], h["session_id"]) for h in item_hits}, items.gate)
    # The rules below read the fused order's first PAGE_HITS, whatever the limit; a longer answer
    # is that page followed by the fused order's next hits, so that its first hits are a shorter
    # answer's (before, a search for 20 gave its rules 20 hits: a hit 4th at 10 could be 5th at 20).
    fused = fuse(conn, [items] + ranked, max(limit, rules.PAGE_HITS), explain=explain, arrange=arrange)
    fused, after = fused[:rules.PAGE_HITS], fused[rules.PAGE_HITS:]
    if rules.MORE_WORDS_HELD and lane:
        fused = more_words_held_first(fused, lane, read, item_hits)
    if rules.ITEMS_ON_NEAR_TIE and lane:
        fused = items_on_near_ties(conn, query, fused, item_hits, lane, read)
    if rules.PAGE_WORDS and lane:
        fused = page_words_first(conn, fused, lane, time_budget_ms)
    if rules.NAMES_READ and lane:
        fused = names_read_first(conn, query, fused, lane, time_budget_ms)
    page = current_first(fused, item_hits, lane, reorder, conn=conn) if reorder else fused
    hits = Hits((list(page) + after)[:limit])
    hits.cut = lane.cut or getattr(item_hits, "cut", False) or getattr(read, "cut", False)
    hits.notes = notes
    return hits


class _Package(ModuleType):
    """This package as a module, its rules those of rules.py: `fused.NEAR_TIE` reads
    rules.NEAR_TIE and `fused.NEAR_TIE = 0` (a test's monkeypatch, a benchmark's toggle) sets it,
    so a rule has one place and patching it by either name changes the search."""

    def __getattr__(self, name: str):
        if name in _RULES:
            return getattr(rules, name)
        raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")

    def __setattr__(self, name: str, value) -> None:
        if name in _RULES:
            setattr(rules, name, value)
        else:
            super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        if name in _RULES:
            raise AttributeError(f"{name} is a rule of {rules.__name__}: set it, do not delete it")
        super().__delattr__(name)


_RULES = frozenset(name for name in vars(rules) if name.isupper())
sys.modules[__name__].__class__ = _Package
