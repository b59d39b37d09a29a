"""The tantivy messages index's answers do not depend on its segments (messages._to_tie_end): the
same messages, indexed in other layouts (a rebuild in parts, one commit over several threads,
catch-ups after each write), give the same lane terms (the per-term BM25 best, cut at the lane's
cap) and the same recall matches (relevance, newest, oldest), because equal scores at a cut are
all read and cut by message id: the lane's newest first (as its FTS5 term_matches reads a term's
newest), recall's relevance lowest first (as FTS5's ORDER BY bm25, id). tantivy itself orders equal
scores by segment, then document."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

import jezero_index_tantivy.index as index_module
from jezero.query import messages as mq
from jezero.store import ItemRecord, Store, engines, open_readonly
from jezero.store.messages import MessageRecord
from jezero_index_tantivy import TantivyIndex
from jezero_index_tantivy.messages import MessageIndex

T0 = datetime(2026, 1, 1, 9, tzinfo=timezone.utc)
FILTERS = mq.MessageFilters(include_tools=True, include_subagents=True)
SESSIONS, TIED, FILLER = 40, 15, 40  # 600 tied messages, 1,600 others
CAP = 300  # the lane's cap (fused.rules.LANE_MAX_ROWS): 10 higher + 290 of the 600 tied
FETCH = 20


def _session(i: int) -> ItemRecord:
    start = T0 + timedelta(days=i)
    # the tied messages of a session at one time: the time orders cut inside a tie too
    texts = [("heron heron" if i < 10 and j == 0 else "blue heron", start) for j in range(TIED)]
    texts += [(f"walnut kettle {i} {k}", start + timedelta(minutes=1 + k)) for k in range(FILLER)]
    # interleaved, so that ids and what they say do not follow the order they are stored in
    texts = sorted(texts, key=lambda t: hash(t[0]) % 7)
    msgs = [MessageRecord("user", text, at, None) for text, at in texts]
    return ItemRecord(uid=f"s:{i}:0", source="claude-local", agent="a", session_id=f"s{i}", segment_index=0,
                      occurred_at=start + timedelta(hours=1), title=f"session {i}", summary="notes", questions=[],
                      atoms=[], original="o", content_hash=str(i), summarizer="t", summary_schema=1,
                      project="shop", messages=msgs)


def _sessions() -> list[ItemRecord]:
    return [_session(i) for i in sorted(range(SESSIONS), key=lambda i: (i * 17) % SESSIONS)]


def _segments(path) -> int:
    searcher, _ = TantivyIndex(path).message_index._current()
    return searcher.num_segments


def _rebuilt(path, part, monkeypatch) -> int:
    monkeypatch.setattr(MessageIndex, "rebuild_part", part)
    engines.forget()
    TantivyIndex(path).catch_up(rebuild=True)
    return _segments(path)


def _answers(path) -> dict:
    """The lane's per-term answers (a word over the cap read by BM25, and a phrase), and recall's
    matches in each order, from the tantivy messages index."""
    engines.forget()
    out = {}
    with open_readonly(path) as conn:
        for text in (("heron",), ("blue heron",)):
            request = mq.request_for([text], FILTERS, "per_term", CAP)
            answer = engines.messages(conn, "tantivy", request)
            assert answer is not None, "answered by the fallback"
            out[text] = [list(found) for found in answer]
        heron = [t for t in mq.terms_for(conn, "heron") if t.text == "heron"]
        for order in ("relevance", "newest", "oldest"):
            found = mq.engine_matches(conn, "tantivy", heron, FILTERS, FETCH, order)
            assert found is not None, "answered by the fallback"
            out[order] = [(m.id, m.bm25) for m in found]
    return out


def _ids(answers: dict) -> dict:
    return {key: [[f[0] for f in found] for found in value] if isinstance(key, tuple) else [f[0] for f in value]
            for key, value in answers.items()}


def _fts5(path, order: str) -> list[int]:
    with open_readonly(path) as conn:
        heron = [t for t in mq.terms_for(conn, "heron") if t.text == "heron"]
        found, _ = mq.matches(conn, mq.match_expression(heron), FILTERS, FETCH, order, heron)
    return [m.id for m in found]


def _kinds(path):
    with open_readonly(path) as conn:
        rows = conn.execute("SELECT m.id, t.text FROM messages AS m JOIN message_texts AS t ON t.id = m.id").fetchall()
    higher = sorted(i for i, t in rows if t == "heron heron")
    tied = sorted(i for i, t in rows if t == "blue heron")
    return higher, tied


@pytest.fixture
def lib(tmp_path):
    path = tmp_path / "library.sqlite3"
    with Store(path) as store:
        store.write(_sessions())
    engines.forget()
    if engines.sync("tantivy", path) is None:
        pytest.skip("jezero-index-tantivy is not installed")
    yield path
    engines.forget()


def _check(first: dict, path) -> None:
    """What every layout must answer: the cut made by id."""
    higher, tied = _kinds(path)
    assert len(higher) == 10 and len(tied) == SESSIONS * TIED - 10
    (word,) = first[("heron",)]
    # the lane: the higher ones, then the tied newest first (as FTS5's term_matches keeps the newest)
    assert [mid for mid, _, _ in word] == higher[::-1] + tied[::-1][:CAP - len(higher)]
    (phrase,) = first[("blue heron",)]  # `blue heron` scores alike in each: its newest 300
    assert [mid for mid, _, _ in phrase] == tied[::-1][:CAP]
    # recall by relevance: the higher ones, then the tied lowest id first, as FTS5 answers it
    assert [mid for mid, _ in first["relevance"]] == higher + tied[:FETCH - len(higher)] == _fts5(path, "relevance")
    for order in ("newest", "oldest"):  # (equal times by id, both engines)
        assert [mid for mid, _ in first[order]] == _fts5(path, order)


def test_the_same_messages_in_other_segments_give_the_same_answers(lib, monkeypatch):
    answers, segments = [], []
    for part in (3, 10, 1_000_000, None):  # (parts count items: several segments, one, threads)
        segments.append(_rebuilt(lib, part, monkeypatch))
        answers.append(_answers(lib))
    assert len(set(segments)) > 1, segments  # the layouts did differ
    for other in answers[1:]:
        assert other == answers[0]
    _check(answers[0], lib)


def test_catch_ups_after_each_write_give_the_answers_of_a_rebuild(tmp_path, monkeypatch):
    path = tmp_path / "library.sqlite3"
    sessions = _sessions()
    engines.forget()
    for start in range(0, len(sessions), 4):  # a catch-up (a commit, a segment) per write
        with Store(path) as store:
            store.write(sessions[start:start + 4])
        if engines.sync("tantivy", path) is None:
            pytest.skip("jezero-index-tantivy is not installed")
        TantivyIndex(path).catch_up()
    assert _segments(path) > 1
    caught_up = _answers(path)
    _rebuilt(path, None, monkeypatch)
    # (ids only: the catch-ups' deleted state documents still count in tantivy's BM25 statistics,
    # which moves its scores by ~0.1%, all alike)
    assert _ids(_answers(path)) == _ids(caught_up)
    _check(caught_up, path)
    engines.forget()


def test_past_the_budget_the_cut_still_holds_its_size(lib, monkeypatch):
    # TIE_FETCH_MAX bounds the widening (the items pool's): the lane's term is still its cap of
    # messages, the higher ones first (tantivy's cut among the tied ones past the budget)
    monkeypatch.setattr(index_module, "TIE_FETCH_MAX", CAP + 20)
    _rebuilt(lib, 3, monkeypatch)
    higher, tied = _kinds(lib)
    (word,) = _answers(lib)[("heron",)]
    assert len(word) == CAP and [mid for mid, _, _ in word[:10]] == higher[::-1]
    assert {mid for mid, _, _ in word[10:]} <= set(tied)
