"""The shape of the query the engine builds, which decides what a search costs: a word the index
holds in many items is answered by the words field alone (no trigram phrase, so tantivy can prune
the OR by block-max scores), a rare word still also as a substring, a fragment through trigrams
only; a key's few sources are an OR of terms, many a term set, and both keep exactly the allowed
sources' items."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

import jezero_index_tantivy.index as index_module
from jezero.config import SearchConfig
from jezero.query import search
from jezero.store import ItemRecord, Store, engines, open_readonly

NOW = datetime(2025, 6, 1, tzinfo=timezone.utc)
SOURCES = ["claude-local", "codex-local", "agent-laptop", "agent-ci", "inbox-anna", "inbox-ben"]
ROWS = 3  # SUBSTRING_WORD_ROWS for these tests: "invoice" is in more items, "ledger" in fewer


def _record(n: int, title: str, summary: str, source: str = "claude-local") -> ItemRecord:
    return ItemRecord(uid=f"{source}:{n}:0", source=source, agent="claude", session_id=str(n), segment_index=0,
                      occurred_at=NOW - timedelta(days=n), title=title, summary=summary, questions=[], atoms=[],
                      original="o", content_hash=str(n), summarizer="t", summary_schema=1, project="shop")


@pytest.fixture
def lib(tmp_path, monkeypatch):
    monkeypatch.setattr(index_module, "SUBSTRING_WORD_ROWS", ROWS)
    library = tmp_path / "library.sqlite3"
    texts = [(f"Invoice run {k}", "the invoice was sent") for k in range(5)]
    texts += [("Preinvoice checks", "kettle walnut"), ("Ledger notes", "meadow copper"),
              ("Subledger totals", "lantern quarry")]
    texts += [(f"Parser {s}", f"tokens from {s}") for s in SOURCES]
    ids = {}
    with Store(library) as store:
        for n, (title, summary) in enumerate(texts):
            source = title.split()[1] if title.startswith("Parser") else "claude-local"
            ids[title], = store.write([_record(n, title, summary, source)])
    engines.forget()
    engines.sync("tantivy", library)
    yield library, ids
    engines.forget()


def _found(library, query: str, **kw) -> set[int]:
    with open_readonly(library) as conn:
        hits = search(conn, query, options=SearchConfig(engine="tantivy"), now=NOW, explain=True, lanes=("items",),
                      **kw)
    assert all(h["explain"]["candidates"] == "tantivy" for h in hits), "answered by the fallback"
    return {h["id"] for h in hits}


def _shape(library, text: str) -> str:
    engine = engines.engine_for("tantivy", str(library))
    with open_readonly(library) as conn:
        return repr(engine._term_query(engine._searcher_for(conn), text))


def test_a_common_word_is_answered_by_the_words_field_alone(lib):
    library, ids = lib
    shape = _shape(library, "invoice")
    assert '"invoic"' in shape  # the stemmed word
    assert "PhraseQuery" not in shape and '"inv"' not in shape, "a common word still carries its trigram phrase"
    # so `preinvoice` (a substring match only) is not found through `invoice`
    assert _found(library, "invoice") == {ids[f"Invoice run {k}"] for k in range(5)}


def test_a_rare_word_keeps_its_substring(lib):
    library, ids = lib
    shape = _shape(library, "ledger")
    assert '"ledger"' in shape and "PhraseQuery" in shape and '"led"' in shape
    assert _found(library, "ledger") == {ids["Ledger notes"], ids["Subledger totals"]}


def test_the_old_shape_is_still_there_for_the_benchmark(lib):
    library, ids = lib
    engine = engines.engine_for("tantivy", str(library))
    engine.substring_word_rows = None  # every word as a substring too (before 2026-12-01)
    assert '"inv"' in _shape(library, "invoice")
    assert ids["Preinvoice checks"] in _found(library, "invoice")


def test_a_fragment_is_found_through_trigrams_only(lib):
    library, ids = lib
    shape = _shape(library, "nvoic")
    assert "PhraseQuery" in shape and '"nvo"' in shape and '"nvoic"' not in shape  # no words term
    assert _found(library, "nvoic") == {ids[f"Invoice run {k}"] for k in range(5)} | {ids["Preinvoice checks"]}


@pytest.mark.parametrize("allowed", [SOURCES[:1], SOURCES[:2], SOURCES[:4], SOURCES[:5], ["*-local"], ["nobody"]])
def test_a_keys_sources_keep_exactly_its_items(lib, allowed):
    library, ids = lib
    expected = {ids[f"Parser {s}"] for s in SOURCES
                if s in allowed or (s.endswith("-local") and "*-local" in allowed)}
    assert _found(library, "parser", allowed=allowed) == expected
    assert _found(library, "tokens", allowed=["*"], source=SOURCES[3]) == {ids[f"Parser {SOURCES[3]}"]}


def test_the_source_filter_shape(lib):
    schema = index_module._schema()
    assert "TermQuery" in repr(index_module.any_term(schema, "f_source", ["a"]))
    few = repr(index_module.any_term(schema, "f_source", ["a", "b", "a"]))
    assert few.startswith("Query(BooleanQuery") and few.count("TermQuery") == 2
    many = index_module.SOURCE_TERMS_MAX + 1
    assert repr(index_module.any_term(schema, "f_source", [str(k) for k in range(many)])).startswith(
        "Query(TermSetQuery")
    assert "EmptyQuery" in repr(index_module.any_term(schema, "f_source", []))


def test_a_rare_word_is_the_better_of_the_word_and_its_substring(lib, monkeypatch):
    monkeypatch.setattr(index_module, "ITEMS_RESCORE", False)  # tantivy's own scores are compared
    # An item saying `ledger` holds its substring too: FTS5 counts those occurrences once, so the
    # term is a disjunction max of the word and the substring (on FTS5's IDF), not their sum.
    library, ids = lib
    shape = _shape(library, "ledger")
    assert "DisjunctionMaxQuery" in shape and "BooleanQuery" not in shape
    with open_readonly(library) as conn:
        hits = search(conn, "ledger", options=SearchConfig(engine="tantivy"), now=NOW, explain=True,
                      lanes=("items",), recency_weight=0.0, current_first=False)
    on = {h["id"]: -h["explain"]["bm25"] for h in hits}
    monkeypatch.setattr(index_module, "SUBSTRING_AS_FTS5", False)  # the sum, as before 2026-12-02
    engines.forget()
    assert "DisjunctionMaxQuery" not in _shape(library, "ledger")
    with open_readonly(library) as conn:
        hits = search(conn, "ledger", options=SearchConfig(engine="tantivy"), now=NOW, explain=True,
                      lanes=("items",), recency_weight=0.0, current_first=False)
    summed = {h["id"]: -h["explain"]["bm25"] for h in hits}
    whole = ids["Ledger notes"]
    assert summed[whole] > on[whole]  # the substring no longer adds to the word
