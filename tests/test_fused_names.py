"""The fused current-first's names rule when the query's name was left out of the messages lane
(jezero/query/fused/, NAMES_LEFT_OUT), on both engines.

A query naming a file, a command or a flag asks where it was, not what is current: a newer hit
moves before an anchor only when its transcript holds every name of the query the anchor's holds
(NAMES_RULE). A name whose words are in too many messages together (PHRASE_MAX_ROWS: `tripdata/
clean.py` in a library of thousands of sessions) is left out of the lane, so no transcript was
seen to hold it and the rule let any newer hit of the anchor's subject move (padded coding,
`tripdata/clean.py`: the orchestrator revisions, holding `tripdata` alone, went before the
sessions that edited the file). The name is then read where it was looked up, the items' trigram
index: the newer hit must be one the items lane found.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from jezero.config import SearchConfig
from jezero.query import search
from jezero.query.fused import rules
from jezero.store import open_readonly
from test_query_engines import engine, message_session, stored  # noqa: F401  (engine: the parametrised fixture: fts5, tantivy)

T0 = datetime(2026, 3, 1, 9, tzinfo=timezone.utc)
NOW = T0 + timedelta(days=60)
TITLE = "Nightly load of the trips dataset"


def session(sid, day, texts, title, summary):
    return message_session(sid, T0 + timedelta(days=day), texts, title, summary, project="data")


def library(path, engine):  # noqa: F811
    """`edited` (day 5) changed tripdata/clean.py; `later` (day 20), a session of the same title,
    moved the load to a new scheduler and says `tripdata` alone; its item names no file."""
    records = [
        session("edited", 5, ["the nightly load keeps null rows", "edited tripdata/clean.py to drop the null rows"],
                TITLE, "Dropped the null rows in tripdata/clean.py."),
        session("later", 20, ["move the nightly load to a real scheduler", "the tripdata load now runs in dagster"],
                TITLE, "Moved the nightly load to Dagster."),
        *[session(f"other{n}", 30 + n, [f"what about the station feed {n}", "it polls every minute"],
                  f"Station feed {n}", "Polled the station feed.") for n in range(8)],
    ]
    return stored(path, records, engine)


def ranked(path, engine):  # noqa: F811
    with open_readonly(path) as conn:
        hits = search(conn, "tripdata/clean.py", options=SearchConfig(engine=engine), now=NOW, explain=True)
    return [h["session_id"] for h in hits], hits


def test_a_name_left_out_of_the_lane_is_read_in_the_items(tmp_path, engine, monkeypatch):  # noqa: F811
    monkeypatch.setattr(rules, "PHRASE_MAX_ROWS", 1)  # the name's words in more messages than this: left out
    path = library(tmp_path / "lib.sqlite3", engine)
    order, hits = ranked(path, engine)
    assert "tripdata/clean.py" in hits[0]["explain"]["fusion"]["left_out_of_messages"]
    assert order[:2] == ["edited", "later"]
    assert "items" not in hits[1]["explain"]["fusion"]["ranks"]  # `later`: its item names no file
    monkeypatch.setattr(rules, "NAMES_LEFT_OUT", False)
    monkeypatch.setattr(rules, "NAMES_READ", False)  # (which reads the name in the hits' transcripts)
    order, hits = ranked(path, engine)
    assert order[:2] == ["later", "edited"]  # without the rule: the newer session of that title first
    assert hits[0]["explain"]["placed"]["rule"] == "current_first"
