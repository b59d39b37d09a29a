"""What the messages lane's cap hid (jezero/query/fused/, READ_WORDS and CAPPED_ALONE_GATED), on
both engines.

A word in more than LANE_MAX_ROWS messages is read at its newest LANE_MAX_ROWS: an older session
holding it is never read by the lane, and its item, though the items lane put it first, was gated
to nothing ("not read" taken as "not held"); READ_UNREAD read such sessions for names only. Now
the plain words that tell sessions apart (held by under half the sessions within the filters, by
the lane's own estimate, WINDOW_DENSITY) are read too; a word every session says is not. And the
lane's places held by such words alone are a tie ordered by time: a session the items lane found
has such a place count only as far as its items' gate (the transcript's evidence) goes, so the
newest sessions that merely say the word no longer bury the one the items put first.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from jezero.query import fused
from jezero.query.fused import rules
from jezero.store import open_readonly
from test_query_engines import engine, explained, message_session, stored  # noqa: F401  (engine: the parametrised fixture: fts5, tantivy)

T0 = datetime(2026, 3, 1, 9, tzinfo=timezone.utc)
NOW = T0 + timedelta(days=120)
LANE_ROWS = 12  # fused.LANE_MAX_ROWS, lowered so that a few dozen sessions make a word common
QUERY = "tls handshake renewed"


def session(sid, day, texts, title, summary="routine work"):
    return message_session(sid, T0 + timedelta(days=day), texts, title, summary, project="infra")


@pytest.fixture
def hidden_library(tmp_path, engine, monkeypatch):  # noqa: F811
    """`certs` (day 0, the oldest), whose item is about the TLS handshake, says `tls` and
    `handshake`; 24 newer logs say `tls`, 24 say `handshake`, each word in one message a session,
    between 48 sessions of other work: both words are common (read at their newest 12 messages,
    which never reach `certs`), each held by about a third of the sessions of its rows' time. Four
    of the `tls` logs (the newest) have items titled about TLS, so the items lane finds them.
    `cron` says `renewed`, said nowhere else: the lane's best. Every session says `team`."""
    monkeypatch.setattr(rules, "LANE_MAX_ROWS", LANE_ROWS)
    records = [session("certs", 0, ["hello team", "the tls handshake fails with cert-manager", "fixed"],
                       "TLS handshake with cert-manager", "Fixed the TLS handshake of the ingress.")]
    for n in range(24):
        day = 10 + 4 * n
        title = f"TLS port check {n}" if n >= 20 else f"Port check {n}"
        records += [session(f"tls{n:02d}", day, ["hello team", f"log {n}: tls alert on port {8000 + n}"], title),
                    session(f"hs{n:02d}", day + 1, ["hello team", f"log {n}: handshake retried {n} times"],
                            f"Retry check {n}"),
                    session(f"other{n:02d}", day + 2, ["hello team", f"moved the backups of shard {n}"], f"Backups {n}"),
                    session(f"more{n:02d}", day + 3, ["hello team", f"rotated the keys of node {n}"], f"Keys {n}")]
    records.append(session("cron", 5, ["hello team", "the cron job renewed it overnight", "good"], "Nightly cron jobs"))
    return stored(tmp_path / "lib.sqlite3", records, engine)


def ranked(path, engine, query=QUERY):  # noqa: F811
    return explained(path, query, engine, NOW)


def test_plain_words_the_lane_never_read_are_read_in_the_items_sessions(hidden_library, engine,  # noqa: F811
                                                                         monkeypatch):
    order, why = ranked(hidden_library, engine)
    gate = why["certs"]["gate"]
    assert why["certs"]["fusion"]["ranks"]["items"] == 1 and "messages" not in why["certs"]["fusion"]["ranks"]
    assert gate["evidence_from"] == "read_unread" and gate["read_terms"] == ["handshake", "tls"]
    assert gate["gate"] == 1.0  # it holds both words: compared with the sessions holding two, itself
    assert order[:2] == ["cron", "certs"]
    monkeypatch.setattr(rules, "READ_WORDS", False)  # names only, as before: "not read" is "not held"
    monkeypatch.setattr(rules, "PAGE_WORDS", False)  # (which reads the page's hits for `handshake` too)
    order, why = ranked(hidden_library, engine)
    assert why["certs"]["gate"]["gate"] == 0 and why["certs"]["gate"]["evidence_from"] == "none"
    assert order.index("certs") > order.index("tls23")


def test_a_word_every_session_says_is_not_read(hidden_library, engine):  # noqa: F811
    # `team` is in every session: it tells none apart, and the read leaves it (WORDS_SPREAD)
    with open_readonly(hidden_library) as conn:
        lane = fused.message_lane(conn, "team tls", sources=None, source=None, project=None, since=None,
                                  time_budget_ms=5000, engine=None if engine == "fts5" else engine)
        assert lane.spread["team"] >= rules.WORDS_SPREAD > lane.spread["tls"]
        hits = [{"id": i, "source": "claude-local", "session_id": sid} for sid, i in conn.execute(
            "SELECT session_id, id FROM items WHERE session_id = 'certs'")]
        read = fused.unread_evidence(conn, lane, hits, 5000)
    assert read.found[("claude-local", "certs")] == ("tls",)


def test_a_place_held_by_common_words_alone_counts_as_far_as_the_items_gate(hidden_library, engine,  # noqa: F811
                                                                            monkeypatch):
    # The four newest `tls` logs are found by the items lane (their titles say TLS) and hold one of
    # the query's words: their items' gate is small, and so is their place in the lane now
    order, why = ranked(hidden_library, engine)
    for n in range(20, 24):
        fusion = why[f"tls{n}"]["fusion"]
        assert fusion["ranks"]["messages"] <= 5 and "items" in fusion["ranks"]
        assert fusion["messages_say_by_items_gate"] == pytest.approx(why[f"tls{n}"]["gate"]["gate"])
        assert fusion["messages_say_by_items_gate"] < 0.1
        assert order.index(f"tls{n}") > order.index("certs")
    monkeypatch.setattr(rules, "CAPPED_ALONE_GATED", False)  # a whole place's say, as before
    monkeypatch.setattr(rules, "PAGE_WORDS", False)  # (which puts `certs`, holding `handshake`, first too)
    order, why = ranked(hidden_library, engine)
    assert order.index("tls23") < order.index("certs")
