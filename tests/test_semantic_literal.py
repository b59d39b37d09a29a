"""The semantic lane's literal guard (query/vectors.py, LITERAL_IDF): a session the keyword lanes
rank above another, whose transcript holds a literal term of the query (a name, or a word few of
the sessions searched hold) that the other's lacks, is not displaced by the vectors. A real
library ingested through the connector, with the hashing test embedder (hashed words and
trigrams: sessions sharing the query's everyday words come out nearest, as "about the same topic"
does with a real model)."""

from __future__ import annotations

import pytest

pytest.importorskip("numpy", reason="the semantic lane needs numpy (pip install 'jezero[semantic]'; core-only run)")
pytest.importorskip("sqlite_vec", reason="the semantic lane needs sqlite-vec (pip install 'jezero[semantic]'; core-only run)")

from jezero.query import fused, vectors  # noqa: E402
from jezero.store import open_readonly  # noqa: E402
from test_semantic import config, find, ingest, plugins_in, session  # noqa: E402, F401

QUERY = "deploy to staging fails with E4417"


def library(tmp_path, *, near_holds_the_code: bool = False):
    """One session holds the query's error code, in a long message about something else; three
    say the deploy to staging fails; nine deploy to a stage (one common word of the query, said
    again and again: near the query for the vectors, weak for the keyword lanes); ten bake bread.
    The lane keeps 10 nearest vectors per table, so the error code's session is not among them."""
    cfg = config(tmp_path, k=10)
    session(tmp_path, "local", "exact", "the nightly export job stopped with E4417 again, the third time this week, "
            "after the object store rotated its keys",
            "E4417 is the quota error of the object store; raised the bucket quota and the export ran",
            ended_at="2026-01-02T10:00:00Z")
    for i in range(3):
        session(tmp_path, "local", f"topic{i}", "the deploy to staging fails", f"staging deploy fails: tag {i}",
                ended_at=f"2026-01-{3 + i:02d}T10:00:00Z")
    code = " with E4417" if near_holds_the_code else ""
    for i in range(9):
        session(tmp_path, "local", f"near{i}", f"deploy to the stage {i}{code}", "deploy deploy to the stage",
                ended_at=f"2026-01-{10 + i:02d}T10:00:00Z")
    for i in range(10):
        session(tmp_path, "local", f"other{i}", f"bake bread loaf {i} with rye flour", f"let the dough rise for {i} hours",
                ended_at=f"2026-02-{10 + i}T10:00:00Z")
    ingest(cfg)
    return cfg


def order(hits) -> list[str]:
    return [h["session_id"] for h in hits]


def test_an_exact_error_code_is_not_displaced_by_sessions_about_the_same_topic(tmp_path, plugins_in, monkeypatch):
    cfg = library(tmp_path)
    keyword = order(find(cfg, QUERY, lanes=["items", "messages"]))
    assert keyword.index("exact") == 3  # after the three sessions holding the query's other words
    assert "exact" not in order(find(cfg, QUERY, lanes=["vectors"]))
    hybrid = order(find(cfg, QUERY))
    assert hybrid[:4] == keyword[:4]
    # the fixture is one the guard decides: without it the deploy sessions push the code out
    monkeypatch.setattr(vectors, "LITERAL_GUARD", False)
    assert "exact" not in order(find(cfg, QUERY))[:5]


def test_a_held_back_session_says_which_literal_match_kept_it_below(tmp_path, plugins_in):
    cfg = library(tmp_path)
    hits = find(cfg, QUERY, explain=True)
    below = {h["session_id"]: h["explain"]["fusion"]["kept_below_literal_match"] for h in hits
             if "kept_below_literal_match" in h["explain"]["fusion"]}
    assert below and all(s.startswith("near") for s in below)
    assert {"session": "exact", "literal": ["E4417"]} in below.values()
    assert all(not s.startswith("near") or s in below for s in order(hits)[4:])


def test_sessions_holding_the_literal_term_are_ordered_by_the_fusion_as_before(tmp_path, plugins_in, monkeypatch):
    """The guard holds the keyword order only against sessions lacking the term: when the deploy
    sessions hold the error code too, the fused order is the one without the guard."""
    cfg = library(tmp_path, near_holds_the_code=True)
    guarded = order(find(cfg, QUERY))
    assert guarded != order(find(cfg, QUERY, lanes=["items", "messages"]))  # the vectors moved something
    monkeypatch.setattr(vectors, "LITERAL_GUARD", False)
    assert guarded == order(find(cfg, QUERY))


def test_a_word_half_the_sessions_hold_is_not_literal_but_is_within_a_filter_where_few_do(tmp_path, plugins_in):
    """`deploy` is in 12 of the 23 sessions: not literal, so a query of it alone has no guard;
    `E4417`, in one, is. Rarity is counted within the search's filters: since the day of near7,
    two of the twelve sessions searched hold `deploy`, and there it is literal."""
    cfg = library(tmp_path)
    conn = open_readonly(cfg.library_path())
    try:
        lane = vectors.VectorLane(cfg.semantic)

        def guard(query, since=None):
            filters = {"sources": None, "source": None, "project": None, "since": since}
            messages = fused.message_lane(conn, query, time_budget_ms=1000, **filters)
            return lane.sessions(conn, query, **filters).literal_guard(messages)

        assert guard("deploy") is None
        assert guard("E4417") is not None
        since = conn.execute("SELECT occurred_at FROM items WHERE session_id = 'near7'").fetchone()[0]
        assert conn.execute("SELECT count(*) FROM items WHERE occurred_at >= ?", (since,)).fetchone()[0] == 12
        assert guard("deploy", since) is not None
    finally:
        conn.close()




def test_only_the_keyword_lanes_first_sessions_guard(tmp_path, plugins_in, monkeypatch):
    """LITERAL_DEPTH: only the keyword lanes' first LITERAL_DEPTH sessions guard. The error code's
    session is 4th by keyword: within the depth (5) it keeps its place; with a depth of 3 it is
    below it, holds nothing back, and the deploy-to-a-stage sessions (nearer for the vectors) push
    it out of the five, as without the guard; with no depth it keeps its place again."""
    cfg = library(tmp_path)
    keyword = order(find(cfg, QUERY, lanes=["items", "messages"]))
    assert keyword.index("exact") == 3 < vectors.LITERAL_DEPTH
    assert order(find(cfg, QUERY)).index("exact") == 3
    monkeypatch.setattr(vectors, "LITERAL_DEPTH", 3)
    assert "exact" not in order(find(cfg, QUERY))[:5]
    monkeypatch.setattr(vectors, "LITERAL_DEPTH", None)
    assert order(find(cfg, QUERY)).index("exact") == 3
