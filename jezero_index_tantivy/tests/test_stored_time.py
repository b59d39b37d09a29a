"""stored_time, the candidates' times as the store writes them, against the store's own formatting
(jezero.store.format_time): the day-cached arithmetic must give the same text for every microsecond."""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone

from jezero.store import format_time
from jezero_index_tantivy import index as index_module
from jezero_index_tantivy.index import EPOCH, micros, stored_time


def _expected(us: int) -> str:
    return format_time(EPOCH + timedelta(microseconds=us))


def test_stored_time_is_the_stores_text_for_any_microsecond():
    rng = random.Random(13)
    edges = [0, 1, 999_999, 1_000_000, 86_399_999_999, 86_400_000_000, -1, -86_400_000_000, -86_400_000_001,
             micros("2024-02-29T23:59:59.999999Z"), micros("2000-01-01T00:00:00.000000Z"),
             micros("2099-12-31T23:59:59.000001Z")]
    values = edges + [rng.randrange(-2 * 10**15, 4 * 10**15) for _ in range(20_000)]
    for us in values:
        assert stored_time(us) == _expected(us), us
        assert stored_time(us) == _expected(us), us  # the second time from the remembered day
        assert micros(stored_time(us)) == us


def test_the_remembered_days_are_bounded(monkeypatch):
    monkeypatch.setattr(index_module, "_DATES", {})
    monkeypatch.setattr(index_module, "_DATES_MAX", 3)
    days = [micros(f"2025-01-0{d}T10:00:00.000000Z") for d in range(1, 8)]
    assert [stored_time(us) for us in days] == [_expected(us) for us in days]
    assert len(index_module._DATES) == 3
    now = datetime.now(timezone.utc)
    assert stored_time(micros(format_time(now))) == format_time(now)
