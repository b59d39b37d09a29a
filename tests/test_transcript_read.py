"""The bounded read of a session's own messages (fused.reads.TranscriptRead) is one per search: the
three rules that read transcripts (READ_UNREAD, PAGE_WORDS, NAMES_READ) share it through their
lane, and a lookup one of them made is not made again; its answers are those of a read of its own."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from jezero.query import messages as mq
from jezero.query.fused import Hits
from jezero.query.fused.reads import TranscriptRead
from jezero.store import ItemRecord, Store, open_readonly
from jezero.store.messages import MessageRecord

T0 = datetime(2026, 1, 1, 9, tzinfo=timezone.utc)


@pytest.fixture
def library(tmp_path):
    records = []
    for i in range(4):
        start = T0 + timedelta(days=i)
        texts = [f"kettle {i}", "walnut" if i % 2 else "pecan", f"note {i}"]
        msgs = [MessageRecord("user", t, start + timedelta(minutes=j), None) for j, t in enumerate(texts)]
        records.append(ItemRecord(uid=f"s:{i}:0", source="claude-local", agent="a", session_id=f"s{i}",
                                  segment_index=0, occurred_at=start + timedelta(minutes=5), title=f"session {i}",
                                  summary="notes", questions=[], atoms=[], original="o", content_hash=str(i),
                                  summarizer="t", summary_schema=1, project="shop", messages=msgs))
    path = tmp_path / "library.sqlite3"
    with Store(path) as store:
        store.write(records)
    return path


def _lane():
    lane = Hits()
    lane.filters = mq.MessageFilters(include_tools=True, include_subagents=True)
    return lane


def test_one_read_per_lane_and_each_lookup_once(library):
    with open_readonly(library) as conn:
        lane = _lane()
        read = TranscriptRead.of(conn, lane)
        assert TranscriptRead.of(conn, lane) is read  # the next rule's read is the same
        assert TranscriptRead.of(conn, _lane()) is not read  # another search's lane: its own
        statements = []
        conn.exec_trace = lambda cursor, sql, bindings: statements.append(sql) or True
        asked = [(("claude-local", f"s{i}"), word) for i in range(4) for word in ('"walnut"', '"pecan"', '"fig"')]
        first = [read.session_holds(key, word) for key, word in asked]
        lookups = sum("MATCH" in s for s in statements)
        again = [read.session_holds(key, word) for key, word in asked]
        assert again == first and sum("MATCH" in s for s in statements) == lookups  # nothing asked again
        conn.exec_trace = None
        fresh = TranscriptRead(conn, _lane())
        assert first == [fresh.session_holds(key, word) for key, word in asked]
        assert first == [word == '"walnut"' and i % 2 == 1 or word == '"pecan"' and i % 2 == 0
                         for i in range(4) for word in ('"walnut"', '"pecan"', '"fig"')]


def test_a_sessions_item_ranges_are_read_from_indexes_alone(tmp_path):
    """Each item's first and last message id of a session, as grouping its messages gives them
    (two segments, and an item without messages left out), read without the messages' table
    rows: grouping ~50 rows a session through the table was most of a range read (load11)."""
    records = []
    for segment, texts in enumerate([["fig one", "fig two"], ["plum three"], []]):
        start = T0 + timedelta(hours=segment)
        msgs = [MessageRecord("user", t, start + timedelta(minutes=j), None) for j, t in enumerate(texts)]
        records.append(ItemRecord(uid=f"s:x:{segment}", source="claude-local", agent="a", session_id="x",
                                  segment_index=segment, occurred_at=start + timedelta(minutes=5),
                                  title=f"part {segment}", summary="notes", questions=[], atoms=[], original="o",
                                  content_hash=str(segment), summarizer="t", summary_schema=1, project="shop",
                                  messages=msgs))
    path = tmp_path / "library.sqlite3"
    with Store(path) as store:
        store.write(records)
    with open_readonly(path) as conn:
        grouped = conn.execute("SELECT item_id, min(id), max(id) FROM messages WHERE source = 'claude-local' "
                               "AND session_id = 'x' GROUP BY item_id").fetchall()
        assert len(grouped) == 2
        read = TranscriptRead(conn, _lane())
        statements = []
        conn.exec_trace = lambda cursor, sql, bindings: statements.append((sql, bindings)) or True
        assert read.session_holds(("claude-local", "x"), '"plum"')
        conn.exec_trace = None
        assert read.ranges[("claude-local", "x")] == grouped
        sql, bindings = next((s, b) for s, b in statements if "MATCH" not in s)
        plan = [row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}", bindings)]
        searches = [step for step in plan if step.startswith(("SEARCH", "SCAN"))]
        assert searches and all("COVERING INDEX" in step for step in searches), plan
