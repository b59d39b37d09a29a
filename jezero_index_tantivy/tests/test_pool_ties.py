"""The tantivy items pool does not depend on the index's segments (index._best): the same rows,
indexed in other layouts (a rebuild in parts of other sizes, one commit over several threads,
catch-ups after each write), give the same candidate list and the same top 10, because equal
scores at the pool's edge are cut by item id, newest first, as FTS5's pool cuts them
(tests/test_query_ties.py). tantivy itself orders equal scores by segment, then document, and
its segments are in no order of the items'."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

import jezero_index_tantivy.index as index_module
from jezero.config import SearchConfig
from jezero.query import search
from jezero.store import ItemRecord, Store, engines, open_readonly
from jezero_index_tantivy import TantivyIndex

NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)
WHEN = NOW - timedelta(days=3)  # one time for every item: the recency re-rank breaks no tie


def _record(n: int, title: str) -> ItemRecord:
    return ItemRecord(uid=f"s:{n}:0", source="s", agent="a", session_id=f"s{n}", segment_index=0,
                      occurred_at=WHEN, title=title, summary="same words", questions=[], atoms=[],
                      original="o", content_hash=str(n), summarizer="t", summary_schema=1)


# 20 items that score higher (the word twice), 300 of one score (the same text), 700 others (so
# that the word is in fewer than half the items: FTS5 does not floor it);
# the pool (RESCORE_POOL, 50) holds the 20 and 30 of the 300: the tie runs across its edge and
# past the first search's hits (TIE_FIRST: 100), so the search is widened.
HIGHER, TIED, OTHERS = 20, 300, 700


def _records() -> list[ItemRecord]:
    titles = ([f"zebra zebra crossing {k}" for k in range(HIGHER)] + ["zebra quiet crossing same"] * TIED
              + [f"walnut kettle crossing {k}" for k in range(OTHERS)])
    # interleaved, so that ids and kinds do not follow each other
    order = sorted(range(len(titles)), key=lambda k: (k * 7919) % len(titles))
    return [_record(n, titles[k]) for n, k in enumerate(order)]


def _rebuilt(path, part, monkeypatch) -> int:
    monkeypatch.setattr(TantivyIndex, "rebuild_part", part)
    engines.forget()
    index = TantivyIndex(path)
    index.catch_up(rebuild=True)
    searcher, _ = index._current()
    return searcher.num_segments


def _answer(path, query, monkeypatch):
    """(the engine's candidate list as search() saw it, the top 10 ids)."""
    seen = []
    pool = engines.pool

    def spy(*args, **kw):
        got = pool(*args, **kw)
        seen.append(got)
        return got

    monkeypatch.setattr(engines, "pool", spy)
    engines.forget()
    with open_readonly(path) as conn:
        hits = search(conn, query, options=SearchConfig(engine="tantivy"), now=NOW, lanes=("items",),
                      explain=True, limit=10)
        monkeypatch.setattr(engines, "pool", pool)
        fts5 = search(conn, query, options=SearchConfig(engine="fts5"), now=NOW, lanes=("items",), limit=10)
    assert hits and all(h["explain"]["candidates"] == "tantivy" for h in hits), "answered by the fallback"
    assert len(seen) == 1 and seen[0] is not None
    return seen[0], [h["id"] for h in hits], [h["id"] for h in fts5]


@pytest.fixture
def lib(tmp_path):
    path = tmp_path / "library.sqlite3"
    with Store(path) as store:
        store.write(_records())
    engines.forget()
    if engines.sync("tantivy", path) is None:
        pytest.skip("jezero-index-tantivy is not installed")
    yield path
    engines.forget()


def _kinds(path):
    with open_readonly(path) as conn:
        rows = conn.execute("SELECT id, title FROM items").fetchall()
    higher = {i for i, t in rows if t.startswith("zebra zebra")}
    tied = sorted((i for i, t in rows if t.startswith("zebra quiet")), reverse=True)
    return higher, tied


@pytest.mark.parametrize("rescore", [True, False])
def test_the_same_rows_in_other_segments_give_the_same_pool(lib, monkeypatch, rescore):
    monkeypatch.setattr(index_module, "ITEMS_RESCORE", rescore)
    pool = index_module.RESCORE_POOL if rescore else SearchConfig().candidate_pool
    higher, tied = _kinds(lib)
    answers, segments = [], set()
    for part in (100, 400, 1_000_000, None):  # many segments, a few, one, one commit over threads
        segments.add(_rebuilt(lib, part, monkeypatch))
        answers.append(_answer(lib, "zebra", monkeypatch))
    assert len(segments) > 1, segments  # the layouts did differ
    first, top, fts5 = answers[0]
    for other in answers[1:]:
        assert other == answers[0]
    # the pool: every higher-scoring item, then the tied ones newest first, cut at the pool's size
    ids = [i for i, _, _ in first]
    assert set(ids) == higher | set(tied[:pool - len(higher)])
    # the top 10: the 10 higher ones (ordered among themselves), as FTS5 answers it
    assert set(top) <= higher and len(top) == 10
    if rescore:  # (tantivy's own scores tie the 20 higher ones: FTS5's sizes do not)
        assert top == fts5


def test_a_tie_that_starts_at_the_pools_edge_keeps_the_newest(lib, monkeypatch):
    # `quiet` is said by the 300 tied items only: every one of them scores the same, the pool is
    # the newest 50 of them, and the top 10 the newest 10 (as FTS5 answers it).
    _, tied = _kinds(lib)
    answers = []
    for part in (100, 1_000_000, None):
        _rebuilt(lib, part, monkeypatch)
        answers.append(_answer(lib, "quiet", monkeypatch))
    for other in answers[1:]:
        assert other == answers[0]
    candidates, top, fts5 = answers[0]
    assert sorted(i for i, _, _ in candidates) == sorted(tied[:index_module.RESCORE_POOL])
    assert top == tied[:10] == fts5


def test_catch_ups_after_each_write_give_the_pool_of_a_rebuild(tmp_path, monkeypatch):
    path = tmp_path / "library.sqlite3"
    records = _records()
    engines.forget()
    for start in range(0, len(records), 90):  # a catch-up (a commit, a segment) per write
        with Store(path) as store:
            store.write(records[start:start + 90])
        index = TantivyIndex(path)
        index.catch_up()
    index = TantivyIndex(path)
    searcher, _ = index._current()
    assert searcher.num_segments > 1
    caught_up = [_answer(path, q, monkeypatch) for q in ("zebra", "quiet")]
    _rebuilt(path, 1_000_000, monkeypatch)
    rebuilt = [_answer(path, q, monkeypatch) for q in ("zebra", "quiet")]
    assert caught_up == rebuilt
    engines.forget()


def test_past_the_budget_the_pool_still_holds_its_size(lib, monkeypatch):
    # TIE_FETCH_MAX bounds the widening: 300 tied items and a budget of 60 hits, the pool is
    # still its 50 best (tantivy's cut among the tied ones), the search still answers.
    monkeypatch.setattr(index_module, "TIE_FETCH_MAX", 60)
    _rebuilt(lib, 100, monkeypatch)
    candidates, top, _ = _answer(lib, "quiet", monkeypatch)
    _, tied = _kinds(lib)
    assert len(candidates) == index_module.RESCORE_POOL and set(i for i, _, _ in candidates) <= set(tied)
    assert len(top) == 10
