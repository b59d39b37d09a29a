"""The items pool re-scored as FTS5 scores it (index.ITEMS_RESCORE): what tantivy finds and FTS5
would not (a stem alone), what the re-score reads (tantivy's best RESCORE_POOL), and the scores
tantivy keeps where it cannot re-score. The scores themselves are compared with FTS5's in
tests/test_engine_parity.py, on both engines."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

import jezero_index_tantivy.index as index_module
from jezero.config import SearchConfig
from jezero.query import search
from jezero.store import ItemRecord, Store, engines, open_readonly

NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)


def _record(n: int, title: str) -> ItemRecord:
    return ItemRecord(uid=f"claude-local:{n}:0", source="claude-local", agent="claude", session_id=f"s{n}",
                      segment_index=0, occurred_at=NOW - timedelta(days=n), title=title, summary="notes",
                      questions=[], atoms=[], original="o", content_hash=str(n), summarizer="t", summary_schema=1,
                      project="shop")


@pytest.fixture
def lib(tmp_path):
    path = tmp_path / "library.sqlite3"
    titles = ["one renewal", "the renewal date", *[f"renewals batch {k}" for k in range(8)],
              *[f"filler title {k}" for k in range(10)]]
    with Store(path) as store:
        store.write([_record(n, t) for n, t in enumerate(titles)])
    engines.forget()
    if engines.sync("tantivy", path) is None:
        pytest.skip("jezero-index-tantivy is not installed")
    yield path
    engines.forget()


def _items(path, query, **kw):
    with open_readonly(path) as conn:
        hits = search(conn, query, options=SearchConfig(engine="tantivy"), now=NOW, lanes=("items",),
                      explain=True, limit=50, **kw)
    assert all(h["explain"]["candidates"] == "tantivy" for h in hits), "answered by the fallback"
    return [h["session_id"] for h in hits]


def test_a_stem_alone_finds_what_no_item_says_as_written(lib):
    # `renewed` is said nowhere: FTS5 finds nothing, tantivy's stem (`renew`) finds the renewal
    # items, and with no item holding the query's text those finds stand, on tantivy's scores.
    assert set(_items(lib, "renewed")) == {f"s{n}" for n in range(10)}


def test_a_stem_alone_is_left_out_where_items_say_the_word(lib):
    assert set(_items(lib, "renewals")) == {f"s{n}" for n in range(2, 10)}


def test_the_re_score_reads_tantivys_best_items_only(lib, monkeypatch):
    monkeypatch.setattr(index_module, "RESCORE_POOL", 3)
    assert len(_items(lib, "renewals")) == 3
    monkeypatch.setattr(index_module, "ITEMS_RESCORE", False)
    # without the re-score the whole pool, the stems' finds included
    assert len(_items(lib, "renewals")) == 10
