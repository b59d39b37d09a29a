"""The messages lane's common words (jezero/query/fused/, WINDOW_DENSITY): a word in more than
LANE_MAX_ROWS messages is read at its newest ones, and weighs as held by its share of the sessions
within those messages' time, not by the few sessions they reached."""

from __future__ import annotations

import importlib
from datetime import datetime, timedelta, timezone

from jezero.query import search
from jezero.store import ItemRecord, Store, open_readonly
from jezero.store.messages import MessageRecord

fused = importlib.import_module("jezero.query.fused")
rules = importlib.import_module("jezero.query.fused.rules")
T0 = datetime(2026, 3, 1, 9, tzinfo=timezone.utc)
NOW = T0 + timedelta(days=40)


def item(sid, texts, *, project="chat", day=0):
    msgs = [MessageRecord("user" if i % 2 == 0 else "assistant", text, T0 + timedelta(days=day, minutes=i))
            for i, text in enumerate(texts)]
    return ItemRecord(uid=f"claude-local:{sid}:0", source="claude-local", agent="claude-code", session_id=sid,
                      segment_index=0, occurred_at=msgs[-1].at, title=f"Session {sid}", summary="Talk.", questions=[],
                      atoms=[], original="(messages)", content_hash=sid, summarizer="x", summary_schema=1,
                      project=project, messages=msgs)


def library(tmp_path):
    """Ten sessions, every message of which names the speaker `Maya` (80 messages); four of the
    oldest also say `greyhound`, once each."""
    records = []
    for day in range(10):
        texts = [f"Maya: small talk number {day}-{i}" for i in range(8)]
        if day < 4:
            texts[3] = "Maya: we adopted a greyhound, he loves the sofa"
        records.append(item(f"s{day}", texts, day=day))
    path = tmp_path / "lib.sqlite3"
    with Store(path) as store:
        store.write(records)
    return open_readonly(path)


def test_a_word_every_session_holds_does_not_outrank_a_rarer_one_through_its_newest_messages(tmp_path, monkeypatch):
    # `Maya` is in 80 messages, over the cap of 20: the lane reads the newest 20 (three sessions)
    # and, by those alone, would weigh it as a word three sessions of ten hold, above `greyhound`
    # (four of ten), so the newest small talk came first. Every session within those messages'
    # time holds it: it weighs as held by all ten, and the sessions holding `greyhound` lead.
    monkeypatch.setattr(rules, "LANE_MAX_ROWS", 20)
    monkeypatch.setattr(rules, "NEAR_TIE", 0)
    c = library(tmp_path)
    try:
        hits = search(c, "Maya greyhound", lanes=("messages",), now=NOW, explain=True)
        assert set(h["session_id"] for h in hits[:4]) == {"s0", "s1", "s2", "s3"}
        assert hits[0]["explain"]["fusion"]["capped_in_messages"] == ["Maya"]
        monkeypatch.setattr(rules, "WINDOW_DENSITY", False)
        before = search(c, "Maya greyhound", lanes=("messages",), now=NOW)
        assert before[0]["session_id"] in {"s7", "s8", "s9"}  # the newest small talk first
        # a window wider than WINDOW_MAX_ITEMS (its rows span 3 items here) is left as before
        monkeypatch.setattr(rules, "WINDOW_DENSITY", True)
        monkeypatch.setattr(rules, "WINDOW_MAX_ITEMS", 3)
        assert search(c, "Maya greyhound", lanes=("messages",), now=NOW) == before
    finally:
        c.close()


def test_the_estimate_reads_the_sessions_within_the_filters(tmp_path, monkeypatch):
    # Another project's sessions (after these, none holding `Maya`) do not dilute the estimate:
    # within the project, every session of the window holds the word.
    monkeypatch.setattr(rules, "LANE_MAX_ROWS", 20)
    monkeypatch.setattr(rules, "NEAR_TIE", 0)
    c = library(tmp_path)
    c.close()
    with Store(tmp_path / "lib.sqlite3") as store:
        store.write([item(f"w{i}", [f"deploy notes {i}"] * 3, project="work", day=10 + i) for i in range(20)])
    c = open_readonly(tmp_path / "lib.sqlite3")
    try:
        lane = fused.message_lane(c, "Maya greyhound", sources=None, source=None, project="chat", since=None,
                                  time_budget_ms=1000)
        assert {x.session_id for x in lane[:4]} == {"s0", "s1", "s2", "s3"}
        assert lane[0].capped == ["Maya"]
    finally:
        c.close()


def test_the_window_is_counted_over_the_sources_only_until_it_reaches_the_cap(tmp_path, monkeypatch):
    # Ten sources of one session each after the word's oldest read row: with a cap of 3, the count
    # stops at the third source, and the lane answers as when every source is counted in full.
    monkeypatch.setattr(rules, "LANE_MAX_ROWS", 20)
    monkeypatch.setattr(rules, "NEAR_TIE", 0)
    c = library(tmp_path)
    c.close()
    with Store(tmp_path / "lib.sqlite3") as store:
        store.write([ItemRecord(**{**item(f"o{i}", [f"other notes {i}"], day=20 + i).__dict__,
                                   "uid": f"src{i}:o{i}:0", "source": f"src{i}"}) for i in range(10)])
    c = open_readonly(tmp_path / "lib.sqlite3")
    counted = []
    c.exec_trace = lambda cursor, sql, bindings: counted.append(sql) or True
    try:
        monkeypatch.setattr(rules, "WINDOW_MAX_ITEMS", 3)
        fast = fused.message_lane(c, "Maya greyhound", sources=None, source=None, project=None, since=None,
                                  time_budget_ms=1000)
        windows = [s for s in counted if "i.occurred_at >= ?" in s]
        assert 1 <= len(windows) <= 3  # not one per source (11)
        monkeypatch.setattr(rules, "WINDOW_MAX_ITEMS", 10_000)
        counted.clear()
        wide = fused.message_lane(c, "Maya greyhound", sources=None, source=None, project=None, since=None,
                                  time_budget_ms=1000)
        assert len([s for s in counted if "i.occurred_at >= ?" in s]) == 11  # under the cap: every source
        monkeypatch.setattr(rules, "WINDOW_DENSITY", False)
        plain = fused.message_lane(c, "Maya greyhound", sources=None, source=None, project=None, since=None,
                                   time_budget_ms=1000)
        # over the cap the word is left as without the estimate; under it the estimate applies
        assert [(h.session_id, h.match.bm25) for h in fast] == [(h.session_id, h.match.bm25) for h in plain]
        assert [(h.session_id, h.match.bm25) for h in wide] != [(h.session_id, h.match.bm25) for h in plain]
        # with a since, the window's index search starts at the later of it and the oldest row read
        # (two lower bounds made it start at the since and walk every item after it)
        monkeypatch.setattr(rules, "WINDOW_DENSITY", True)
        counted.clear()
        since = (T0 + timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        fused.message_lane(c, "Maya greyhound", sources=None, source=None, project=None, since=since,
                           time_budget_ms=1000)
        windows = [s for s in counted if "i.occurred_at >= ?" in s]
        assert windows and all(s.count("i.occurred_at >= ?") == 1 for s in windows)
    finally:
        c.close()
