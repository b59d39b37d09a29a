"""search() over both layers (jezero/query/fused.py): a session whose transcript holds the words
ranks even when its item missed them, an item that names the subject still leads, the lanes can be
chosen one by one, and the caller's sources bound the messages lane too."""

from __future__ import annotations

import importlib
from datetime import datetime, timedelta, timezone

import pytest

from jezero.query import QueryError, search
from jezero.store import ItemRecord, Store, open_readonly
from jezero.store.messages import MessageRecord

fused = importlib.import_module("jezero.query.fused")
T0 = datetime(2026, 3, 1, 9, tzinfo=timezone.utc)
NOW = T0 + timedelta(days=30)


def item(sid, title, summary, texts, *, source="claude-local", project="infra", day=0):
    msgs = [MessageRecord(role, text, T0 + timedelta(days=day, minutes=i)) for i, (role, text) in enumerate(texts)]
    return ItemRecord(uid=f"{source}:{sid}:0", source=source, agent="claude-code", session_id=sid, segment_index=0,
                      occurred_at=T0 + timedelta(days=day), title=title, summary=summary, questions=[], atoms=[],
                      original="(messages)", content_hash=f"{source}{sid}", summarizer="x", summary_schema=1,
                      project=project, messages=msgs)


@pytest.fixture
def conn(tmp_path):
    path = tmp_path / "lib.sqlite3"
    with Store(path) as store:
        store.write([
            item("watch", "Raise the file watcher limit", "The dev server stopped reloading on Linux.",
                 [("user", "the dev server no longer reloads"),
                  ("tool", "Error: ENOSPC: System limit for number of file watchers reached"),
                  ("assistant", "set fs.inotify.max_user_watches=524288 in /etc/sysctl.d")]),
            item("title", "inotify max_user_watches for the dev server",
                 "Where the inotify max_user_watches limit is set and why.", [("user", "explain the limit")], day=1),
            item("other", "Checkout page copy", "Rewrote the checkout copy.", [("user", "new checkout copy")], day=2),
            item("hidden", "Secret ci things", "Nothing.", [("user", "max_user_watches on the ci runner")],
                 source="agent-ci", day=3),
        ])
    c = open_readonly(path)
    yield c
    c.close()


def sessions(hits):
    return [h["session_id"] for h in hits]


def test_a_session_found_only_in_its_transcript_ranks(conn):
    assert "watch" not in sessions(search(conn, "524288", lanes=("items",), now=NOW))
    assert sessions(search(conn, "524288", now=NOW)) == ["watch"]
    assert sessions(search(conn, "sysctl.d ENOSPC", now=NOW))[0] == "watch"


def test_an_item_that_names_the_subject_still_leads(conn):
    hits = search(conn, "inotify max_user_watches", now=NOW, allowed=["claude-*"], explain=True)
    assert sessions(hits)[:2] == ["title", "watch"]
    lanes = hits[0]["explain"]["fusion"]
    assert lanes["items_rank"] == 1 and lanes["rule"].startswith("reciprocal rank fusion")
    assert hits[0]["title"] == "inotify max_user_watches for the dev server"  # shown by its item


def test_one_hit_per_session_and_the_lanes_one_by_one(conn):
    both = search(conn, "dev server", now=NOW)
    assert len(sessions(both)) == len(set(sessions(both)))
    alone = search(conn, "524288", lanes=("messages",), now=NOW, explain=True)
    assert sessions(alone) == ["watch"] and alone[0]["explain"]["fusion"]["items_rank"] is None
    assert alone[0]["explain"]["fusion"]["matched_terms"] == ["524288"]
    assert search(conn, "524288", lanes=["messages", "items"], now=NOW) == search(conn, "524288", now=NOW)
    for bad in ((), ("summaries",), "both"):
        with pytest.raises(QueryError, match="lanes"):
            search(conn, "x", lanes=bad)


def test_the_callers_sources_bound_the_messages_lane(conn):
    assert "hidden" in sessions(search(conn, "runner max_user_watches", now=NOW))
    assert "hidden" not in sessions(search(conn, "runner max_user_watches", now=NOW, allowed=["claude-*"]))
    assert search(conn, "524288", now=NOW, source="agent-ci") == []
    assert search(conn, "524288", now=NOW, project="billing") == []


