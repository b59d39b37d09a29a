"""A revision the items lane's current-first placed keeps its place when the messages lane could
not weigh its transcript (jezero/query/fused/, CAPPED_REVISION), on both engines.

The query's words in the revision's transcript are common (read by the lane at their newest
LANE_MAX_ROWS messages, each scoring alike): the lane never read it, READ_UNREAD found the word
there at the alike score, and the fused current-first's evidence test (CURRENT_EVIDENCE) read it
as holding nothing, so the older session, whose transcript holds the query's one uncapped word at
full bm25, stayed first. Seen padded (benchmarks/retrieval, `how are TLS certificates issued and
renewed`: infra-tls-2 1st in the items, placed before infra-tls-1; fused 2nd).
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from jezero.config import SearchConfig
from jezero.query import search
from jezero.query.fused import rules
from jezero.store import open_readonly
from test_query_engines import engine, explained, message_session, stored  # noqa: F401  (engine: the parametrised fixture: fts5, tantivy)

T0 = datetime(2026, 3, 1, 9, tzinfo=timezone.utc)
NOW = T0 + timedelta(days=120)
QUERY = "how are tls certificates issued and renewed"


def session(sid, day, texts, title, summary="routine work"):
    return message_session(sid, T0 + timedelta(days=day), texts, title, summary, project="infra")


def library(path, engine, monkeypatch):  # noqa: F811
    """`old` (day 0) chose certbot, its transcript says `renewed` (said nowhere else); `new` (day 3)
    moved the certificates to cert-manager, its transcript says `tls` alone; 24 newer logs say `tls`
    (common: read at its newest 12 messages, which never reach `new`; a third of the
    sessions of those rows' time, so READ_UNREAD reads it), between other work."""
    monkeypatch.setattr(rules, "LANE_MAX_ROWS", 12)
    records = [
        session("old", 0, ["hello team", "the tls certificates come from certbot", "the cron job renewed them"],
                "TLS certificates issued by certbot", "TLS certificates are issued by certbot and renewed by cron."),
        session("new", 3, ["hello team", "moved the tls setup over to cert-manager in the cluster", "done"],
                "TLS certificates issued by cert-manager",
                "TLS certificates are now issued by cert-manager in the cluster instead of certbot."),
    ]
    for n in range(24):
        records += [session(f"log{n:02d}", 10 + 3 * n, ["hello team", f"log {n}: tls alert on port {8000 + n}"],
                            f"Port check {n}"),
                    session(f"other{n:02d}", 11 + 3 * n, ["hello team", f"moved the backups of shard {n}"],
                            f"Backups {n}"),
                    session(f"more{n:02d}", 12 + 3 * n, ["hello team", f"rotated the keys of node {n}"], f"Keys {n}")]
    return stored(path / "lib.sqlite3", records, engine)


def ranked(path, engine):  # noqa: F811
    return explained(path, QUERY, engine, NOW)


def test_a_placed_revision_whose_transcript_holds_only_common_words_stands(tmp_path, engine,  # noqa: F811
                                                                          monkeypatch):
    path = library(tmp_path, engine, monkeypatch)
    order, why = ranked(path, engine)
    assert order[:2] == ["new", "old"]
    assert why["new"]["placed"]["rule"] == "capped_revision" and why["new"]["placed"]["held_terms"] == ["tls"]
    assert "messages" not in why["new"]["fusion"]["ranks"]  # the lane never read it
    assert why["old"]["fusion"]["ranks"]["messages"] == 1  # `renewed`, at full bm25
    monkeypatch.setattr(rules, "CAPPED_REVISION", False)
    order, why = ranked(path, engine)
    assert order[:2] == ["old", "new"]  # as before: the evidence test read `new` as holding nothing


def test_a_read_session_holding_common_words_alone_is_gated_against_its_like(tmp_path, engine,  # noqa: F811
                                                                            monkeypatch):
    # READ_ALIKE: `new`'s read finds `tls` (common, scored alike); the bar was `old`'s evidence,
    # `renewed` at full bm25, so the gate read ~0; compared with the sessions whose evidence is
    # common words alone (the `tls` logs, scoring alike), it is ~1
    path = library(tmp_path, engine, monkeypatch)
    monkeypatch.setattr(rules, "INHERIT_GATE", False)  # its own gate, not the one it was placed before
    _, why = ranked(path, engine)
    gate = why["new"]["gate"]
    assert gate["evidence_from"] == "read_unread" and gate["read_terms"] == ["tls"]
    assert gate["gate"] > 0.9 and gate["compared_with"] < why["old"]["gate"]["evidence"]
    monkeypatch.setattr(rules, "READ_ALIKE", False)
    _, why = ranked(path, engine)
    assert why["new"]["gate"]["gate"] < 0.01


def test_a_common_word_read_as_written_stays_common_for_the_placed_revision(tmp_path, engine,  # noqa: F811
                                                                            monkeypatch):
    # WRITTEN_STAYS_CAPPED: `certificate` (the other form) is in 24 newer logs, so `certificates`
    # is common and also read as written (WRITTEN_FORM): `new` holds it, and only it, at bm25;
    # `old` holds it and `renewed`. The revision's transcript holds the query's common word alone,
    # as before the written form was read: the items' judgement of the pair stands.
    monkeypatch.setattr(rules, "LANE_MAX_ROWS", 12)
    query = "how are certificates issued and renewed"
    records = [
        session("old", 0, ["hello team", "the certificates come from certbot", "the cron job renewed them"],
                "Certificates issued by certbot", "Certificates are issued by certbot and renewed by cron."),
        session("new", 3, ["hello team", "moved the certificates setup over to cert-manager in the cluster", "done"],
                "Certificates issued by cert-manager",
                "Certificates are now issued by cert-manager in the cluster instead of certbot."),
    ]
    for n in range(24):
        records += [session(f"log{n:02d}", 10 + 3 * n, ["hello team", f"log {n}: certificate alert on port {8000 + n}"],
                            f"Port check {n}"),
                    session(f"other{n:02d}", 11 + 3 * n, ["hello team", f"moved the backups of shard {n}"],
                            f"Backups {n}")]
    path = stored(tmp_path / "lib.sqlite3", records, engine)

    def order():
        with open_readonly(path) as conn:
            hits = search(conn, query, options=SearchConfig(engine=engine), now=NOW, explain=True)
        return [h["session_id"] for h in hits], {h["session_id"]: h["explain"] for h in hits}

    first, why = order()
    assert first[:2] == ["new", "old"]
    assert why["new"]["placed"]["rule"] == "capped_revision"
    assert '"certificates"' in why["new"]["placed"]["held_terms"]
    monkeypatch.setattr(rules, "WRITTEN_STAYS_CAPPED", False)
    assert order()[0][:2] == ["old", "new"]
