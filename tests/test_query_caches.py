"""What the query layer remembers to save CPU never changes an answer: the current-first rule's
per-state cache (current.py), the sample's trigram starts (stats.occurrences) and the remembered
tokenizer spec and word parts (terms.py)."""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st

from jezero.query import current, search, stats
from jezero.query.terms import split_tokenizer, word_parts
from jezero.store import Store, open_readonly
from test_query import NOW, build, filler, item

ITEMS = ("items",)


def decided(rec, *texts):
    return dataclasses.replace(rec, atoms=[*rec.atoms, *({"type": "decision", "text": t} for t in texts)])


def chain():
    return [
        decided(item("Product search engine for the shop: Meilisearch",
                     "The shop's product search engine is now Meilisearch, with typo tolerance and synonyms "
                     "for the product search.", days_ago=400),
                "Product search engine is Meilisearch"),
        decided(item("Replace Meilisearch with Typesense", "Moved product search to Typesense.", days_ago=30),
                "Product search moved from Meilisearch to Typesense"),
        *filler(30, project="elsewhere"),
    ]


def ids_of(hits):
    return [h["id"] for h in hits]


def test_a_rewritten_item_is_scored_from_its_new_text(tmp_path):
    """The rule's cache belongs to one index state: after a write rewrites the revision in place
    (same id), the warm cache must score its new text, as a fresh one does."""
    items = chain()
    path, ids = build(tmp_path, items)
    conn = open_readonly(path)
    query = "shop product search engine"

    def placed():
        hits = search(conn, query, project="shop", now=NOW, lanes=ITEMS, explain=True)
        return [(h["id"], h["explain"].get("placed")) for h in hits]

    before = placed()
    assert [i for i, _ in before[:2]] == [ids[1], ids[0]] and before[0][1]["before"] == ids[0]  # moved first
    assert placed() == before  # warm: the same
    revision = dataclasses.replace(items[1], title="Checkout button colour", atoms=[], content_hash="rewritten",
                                   summary="The shop's checkout button is green; product search untouched.")
    with Store(path) as store:
        assert store.write([revision]) == [ids[1]]  # the same item, rewritten in place
    warm = placed()
    current.forget()
    assert warm == placed()
    assert warm[0][1]["subject_share"] != before[0][1]["subject_share"]  # scored from the new text
    conn.close()


def test_the_cached_rule_answers_as_a_fresh_one(tmp_path):
    """The same searches, warm (the cache filled by earlier searches and the fused search's two
    passes) and cold (cleared before each), give the same hits and scores."""
    path, _ = build(tmp_path, chain())
    conn = open_readonly(path)
    queries = ["shop product search engine", "Meilisearch", "Typesense product search", "kettle pigeon"]
    warm = [[(h["id"], h["score"]) for h in search(conn, q, now=NOW)] for q in queries * 2]
    cold = []
    for q in queries * 2:
        current.forget()
        cold.append([(h["id"], h["score"]) for h in search(conn, q, now=NOW)])
    assert warm == cold
    conn.close()


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab_\0 é", min_size=0, max_size=80), st.text(alphabet="ab_ é", min_size=1, max_size=6))
def test_occurrences_count_like_str_count(text, needle):
    index = stats.IndexStats(rows=1, tokens=1, token=None)
    index.sample_text = text
    assert stats.occurrences(index, needle) == text.count(needle)


def test_remembered_results_are_the_callers_own_to_change():
    name, args = split_tokenizer("trigram remove_diacritics 1")
    args.append("changed")
    assert split_tokenizer("trigram remove_diacritics 1") == ("trigram", ["remove_diacritics", "1"])
    parts = word_parts("src/order_cache.py")
    parts.clear()
    assert word_parts("src/order_cache.py") == ["src", "order_cache.py", "order_cache", "py"]
