"""The fused current-first (jezero/query/fused/ current_first) does not move a newer session
before an anchor that only the messages lane found (UNFOUND_ANCHOR), on both engines.

The subject the current-first compares is the items' (title and atoms): "a newer session on the
anchor's subject" answers the query newer only when that subject is the query's. An anchor found
by its transcript alone is a session whose item says none of the query's words (a fact said in
passing, in a chat about something else), so another chat on that item's subject is no newer
answer. Seen padded (benchmarks/retrieval, long chats, `which language am I learning on the app`):
the session that said "I'm learning Portuguese on the app", 1st in the messages lane, gave way to
a newer chat of the same title ("Is it better to pay off debt or save first") whose transcript
held `app` alone. The newer session whose transcript holds every word the anchor's holds still
comes first (current.newer_on_the_query, where the items say none of them).
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
TITLE = "Is it better to pay off debt or save first"
SUMMARY = "Weighed paying off card debt against an emergency fund."


def session(sid, day, texts, title, summary):
    return message_session(sid, T0 + timedelta(days=day), texts, title, summary, project="me")


def library(path, engine, newer_holds):  # noqa: F811
    """`said` (day 5) says in passing, in a chat about debt, that the person is learning
    Portuguese on an app; `again` (day 20), a chat of the same title, holds `newer_holds`."""
    records = [
        session("said", 5, ["should I pay the card first or save",
                            "pay the card first, then build a small fund",
                            "ok. by the way I'm learning Portuguese on the app every morning",
                            "nice, keep the streak going"], TITLE, SUMMARY),
        session("again", 20, ["is it better to clear the debt or save",
                              f"clear the debt first; {newer_holds}",
                              "thanks"], TITLE, SUMMARY),
        *[session(f"other{n}", 30 + n, [f"what should I cook tonight {n}", "try a lentil soup with cumin"],
                  f"Dinner ideas {n}", "Suggested a lentil soup.") for n in range(8)],
    ]
    return stored(path, records, engine)


def ranked(path, engine):  # noqa: F811
    with open_readonly(path) as conn:
        hits = search(conn, "which language am I learning on the app", options=SearchConfig(engine=engine),
                      now=NOW, explain=True)
    return [h["session_id"] for h in hits], hits


def test_an_anchor_only_the_transcripts_found_is_not_displaced_by_its_items_subject(tmp_path, engine,  # noqa: F811
                                                                                   monkeypatch):
    path = library(tmp_path / "lib.sqlite3", engine, "the budgeting app can track it")
    order, hits = ranked(path, engine)
    assert order[:2] == ["said", "again"]  # `said` holds `learning` and `app`; `again` holds `app`
    assert "items" not in hits[0]["explain"]["fusion"]["ranks"]  # its item says none of the words
    monkeypatch.setattr(rules, "UNFOUND_ANCHOR", False)
    order, hits = ranked(path, engine)
    assert order[:2] == ["again", "said"]  # without the rule: the newer chat of that title first
    assert hits[0]["explain"]["placed"]["rule"] == "current_first"


def test_a_newer_transcript_holding_every_word_still_comes_first(tmp_path, engine):  # noqa: F811
    # (in a longer message than `said`'s: the lane puts `said` first, beyond NEAR_TIE)
    path = library(tmp_path / "lib.sqlite3", engine,
                   "and I switched to learning it on a new app since the old one kept logging me out")
    order, hits = ranked(path, engine)
    assert order[:2] == ["again", "said"]
    assert hits[0]["explain"]["placed"]["rule"] == "newer_on_the_query"
