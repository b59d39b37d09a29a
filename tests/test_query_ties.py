"""A bm25 tie at the candidate pool's boundary is cut in the order of the final ranking (newer
id first), so the pool keeps the rows the ranking would put first: the plain algorithm and the
fast path give the same answer, whatever the pool size."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from jezero.config import SearchConfig
from jezero.query import search
from jezero.query.search import _search
from jezero.store import ItemRecord, Store, open_readonly

NOW = datetime(2025, 6, 1, tzinfo=timezone.utc)


def item(n: int, title: str) -> ItemRecord:
    return ItemRecord(uid=f"s:{n}:0", source="s", agent="a", session_id=str(n), segment_index=0,
                      occurred_at=NOW - timedelta(days=3), title=title, summary="same words", questions=[],
                      atoms=[], original="o", content_hash=str(n), summarizer="t", summary_schema=1)


@pytest.mark.parametrize("prune", [True, False])
def test_a_tie_at_the_pool_boundary_keeps_the_newest(tmp_path, prune):
    # 30 rows with the same text (the same bm25, the same age), among 100 others: the pool of 10
    # must hold the 10 newest ids, which the final ranking puts first on a tie.
    items = [item(n, "zebra crossing") for n in range(30)]
    items += [item(100 + n, f"walnut kettle {n}") for n in range(100)]
    with Store(tmp_path / "lib.sqlite3") as store:
        ids = store.write(items)
    tied = ids[:30]
    options = SearchConfig(candidate_pool=10)
    with open_readonly(tmp_path / "lib.sqlite3") as conn:
        got = [h["id"] for h in _search(conn, "zebra", limit=10, options=options, now=NOW, prune=prune)]
        assert got == sorted(tied, reverse=True)[:10]
        # the same with the pool large enough for every tied row
        wide = [h["id"] for h in search(conn, "zebra", limit=10, options=SearchConfig(candidate_pool=200), now=NOW)]
        assert got == wide
