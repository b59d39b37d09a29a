"""The semantic lane's curve where the keyword evidence is flat (`[semantic] flat_k`, query/vectors.py flat_curve()): a query
whose keyword lanes cannot tell the sessions apart (every session of the conversation holds the
speakers' names, nothing else of the query is said) is ordered by the vectors, whose shares then
follow weight / (flat_k + rank); a query whose keyword lanes clearly separate their best session
keeps the fusion's own curve (RRF_K), so the keyword order stands. A real library ingested
through the connector, with the hashing test embedder (hashed words and trigrams: `puppies` is near
`puppy` through the words' fragments, which no keyword lane matches)."""

from __future__ import annotations

import pytest

pytest.importorskip("numpy", reason="the semantic lane needs numpy (pip install 'jezero[semantic]'; core-only run)")
pytest.importorskip("sqlite_vec", reason="the semantic lane needs sqlite-vec (pip install 'jezero[semantic]'; core-only run)")

from jezero.query import fused, vectors  # noqa: E402
from jezero.query.fused import rules  # noqa: E402
from jezero.store import open_readonly  # noqa: E402
from test_semantic import config, find, ingest, plugins_in, session  # noqa: E402, F401

TOPICS = ["the weather turned cold and grey", "a new bakery opened near the station", "the train was late again",
          "work has been busy this quarter", "the garden needs more water", "a film we watched on friday",
          "the neighbours painted their fence", "a long walk along the river", "tickets for the concert",
          "the car needs new tyres", "a recipe for lentil soup", "the gym was crowded", "a book about volcanoes",
          "the kitchen tap is leaking", "a cousin visiting in spring", "the phone screen cracked",
          "a birthday present for a colleague", "the library closes early now", "a quiz night at the pub",
          "the bus route changed", "a marathon in the autumn", "the heating bill went up", "a board game evening",
          "the window latch broke", "a holiday by the sea", "the printer ran out of ink", "a jazz record"]

FLAT = "maya and sam adoption of a puppy this weekend"
CLEAR = "where is the anniversary dinner for maya and sam"
FLAT_K = 2


def library(tmp_path):
    """A conversation of 30 sessions between Maya and Sam: each names both speakers and talks about
    one everyday thing, most of them `this weekend` (the keyword lanes' order of them is an
    accident). `pups` says they got two puppies from the shelter this weekend (no word
    of FLAT but the names and the weekend); `anniv` books the anniversary dinner (CLEAR's words)."""
    cfg = config(tmp_path, k=10, flat_k=FLAT_K)
    for i, topic in enumerate(TOPICS):
        weekend = "this weekend" if i % 3 else ""  # in 19 of the 30 sessions: not a literal term
        session(tmp_path, "local", f"s{i:02d}", f"maya and sam: {topic} {weekend}", f"sam said {topic} to maya",
                ended_at=f"2026-01-{1 + i:02d}T10:00:00Z")
    session(tmp_path, "local", "pups", "maya and sam: adopted two puppies from the shelter this weekend",
            "the adopted puppies sleep all day", ended_at="2026-02-01T10:00:00Z")
    session(tmp_path, "local", "anniv", "maya and sam: the anniversary dinner is booked at the harbour restaurant",
            "sam confirmed the anniversary dinner for saturday", ended_at="2026-02-02T10:00:00Z")
    session(tmp_path, "local", "dinner", "maya and sam: dinner for maya and sam, the dinner at home, where is it",
            "maya and sam: dinner dinner", ended_at="2026-02-03T10:00:00Z")
    ingest(cfg)
    return cfg


def order(hits) -> list[str]:
    return [h["session_id"] for h in hits]


def curve(cfg, query) -> int:
    """The vector lane's reciprocal-rank constant for the query, as search chooses it."""
    conn = open_readonly(cfg.library_path())
    try:
        filters = {"sources": None, "source": None, "project": None, "since": None}
        messages = fused.message_lane(conn, query, time_budget_ms=1000, **filters)
        return vectors.VectorLane(cfg.semantic).sessions(conn, query, **filters).curve(messages)
    finally:
        conn.close()


def test_where_the_keyword_lanes_cannot_tell_sessions_apart_the_vectors_decide(tmp_path, plugins_in):
    cfg = library(tmp_path)
    assert curve(cfg, FLAT) == FLAT_K < rules.RRF_K  # no session holds a literal term of it
    keyword = order(find(cfg, FLAT, lanes=["items", "messages"]))
    near = order(find(cfg, FLAT, lanes=["vectors"]))
    assert "pups" in near[:2] and "pups" not in keyword[:5]
    hybrid = find(cfg, FLAT, explain=True)
    assert order(hybrid)[:2] == near[:2]  # the vectors' first two, ahead of the keyword lanes' accidents
    assert all(h["explain"]["fusion"]["vectors_rrf_k"] == FLAT_K for h in hybrid)
    # without the messages lane nothing says the keyword evidence is flat: the fusion's own curve
    chosen = find(cfg, FLAT, lanes=["items", "vectors"], explain=True)
    assert chosen and all(h["explain"]["fusion"]["vectors_rrf_k"] == rules.RRF_K for h in chosen)
    # the fixture is one the rule decides: at the fusion's own curve the vectors' place counts little
    off = cfg.model_copy(update={"semantic": cfg.semantic.model_copy(update={"flat_k": None})})
    assert curve(off, FLAT) == rules.RRF_K
    assert "pups" not in order(find(off, FLAT))[:5]


def test_where_the_keyword_lanes_separate_their_best_the_fusion_keeps_its_curve(tmp_path, plugins_in):
    cfg = library(tmp_path)
    assert curve(cfg, CLEAR) == rules.RRF_K  # `anniversary`: one session of 30 holds it
    keyword = order(find(cfg, CLEAR, lanes=["items", "messages"]))
    assert keyword[0] == "anniv"
    hybrid = find(cfg, CLEAR, explain=True)
    assert order(hybrid)[0] == "anniv"
    assert hybrid[0]["explain"]["fusion"]["vectors_rrf_k"] == rules.RRF_K
    off = cfg.model_copy(update={"semantic": cfg.semantic.model_copy(update={"flat_k": None})})
    assert order(find(off, CLEAR)) == order(hybrid)  # unchanged: the rule did not apply
