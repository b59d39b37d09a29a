"""The messages lane's answer does not depend on the order an engine gives equal scores in
(jezero/query/fused/, TIE_BY_ID), on both engines (one fixture over the engine's name).

A session scores, per term, its best message's bm25 for it, and sessions scoring alike are
ordered by their best message's id (then NEAR_TIE reads its time). FTS5's lane reads a term's
messages newest first, so of two messages of a session scoring alike the newer was kept. tantivy's
BM25 gives equal scores in the order it stored the messages (segments filled by several threads:
another build, another order), so which of them was the session's best, and with it the
sessions' order, moved with the index's build, and differed from FTS5's. As recall's
MessageIndex._ranked before it (tests/test_message_order.py), the hits are here given back with
equal scores reversed, as another build could give them: the answer must not move.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from jezero.config import SearchConfig
from jezero.query import search
from jezero.query.fused import rules
from jezero.store import ItemRecord, engines, open_readonly
from jezero.store.messages import MessageRecord
from test_query_engines import engine, stored  # noqa: F401  (engine: the parametrised fixture: fts5, tantivy)

T0 = datetime(2026, 3, 1, 9, tzinfo=timezone.utc)
NOW = T0 + timedelta(days=60)
SAID = "the canary deploy stalled on the gateway"


def session(sid, said: list[tuple[float, str]]):
    """A session whose messages are said on the given days (from T0)."""
    msgs = [MessageRecord("user", text, T0 + timedelta(days=day, minutes=i), None)
            for i, (day, text) in enumerate(said)]
    return ItemRecord(uid=f"claude-local:{sid}:0", source="claude-local", agent="claude-code", session_id=sid,
                      segment_index=0, occurred_at=msgs[-1].at, title=f"session {sid}", summary="nothing about it",
                      questions=[], atoms=[], original="(see messages)", content_hash=sid, summarizer="x",
                      summary_schema=1, project="mine", messages=msgs)


@pytest.fixture
def tie_library(tmp_path, engine):  # noqa: F811
    """`early` says the words on day 10 and again, alike, on day 40 (a session picked up again);
    `middle` says them once, on day 30. Every message holding them scores the same."""
    path = tmp_path / "lib.sqlite3"
    records = [session("early", [(10, SAID), (10, "some filler words here"), (40, SAID)]),
               session("middle", [(30, SAID), (30, "unrelated talk")]),
               *[session(f"other{n}", [(n, "nothing of the kind here"), (n, "more of nothing")]) for n in range(6)]]
    return stored(path, records, engine)


def lane(path, engine):  # noqa: F811
    """The messages lane through search(): (session, its best message's id), best first."""
    with open_readonly(path) as conn:
        hits = search(conn, "canary gateway", lanes=("messages",), options=SearchConfig(engine=engine), now=NOW,
                      explain=True)
    return [(h["session_id"], h["explain"]["fusion"]["message_id"]) for h in hits]


def nothing_kept(monkeypatch):
    """tantivy keeps no term's answer from one search to the next (each reads its index)."""
    from jezero_index_tantivy import messages as tm

    monkeypatch.setattr(tm, "TERMS_KEPT", 0)
    engines.forget()


def reversed_ties(monkeypatch):
    """tantivy's BM25 hits given back with equal scores in the reverse order (a stable sort of the
    reversed hits by score), as another build of the index could give them; and since the index
    orders a term's equal scores by id itself (newest first, jezero_index_tantivy.messages
    _to_tie_end, 2026-12-04), that order reversed too (oldest first), as an engine that orders
    them otherwise would give them."""
    from jezero_index_tantivy import messages as tm

    top = tm.MessageIndex._top
    monkeypatch.setattr(tm.MessageIndex, "_top", lambda self, *a, **kw: sorted(top(self, *a, **kw)[::-1],
                                                                              key=lambda h: -h[0]))
    monkeypatch.setattr(tm, "_by_score_then_newest", lambda found: (-found[2], found[0]))
    nothing_kept(monkeypatch)


def test_of_a_sessions_messages_scoring_alike_the_newest_is_its_best(tie_library, engine, monkeypatch):  # noqa: F811
    if engine != "fts5":
        nothing_kept(monkeypatch)
    got = lane(tie_library, engine)
    # `early`'s best is its day-40 message: newer than `middle`'s, so `early` comes first (sessions
    # scoring alike: the newer best message first), shown by that message
    assert [s for s, _ in got] == ["early", "middle"]
    with open_readonly(tie_library) as conn:
        day40 = conn.execute("SELECT max(id) FROM messages WHERE session_id = 'early'").fetchone()[0]
    assert got[0][1] == day40
    if engine != "fts5":
        reversed_ties(monkeypatch)
        assert lane(tie_library, engine) == got  # another storage order, the same answer


def test_without_the_rule_the_answer_moves_with_the_storage_order(tie_library, engine, monkeypatch):  # noqa: F811
    if engine == "fts5":
        pytest.skip("FTS5 gives a term's messages newest first: its answer was never the engine's order")
    monkeypatch.setattr(rules, "TIE_BY_ID", False)
    # tantivy's own scores, in its order (re-scored by FTS5, a term's messages come in FTS5's
    # order whatever the build: MESSAGES_RESCORE; the rule stands where tantivy's scores do)
    from jezero_index_tantivy import messages as tm

    monkeypatch.setattr(tm, "MESSAGES_RESCORE", False)
    nothing_kept(monkeypatch)
    first = lane(tie_library, engine)
    reversed_ties(monkeypatch)
    assert lane(tie_library, engine) != first
