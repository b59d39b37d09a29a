"""The search budget bounds work, not wall-clock time (issue 10, defect 5): a busy machine gives
the answer an idle one gives, and an answer the budget cut says so."""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta, timezone

from jezero.config import SearchConfig
from jezero.query import search
from jezero.store import ItemRecord, Store, open_readonly

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def _library(path, n: int):
    records = []
    for i in range(n):
        words = f"deploy the service again item{i} " + " ".join(f"w{(i * 7 + k) % 301}" for k in range(40))
        records.append(ItemRecord(
            uid=f"src:s{i}:0", source="src", agent="codex", session_id=f"s{i}", segment_index=0,
            occurred_at=T0 + timedelta(hours=i), title=f"deploy step {i}", summary=words, questions=[],
            atoms=[], original="x", content_hash=hashlib.sha256(str(i).encode()).hexdigest(),
            summarizer="offline", summary_schema=1))
    with Store(path) as store:
        store.write(records)
    return path


def test_a_slow_clock_does_not_change_the_answer(tmp_path, monkeypatch):
    """Every clock reading a second later than the last: a wall-clock budget ran out at once and
    answered nothing or the newest matches; a work budget does not look at the clock."""
    conn = open_readonly(_library(tmp_path / "lib.sqlite3", 400))
    expected = search(conn, "deploy w17 item33", limit=10)
    assert expected and not expected.cut

    import time

    clock = [time.perf_counter()]

    def slow():
        clock[0] += 1.0
        return clock[0]

    monkeypatch.setattr(time, "perf_counter", slow)
    monkeypatch.setattr(time, "monotonic", slow)
    again = search(conn, "deploy w17 item33", limit=10)
    assert [h["id"] for h in again] == [h["id"] for h in expected]
    assert not again.cut


def test_a_search_the_budget_cuts_says_so(tmp_path):
    conn = open_readonly(_library(tmp_path / "lib.sqlite3", 3000))
    tiny = SearchConfig.model_construct(**{**SearchConfig().model_dump(), "time_budget_ms": 1})
    hits = search(conn, "deploy service again", limit=10, options=tiny)
    assert hits.cut
    full = search(conn, "deploy service again", limit=10)
    assert not full.cut and full
    # The same cut answer every time: work, not time, decides where it stops.
    assert [h["id"] for h in search(conn, "deploy service again", limit=10, options=tiny)] == [h["id"] for h in hits]
