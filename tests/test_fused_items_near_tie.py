"""Two sessions whose transcripts the messages lane cannot tell apart (as many of the query's words,
evidence within its near tie) are ordered by the items lane (jezero/query/fused/,
ITEMS_ON_NEAR_TIE), on both engines.

Seen padded (benchmarks/retrieval, coding, `state management library in the tidepool app`): the
current decision's transcript holds `management` (evidence 5.53), a build-failure session's
holds `library` (5.88), one word each (`state` and `app` are common, read at their newest rows).
The items lane put the decision 1st (its item says `state`, `management` and `tidepool`); the
gate's power turned the lane's 6% into a 22% cut of its items share, and the build-failure
session came first.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from jezero.query.fused import rules
from test_query_engines import engine, explained, message_session, stored  # noqa: F401  (engine: the parametrised fixture: fts5, tantivy)

T0 = datetime(2026, 3, 1, 9, tzinfo=timezone.utc)
NOW = T0 + timedelta(days=120)
QUERY = "charting library for the dashboard app"


def library(path, engine, monkeypatch):  # noqa: F811
    """`chosen` (day 0): its item is the dashboard app's charting choice (all four of the query's
    words); its transcript says `dashboard` and `app`. `other` (day 5, another project): its item
    is about a build, saying `library`; its transcript says `library` once, in a message as long.
    24 newer crash logs say `app` (common: read at its newest 12 messages, which never reach
    `chosen`; the lane read `chosen` through `dashboard`, so READ_UNREAD does not read it)."""
    monkeypatch.setattr(rules, "LANE_MAX_ROWS", 12)
    records = [
        message_session("chosen", T0, ["the dashboard needs something, we settled it today",
                                       "fine, the app gets it next week"],
                        "Charting library for the dashboard app",
                        "Charting for the dashboard app: the library is Recharts.", project="web"),
        message_session("other", T0 + timedelta(days=5), ["the library breaks the release build today",
                                                          "pin the old one"],
                        "Release build broke", "The release build broke after a library update.", project="ops"),
    ]
    for n in range(24):
        records.append(message_session(f"crash{n:02d}", T0 + timedelta(days=20 + n),
                                       [f"crash {n}: the app closed on screen {n}", "noted"],
                                       f"Crash report {n}", "everyday help", project="me"))
    return stored(path / "lib.sqlite3", records, engine)


def ranked(path, engine):  # noqa: F811
    return explained(path, QUERY, engine, NOW)


def test_the_items_order_decides_between_transcripts_the_messages_lane_cannot_tell_apart(tmp_path, engine,  # noqa: F811
                                                                                         monkeypatch):
    path = library(tmp_path, engine, monkeypatch)
    order, why = ranked(path, engine)
    assert order[:2] == ["chosen", "other"]
    assert why["chosen"]["placed"]["rule"] == "items_on_near_tie"
    assert why["chosen"]["placed"]["evidence_share"] >= 1 - rules.NEAR_TIE
    assert why["chosen"]["placed"]["held_terms"] == ["dashboard"]  # `app` was never read there
    assert why["chosen"]["fusion"]["capped_in_messages"] == ["app"]
    assert why["chosen"]["fusion"]["ranks"] == {"items": 1, "messages": 2}
    assert why["other"]["fusion"]["ranks"] == {"items": 2, "messages": 1}
    monkeypatch.setattr(rules, "ITEMS_ON_NEAR_TIE", False)
    order, _ = ranked(path, engine)
    assert order[:2] == ["other", "chosen"]  # the messages lane's order, by a near tie, put `other` first
