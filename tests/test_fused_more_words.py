"""A session whose transcript holds every query word the hit above it holds, and more, at a higher
evidence, is not passed by it through the items lane's small gated share (jezero/query/fused/,
MORE_WORDS_HELD), on both engines.

Seen padded (benchmarks/retrieval, long chats, `which language am I learning on the app`): the
session where the person said it holds `learning` and `app` (the messages lane's 1st); a
distractor whose item is about language apps holds `app` alone (the lane's 2nd, the items' 1st
with gate 0.04), and that small items share put it first.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from jezero.query.fused import rules
from test_query_engines import engine, explained, message_session, stored  # noqa: F401  (engine: the parametrised fixture: fts5, tantivy)

T0 = datetime(2026, 3, 1, 9, tzinfo=timezone.utc)
NOW = T0 + timedelta(days=120)
QUERY = "which language am I learning on the app"


def session(sid, day, texts, title, summary="everyday help"):
    return message_session(sid, T0 + timedelta(days=day), texts, title, summary, project="me")


def library(path, engine):  # noqa: F811
    """`said` (day 0): its item is about soup; its transcript says, in passing, that the person is
    learning Portuguese on the app. `apps` (day 5): its item compares language apps; its transcript
    holds `app` alone. Other sessions hold `app` in longer messages, or neither word."""
    records = [
        session("said", 0, ["by the way I am learning Portuguese on the app, a bit every morning",
                            "nice. for the soup, start with the lentils"], "Lentil soup recipe",
                "How to cook a lentil soup."),
        session("apps", 5, ["the app keeps logging me out", "try signing in again"],
                "Choosing a language app", "Comparing language apps: which app suits a beginner."),
    ]
    for n in range(3):
        records.append(session(f"chat{n}", 10 + n, [
            f"my bank sent a notice about fees on account {n}, they want me to use the app for it, "
            "and the branch is closing soon, so I have to move everything over before the summer",
            "that sounds annoying"], f"Bank fees {n}", f"Bank fees on account {n}; the bank app."))
    for n in range(16):
        said = "the puppy is learning to sit, slowly" if n < 5 else "we walked the dog by the river"
        records.append(session(f"walk{n}", 20 + n, [said, "lovely"], f"Dog walk {n}"))
    return stored(path / "lib.sqlite3", records, engine)


def ranked(path, engine):  # noqa: F811
    return explained(path, QUERY, engine, NOW)


def test_a_session_holding_more_of_the_query_words_is_not_passed_by_the_items_share(tmp_path, engine,  # noqa: F811
                                                                                    monkeypatch):
    path = library(tmp_path, engine)
    order, why = ranked(path, engine)
    assert order[:2] == ["said", "apps"]
    assert why["said"]["placed"]["rule"] == "more_words_held"
    assert why["said"]["placed"]["held_terms"] == ["app", "learning"]
    assert why["said"]["fusion"]["ranks"]["messages"] == 1 and "items" not in why["said"]["fusion"]["ranks"]
    assert why["apps"]["fusion"]["ranks"]["items"] == 1 and 0 < why["apps"]["gate"]["gate"] < 0.5
    monkeypatch.setattr(rules, "MORE_WORDS_HELD", False)
    order, _ = ranked(path, engine)
    assert order[:2] == ["apps", "said"]  # the items' small share put the session holding `app` alone first
