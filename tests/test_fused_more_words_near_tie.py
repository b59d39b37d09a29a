"""A session whose transcript holds every query word the hit above it holds, and more, at an evidence
within the lane's near tie, goes before it when the items lane ranks it higher too
(jezero/query/fused/, MORE_WORDS_HELD with MORE_WORDS_NEAR_TIE), on both engines.

Seen padded (benchmarks/retrieval, coding A, `dbt build --select staging`): data-dbt-unique's
transcript holds `dbt`, `--select` and `staging` (18.6), data-orch-3's `dbt` and `--select` alone
in shorter messages (19.5); the items lane put data-dbt-unique 1st, the lane data-orch-3, and
the fused search data-orch-3. Raw BM25 put data-dbt-unique 1st.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from jezero.query import fused
from jezero.query.fused import rules
from test_query_engines import engine, explained, message_session, stored  # noqa: F401  (engine: the parametrised fixture: fts5, tantivy)

T0 = datetime(2026, 3, 1, 9, tzinfo=timezone.utc)
NOW = T0 + timedelta(days=90)
QUERY = "dbt build --select staging"


def session(sid, day, texts, title, summary):
    return message_session(sid, T0 + timedelta(days=day), texts, title, summary, project="data")


def library(path, engine):  # noqa: F811
    """`unique` (day 40): its transcript says the whole command, in a longer message, and its item
    is about it. `orch` (day 60): its transcript says `dbt --select` in a shorter message; its item
    is about the orchestrator. Twelve older sessions say `staging` and `build`, which the lane (at
    LANE_MAX_ROWS 5) reads at their newest rows only, each scoring alike."""
    records = [
        session("unique", 40, ["dbt build --select staging fails on the unique test for", "ok"],
                "dbt unique test fails on staging", "dbt build --select staging: the unique test on stations fails."),
        session("orch", 60, ["run dbt --select from the scheduler every night at", "ok"],
                "Orchestrator choice", "Moved the nightly runs to Dagster, dbt assets."),
        *[session(f"build{n}", n, [f"the staging build {n} is green", "nice"], f"Build {n}", "A green build.")
          for n in range(12)],
    ]
    return stored(path / "lib.sqlite3", records, engine)


def test_a_session_holding_more_words_on_a_near_tie_the_items_agree_with_comes_first(tmp_path, engine,  # noqa: F811
                                                                                      monkeypatch):
    monkeypatch.setattr(rules, "LANE_MAX_ROWS", 5)
    path = library(tmp_path, engine)
    order, why = explained(path, QUERY, engine, NOW)
    assert order[:2] == ["unique", "orch"]
    assert why["unique"]["placed"]["rule"] == "more_words_held"
    assert why["unique"]["placed"]["held_terms"] == ["--select", "build", "dbt", "staging"]
    assert why["unique"]["fusion"]["ranks"]["items"] == 1 and why["unique"]["fusion"]["ranks"]["messages"] == 2
    share = why["unique"]["gate"]["evidence"] / why["orch"]["gate"]["evidence"]
    assert 1 - rules.NEAR_TIE <= share < 1  # a near tie, the session above it scoring more
    monkeypatch.setattr(rules, "MORE_WORDS_NEAR_TIE", False)
    order, _ = explained(path, QUERY, engine, NOW)
    assert order[:2] == ["orch", "unique"]  # the lane's 1st, scoring a little more on fewer words


def test_not_when_the_items_rank_the_upper_session_higher(tmp_path, engine, monkeypatch):  # noqa: F811
    monkeypatch.setattr(rules, "LANE_MAX_ROWS", 5)
    path = library(tmp_path, engine)
    # the same pair with the items' order read the other way round: the lower hit no longer ranked
    # higher there, the lane's order stands
    monkeypatch.setattr(fused, "more_words_held_first", _with_items_reversed(fused.more_words_held_first))
    order, why = explained(path, QUERY, engine, NOW)
    assert order[:2] == ["orch", "unique"]
    assert "placed" not in why["orch"] and "placed" not in why["unique"]


def _with_items_reversed(rule):
    def reversed_items(hits, lane, read=None, item_hits=None):
        return rule(hits, lane, read, list(reversed(item_hits or [])))
    return reversed_items
