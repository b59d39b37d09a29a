"""The current-first rule's items' texts across index states (current._Items): a commit that does
not touch an item keeps what the rule read of it (no re-read), one that rewrites it makes the
rule read it again (its old text is never used), and the answers are always those of a cold cache."""

from __future__ import annotations

import dataclasses

from jezero.query import current, search
from jezero.store import Store, open_readonly
from test_query import NOW, build, filler
from test_query_caches import ITEMS, chain

QUERY = "shop product search engine"


def placed(conn):
    hits = search(conn, QUERY, project="shop", now=NOW, lanes=ITEMS, explain=True)
    return [(h["id"], h["score"], h["explain"].get("placed")) for h in hits]


def cold(conn):
    current.forget()
    return placed(conn)


def test_a_commit_keeps_the_texts_of_untouched_items_and_rereads_a_rewritten_one(tmp_path, monkeypatch):
    items = chain()
    path, ids = build(tmp_path, items)
    conn = open_readonly(path)
    before = placed(conn)
    assert before[0][0] == ids[1] and before[0][2]["before"] == ids[0]  # the revision moved first
    reads: list[int] = []
    real = current._atom_texts

    def counted(c, item_id):
        reads.append(item_id)
        return real(c, item_id)

    monkeypatch.setattr(current, "_atom_texts", counted)
    # A commit of other items: a new index state, whose rule reads nothing of the hits again.
    with Store(path) as store:
        store.write(filler(3, project="elsewhere"))
    after_unrelated = placed(conn)
    assert reads == []
    assert after_unrelated == cold(conn)
    # A commit rewriting the revision in place: its texts are read again, the others' are not.
    placed(conn)  # warm again after the cold run
    reads.clear()
    revision = dataclasses.replace(items[1], title="Checkout button colour", atoms=[], content_hash="rewritten",
                                   summary="The shop's checkout button is green; product search untouched.")
    with Store(path) as store:
        assert store.write([revision]) == [ids[1]]
    rewritten = placed(conn)
    assert ids[0] not in reads  # the old decision, untouched: its atoms are not read again
    newest = next(reversed(current._caches.values()))
    found = newest.rows.get(ids[1])  # the rewritten item's row, as this state has it: the new text
    assert found is not None and "checkout" in found[1] and "typesense" not in found[1]
    assert rewritten == cold(conn) and rewritten != before  # scored from the new text
    conn.close()


def test_an_entry_read_before_a_change_is_not_used_after_it():
    """_Kept's rule on its own: an entry read at change 5 stands in a state at 9 while its item's
    latest change is at most 5, and not once the item changed at 7 (nor in a state at 6 whose
    item changed at 7 after it was read at 8)."""
    items = current._Items(head=0)
    at5 = current._StateCache(5, items)
    at5.rows[1] = "text of item 1 at change 5"
    at5.rows[2] = "text of item 2 at change 5"
    items.changed[1] = 7
    items.head = 9
    at9 = current._StateCache(9, items)
    assert 1 not in at9.rows and at9.rows.get(1) is None
    assert at9.rows.get(2) == "text of item 2 at change 5"
    at9.rows[1] = "text of item 1 at change 9"
    at6 = current._StateCache(6, items)
    assert at6.rows.get(1) is None  # read at 9, changed at 7: not the text of state 6
    assert current._StateCache(8, items).rows.get(1) == "text of item 1 at change 9"
