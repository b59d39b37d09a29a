"""A name of the query that the messages lane left out is read in the fused hits' transcripts, and
the hits holding it come first (jezero/query/fused/, NAMES_READ), on both engines.

Seen padded (benchmarks/retrieval, coding A, `tripdata/clean.py` and `app/services/pdf.py`): with
2,000 distractor sessions the name's words (`tripdata`, `clean`, `py`) are in more than
PHRASE_MAX_ROWS messages together, so the lane reads the parts alone; four data sessions hold
`tripdata` and `clean`, and the one that edited the file (the items' 1st, the lane's 4th, its
item gated against a session saying the parts in shorter messages) was 4th. Raw BM25 over the
transcripts, whose trigram index reads the path whole, put it 1st.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from jezero.query.fused import rules
from test_query_engines import engine, explained, message_session, stored  # noqa: F401  (engine: the parametrised fixture: fts5, tantivy)

T0 = datetime(2026, 3, 1, 9, tzinfo=timezone.utc)
NOW = T0 + timedelta(days=60)
QUERY = "tripdata/clean.py"


def session(sid, day, texts, title, summary):
    return message_session(sid, T0 + timedelta(days=day), texts, title, summary, project="data")


def library(path, engine):  # noqa: F811
    """`edited` (day 5) changed tripdata/clean.py, said whole in one long message. `parts` (day 20)
    says `tripdata` and `clean` apart, in short messages, and never the file; its item is about
    cleaning the trip data. The others say neither."""
    records = [
        session("edited", 5, ["the nightly load keeps rows with a null end station and the dashboard double "
                              "counts them, so I edited tripdata/clean.py to drop those rows before the join "
                              "and added a test for it", "done"],
                "Null rows in the nightly load", "Dropped the null rows before the join."),
        session("parts", 20, ["the tripdata is not clean", "clean the tripdata then"],
                "Clean the tripdata", "Cleaned the tripdata by hand."),
        *[session(f"other{n}", 30 + n, [f"what about the station feed {n}", "it polls every minute"],
                  f"Station feed {n}", "Polled the station feed.") for n in range(8)],
    ]
    return stored(path / "lib.sqlite3", records, engine)


def test_a_hit_whose_transcript_holds_the_name_left_out_of_the_lane_comes_first(tmp_path, engine,  # noqa: F811
                                                                                  monkeypatch):
    monkeypatch.setattr(rules, "PHRASE_MAX_ROWS", 1)  # the name's words in more messages than this: left out
    path = library(tmp_path, engine)
    order, why = explained(path, QUERY, engine, NOW)
    assert QUERY in why["edited"]["fusion"]["left_out_of_messages"]
    assert order[:2] == ["edited", "parts"]
    assert why["edited"]["placed"] == {"rule": "names_read", "names": [QUERY]}
    monkeypatch.setattr(rules, "NAMES_READ", False)
    order, why = explained(path, QUERY, engine, NOW)
    assert order[:2] == ["parts", "edited"]  # the parts said in short messages, and an item about them, lead
    assert set(why["parts"]["fusion"]["matched_terms"]) == {"tripdata", "clean"}


def test_the_name_read_is_not_asked_when_the_lane_looked_it_up(tmp_path, engine, monkeypatch):  # noqa: F811
    path = library(tmp_path, engine)
    order, why = explained(path, QUERY, engine, NOW)
    assert why["edited"]["fusion"]["left_out_of_messages"] == []
    assert QUERY in why["edited"]["fusion"]["matched_terms"]  # the lane read the name whole
    assert order[0] == "edited" and why["edited"].get("placed", {}).get("rule") != "names_read"
