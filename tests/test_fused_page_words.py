"""When the messages lane read a query word at its newest rows only, the fused hits' transcripts
are read for it; a query word held by fewer than half of the hits tells them apart, and the hits
holding one go before the hits holding none (jezero/query/fused/, PAGE_WORDS), on both engines.

Seen padded (benchmarks/retrieval, coding A, `plume parser implementation`): `parser` is in half
the library (the distractors' file names), read at its newest rows, which never reach the plume
sessions; `plume` is in every plume session, so the lane and the items ordered them by `plume`
alone, and plume-parser-2, the current parser decision, was 6th. Of the ten hits, the two parser
sessions (and one distractor) hold `parser`.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from jezero.config import SearchConfig
from jezero.query import search
from jezero.query.fused import rules
from jezero.store import open_readonly
from test_query_engines import engine, explained, message_session, stored  # noqa: F401  (engine: the parametrised fixture: fts5, tantivy)

T0 = datetime(2026, 3, 1, 9, tzinfo=timezone.utc)
NOW = T0 + timedelta(days=90)
QUERY = "plume parser implementation"
TOPICS = ["closures", "tail calls", "the borrow checker", "the garbage collector", "diagnostics", "the backend",
          "inference", "macros"]


def session(sid, day, texts, title, summary):
    return message_session(sid, T0 + timedelta(days=day), texts, title, summary, project="plume")


def library(path, engine):  # noqa: F811
    """`pratt` (day 10) rewrote plume's parser, said in one long message; its item does not say
    `parser`. Eight newer plume sessions say `plume` and their topic in short messages. Twelve
    newer config sessions say `parser` (with LANE_MAX_ROWS 10: the lane reads `parser` at its
    newest ten messages, all of them config sessions)."""
    records = [session("pratt", 10, ["in plume the parser generated from the grammar gives shift reduce conflicts, "
                                     "so I rewrote it by hand", "done"],
                       "Operator precedence in plume", "Rewrote the operator precedence handling.")]
    records += [session(f"topic{n}", 20 + n, [f"plume {t}", "ok"], f"plume {t}", f"Worked on {t}.")
                for n, t in enumerate(TOPICS)]
    records += [session(f"cfg{n}", 60 + n, [f"the config parser fails on line {n}", "fixed"], f"Config {n}",
                        "A config fix.") for n in range(12)]
    return stored(path / "lib.sqlite3", records, engine)


def test_the_hits_holding_a_word_that_tells_the_page_apart_come_first(tmp_path, engine, monkeypatch):  # noqa: F811
    monkeypatch.setattr(rules, "LANE_MAX_ROWS", 10)
    path = library(tmp_path, engine)
    order, why = explained(path, QUERY, engine, NOW)
    assert why["pratt"]["fusion"]["capped_in_messages"] == ["parser"]
    assert order[0] == "pratt"
    assert why["pratt"]["placed"] == {"rule": "page_words", "words": ["parser"]}
    # the newest config session, held by the lane for `parser`, holds it too: it comes next
    assert order[1] == "cfg11" and set(order[2:10]) == {f"topic{n}" for n in range(8)}
    monkeypatch.setattr(rules, "PAGE_WORDS", False)
    order, _ = explained(path, QUERY, engine, NOW)
    assert order.index("pratt") == 8  # after the eight sessions saying `plume` in shorter messages


def test_not_when_the_lane_read_every_message_of_the_query_words(tmp_path, engine, monkeypatch):  # noqa: F811
    path = library(tmp_path, engine)  # LANE_MAX_ROWS as shipped: every message holding `parser` is read
    order, why = explained(path, QUERY, engine, NOW)
    assert why[order[0]]["fusion"]["capped_in_messages"] == []
    assert all(why[k].get("placed", {}).get("rule") != "page_words" for k in order)
    monkeypatch.setattr(rules, "PAGE_WORDS", False)
    assert explained(path, QUERY, engine, NOW)[0] == order


def test_the_page_is_the_same_for_a_smaller_limit(tmp_path, engine, monkeypatch):  # noqa: F811
    monkeypatch.setattr(rules, "LANE_MAX_ROWS", 10)
    path = library(tmp_path, engine)
    with open_readonly(path) as conn:
        ten, three = (search(conn, QUERY, options=SearchConfig(engine=engine), now=NOW, limit=n) for n in (10, 3))
    assert [h["session_id"] for h in three] == [h["session_id"] for h in ten][:3]
    assert three[0]["session_id"] == "pratt"
    monkeypatch.setattr(rules, "PAGE_HITS", 3)  # the page cut to the limit: three sessions saying `plume` alone
    with open_readonly(path) as conn:
        assert "pratt" not in [h["session_id"] for h in search(conn, QUERY, options=SearchConfig(engine=engine),
                                                                now=NOW, limit=3)]


def test_a_longer_answer_starts_with_the_page(tmp_path, engine, monkeypatch):  # noqa: F811
    """A search for 20 gives the rules the same page of 10 and goes on with the fused order: its
    first 10 are a search for 10's. Before, the rules read all 20 hits; among 20, `parser` is in
    more than half (the config sessions), so it no longer told the page apart and `pratt` fell."""
    monkeypatch.setattr(rules, "LANE_MAX_ROWS", 10)
    path = library(tmp_path, engine)
    with open_readonly(path) as conn:
        ten, twenty = (search(conn, QUERY, options=SearchConfig(engine=engine), now=NOW, limit=n) for n in (10, 20))
    assert len(twenty) == 20 and twenty[0]["session_id"] == "pratt"
    assert [h["session_id"] for h in twenty][:10] == [h["session_id"] for h in ten]