def test_a_very_common_word_is_left_to_the_items(conn, monkeypatch):
    monkeypatch.setattr(fused, "LANE_MAX_ROWS", 1)
    hits = search(conn, "the 524288", now=NOW, explain=True, lanes=("messages",))
    assert sessions(hits) == ["watch"]
    assert hits[0]["explain"]["fusion"]["left_out_of_messages"] == ["the"]


def test_a_library_not_yet_migrated_is_searched_by_its_items(tmp_path):
    path = tmp_path / "old.sqlite3"
    with Store(path, migrate_to=4) as old:
        old.db.execute(
            "INSERT INTO items(uid, source, agent, session_id, segment_index, occurred_at, title, summary, questions,"
            " atoms, original, content_hash, summarizer, summary_schema, ingested_at, updated_at) VALUES"
            " ('u', 'src', 'a', 's', 0, '2026-01-01T00:00:00.000000Z', 'webhook retries', 'x', '[]', '[]', 'o', 'h',"
            " 'offline', 1, 'now', 'now')")
        old.db.execute("INSERT INTO items_fts(rowid, title, summary, questions, atoms, project) "
                       "VALUES(1, 'webhook retries', 'x', '', '', '')")
    c = open_readonly(path)
    assert sessions(search(c, "webhook", now=NOW)) == ["s"]


def test_a_phrase_of_common_words_and_short_words_are_left_to_the_items(conn, monkeypatch):
    monkeypatch.setattr(fused, "PHRASE_MAX_ROWS", 1)
    hits = search(conn, "sysctl.d 524288 on", now=NOW, explain=True, lanes=("messages",))
    assert sessions(hits) == ["watch"]
    why = hits[0]["explain"]["fusion"]
    # "sysctl.d" whole is a phrase left out; its part "sysctl" (terms.py) is a word the lane keeps
    assert why["left_out_of_messages"] == ["sysctl.d"] and why["matched_terms"] == ["524288", "sysctl"]


def test_a_lane_whose_best_hits_all_score_alike_gives_way(tmp_path):
    # Twelve small-talk sessions whose items all match "dinner" the same way (same words, same day):
    # the items lane ranks them, but its order says nothing. The place was said once, in the
    # transcript of a session whose item never mentions dinner: the messages lane finds it first,
    # and the fused search must follow it rather than the items' arbitrary first.
    path = tmp_path / "chat.sqlite3"
    records = [item(f"talk{i:02d}", f"Dinner talk {i:02d}", "They talked about dinner.",
                    [("user", "we talked about dinner again")], project="chat", day=5) for i in range(12)]
    records.append(item("plans", "Weekend plans", "Plans for the weekend.",
                        [("user", "what about dinner"), ("assistant", "the dinner was at Lucca in the old town")],
                        project="chat", day=5))
    with Store(path) as store:
        store.write(records)
    c = open_readonly(path)
    try:
        assert "plans" not in sessions(search(c, "dinner Lucca", lanes=("items",), now=NOW))
        hits = search(c, "dinner Lucca", now=NOW, explain=True)
        assert sessions(hits)[0] == "plans"
        why = hits[0]["explain"]["fusion"]
        assert why["items_weight"] == 0.0 and why["messages_weight"] == fused.MESSAGES_WEIGHT
    finally:
        c.close()


def test_separation_of_a_lanes_scores():
    assert fused.separation([]) == 0.0
    assert fused.separation([3.0]) == 1.0  # a single hit stands alone
    assert fused.separation([2.0, 2.0, 2.0]) == 0.0  # all alike: the order says nothing
    assert fused.separation([4.0, 0.0]) == 1.0  # nothing else scores
    assert fused.separation([4.0, 2.0]) == pytest.approx(0.5 ** fused.SEPARATION_POWER)
    deep = [10.0] + [9.0] * (fused.SEPARATION_DEPTH - 2) + [1.0, 0.5]
    assert fused.separation(deep) == pytest.approx(0.9 ** fused.SEPARATION_POWER)  # read at the depth, not the last
