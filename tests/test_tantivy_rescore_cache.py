"""The tantivy items lane's re-score (TantivyIndex._rescored) takes its candidates' folded columns
from the index state's kept texts (current.folded_rows) instead of reading and folding them on
every search; a write that rewrites an item must not leave its old text scored
(benchmarks/load/README.md, 2026-12-06, `load12`)."""

from __future__ import annotations

import dataclasses

import pytest

from jezero.config import SearchConfig
from jezero.query import current, search
from jezero.store import Store, engines, open_readonly
from jz_support import needs_plugin
from test_engine_parity import _relevances, built, session

pytestmark = needs_plugin("jezero-index-tantivy")

PAD = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor"


def records():
    return [
        session("once", ["x"], title="invoice notes", summary="the pdf export " + PAD),
        session("often", ["x"], title="pdf invoices in pdf", summary=" ".join([PAD] * 3) + " pdf pdf", day=1),
        session("both", ["x"], title="kofi and the pdf", summary="kofi kofi " + PAD, day=2),
        *[session(f"f{i}", ["x"], title=f"filler title number {i}", summary=f"other words {PAD[: 10 + i]}",
                  day=3 + i) for i in range(20)],
    ]


@pytest.fixture
def engine():
    pytest.importorskip("jezero_index_tantivy", reason="jezero-index-tantivy is not installed")
    engines.forget()
    yield "tantivy"
    engines.forget()


def _reads_of_texts(path, engine, query) -> list[str]:
    """The statements a search (items lane, no current-first) runs that read items' columns."""
    seen: list[str] = []
    with open_readonly(path) as conn:
        conn.exec_trace = lambda _cursor, sql, _bindings: seen.append(sql) or True
        search(conn, query, options=SearchConfig(engine=engine), now=None, lanes=("items",),
               recency_weight=0.0, current_first=False, limit=50)
    return [s for s in seen if "items_fts_content" in s or "FROM items_fts WHERE rowid" in s]


def test_a_warm_rescore_reads_no_item_text(tmp_path, engine):
    path = built(tmp_path, records())
    current.forget()
    assert _reads_of_texts(path, engine, "kofi pdf")  # first sight: read once
    assert _reads_of_texts(path, engine, "kofi pdf") == []  # kept for the state: not read again
    assert _reads_of_texts(path, engine, "pdf") == []  # the same candidates, another query


def test_a_rewritten_item_is_rescored_from_its_new_text(tmp_path, engine):
    """The kept folded rows belong to the item's text in this state: after a write rewrites an
    item in place (same id), the warm re-score must score its new text, as FTS5 does."""
    items = records()
    path = built(tmp_path, items)
    current.forget()
    before = _relevances(path, engine, "kofi pdf")
    assert before == pytest.approx(_relevances(path, "fts5", "kofi pdf"))
    both = next(r for r in items if r.session_id == "both")
    rewritten = dataclasses.replace(both, summary="kofi kofi kofi kofi pdf pdf pdf " + PAD, content_hash="rewritten")
    with Store(path) as store:
        store.write([rewritten])
    engines.sync("tantivy", path)
    warm = _relevances(path, engine, "kofi pdf")  # the kept rows of the old state in memory
    want = _relevances(path, "fts5", "kofi pdf")
    assert [s for s, _ in warm] == [s for s, _ in want]
    assert [r for _, r in warm] == pytest.approx([r for _, r in want], rel=1e-9)
    assert dict(warm)["both"] != pytest.approx(dict(before)["both"], rel=1e-9)  # scored from the new text
    current.forget()
    assert _relevances(path, engine, "kofi pdf") == pytest.approx(warm, rel=1e-12)  # as a cold start
