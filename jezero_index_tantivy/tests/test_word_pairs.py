"""Phrases (of function words such as "the and", identifiers made of everyday parts) go through the
word pairs field, and that filter never changes which items a phrase finds: the same items as the
phrase alone, in titles, with capitals and punctuation, and not the same words in another order."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import tantivy

from jezero.config import SearchConfig
from jezero.query import search
from jezero.store import ItemRecord, Store, engines, open_readonly
import jezero_index_tantivy.index as index_module
from jezero_index_tantivy import TantivyIndex

NOW = datetime(2025, 6, 1, tzinfo=timezone.utc)

TEXTS = {
    "adjacent": ("Kettle notes", "we read the and then stopped"),
    "capitals": ("THE, AND walnut", "meadow copper"),
    "title to summary": ("Copper the", "and meadow lantern"),
    "reversed": ("Lantern notes", "and the kettle"),
    "apart": ("Pigeon notes", "the kettle and the walnut"),
    "three": ("Harbour notes", "only that this is it"),
    "none": ("Violet saddle", "quarry harbour"),
}


def _library(tmp_path):
    library = tmp_path / "library.sqlite3"
    ids = {}
    with Store(library) as store:
        for n, (name, (title, summary)) in enumerate(TEXTS.items()):
            ids[name], = store.write([ItemRecord(
                uid=f"s:{n}:0", source="claude-local", agent="claude", session_id=str(n), segment_index=0,
                occurred_at=NOW - timedelta(days=n), title=title, summary=summary, questions=[], atoms=[],
                original="o", content_hash=str(n), summarizer="t", summary_schema=1, project="shop")])
    return library, ids


def test_phrases_of_function_words_find_what_the_phrase_alone_finds(tmp_path, monkeypatch):
    # what tantivy's query matches, not the re-score's choice among its finds (ITEMS_RESCORE
    # leaves out items holding only floored words' text)
    monkeypatch.setattr(index_module, "ITEMS_RESCORE", False)
    library, ids = _library(tmp_path)
    engines.forget()
    options = SearchConfig(engine="tantivy")
    index = TantivyIndex(library)
    index.catch_up()
    searcher, _ = index._current()

    def found(phrase: str) -> set[int]:
        with open_readonly(library) as conn:
            hits = search(conn, phrase, options=options, now=NOW, explain=True, lanes=("items",))
        assert all(h["explain"]["candidates"] == "tantivy" for h in hits)
        return {h["id"] for h in hits}

    def alone(words: list[str]) -> set[int]:
        hits = searcher.search(tantivy.Query.phrase_query(index.schema, "words", words), limit=50).hits
        return set(searcher.fast_field_values("id", [a for _, a in hits]))

    by_pairs = found('"the and"')
    assert by_pairs == alone(["the", "and"])
    # (tantivy keeps a gap between a field's values: a phrase does not run from title to summary)
    assert by_pairs == {ids["adjacent"], ids["capitals"]}
    assert found('"that this is"') == alone(["that", "this", "is"]) == {ids["three"]}
    assert alone(["and", "the"]) == {ids["reversed"], ids["apart"]}
    # (and "and then" as a substring, like FTS5's trigram index)
    assert found('"and the"') == {ids["reversed"], ids["apart"], ids["adjacent"]}
    engines.forget()


def test_identifiers_are_phrases_filtered_by_their_pairs(tmp_path):
    library, ids = _library(tmp_path)
    with Store(library) as store:
        client, = store.write([ItemRecord(
            uid="s:id:0", source="claude-local", agent="claude", session_id="id", segment_index=0,
            occurred_at=NOW, title="Fix internal/client_manager.html", summary="the client manager", questions=[],
            atoms=[], original="o", content_hash="id", summarizer="t", summary_schema=1, project="shop")])
    engines.forget()
    index = TantivyIndex(library)
    index.catch_up()
    assert index.pairs.of_stems(["the", "and", "kettl"]) == ["the_and", "and_kettl"]
    assert "that_this" in repr(index._phrase(["that", "this"]))
    with open_readonly(library) as conn:
        hits = search(conn, "client_manager.html", options=SearchConfig(engine="tantivy"), now=NOW, explain=True,
                      lanes=("items",))
    assert [h["id"] for h in hits][:1] == [client]
    engines.forget()
