"""Message ids follow the messages' time (jezero/store/messages.py, time_id), so the lanes that
read a common word at its newest matches (recall's RANK_CAP, the fused search's LANE_MAX_ROWS,
tantivy's common_rows) read the newest by time, whatever order the sessions were stored in; and
migration 9 renumbers a library that main's code wrote (ids in storage order) without losing a
message."""

from __future__ import annotations

import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path

import apsw
import pytest

from jezero.query import recall, search
from jezero.query.fused import rules
from jezero.query import messages as mq
from jezero.store import ItemRecord, Store, format_time, open_readonly
from jezero.store import messages as message_rows
from jezero.store.migrations import LATEST

T0 = datetime(2025, 1, 6, 9, tzinfo=timezone.utc)
NOW = T0 + timedelta(days=400)
MAIN_LIBRARY = Path(__file__).parent / "data" / "main-e85cee8-library.sqlite3"
# The caps, lowered so that a library of a few hundred messages has a common word.
LANE_ROWS = 20
RANK_ROWS = 30


def session(sid: str, day: float, texts: list[str], project: str = "ops") -> ItemRecord:
    when = T0 + timedelta(days=day)
    msgs = [message_rows.MessageRecord("user" if i % 2 == 0 else "assistant", t, when + timedelta(seconds=20 * i))
            for i, t in enumerate(texts)]
    return ItemRecord(uid=f"claude:{sid}:0", source="claude", agent="claude-code", session_id=sid, segment_index=0,
                      occurred_at=when + timedelta(seconds=20 * len(texts)), title=f"work {sid}",
                      summary="routine work", questions=[], atoms=[], original="(messages)", content_hash=sid,
                      summarizer="x", summary_schema=1, project=project, messages=msgs)


def the_sessions() -> tuple[ItemRecord, list[ItemRecord]]:
    """The session people mean (the newest by time to hold `deploy`, in one short message) and
    a backlog of older sessions that each say `deploy` many times in longer messages."""
    relevant = session("relevant", 300, ["the deploy to eu-west stalled on the canary", "deploy"])
    backlog = [session(f"old{n:02d}", n, [f"checked the deploy logs of batch {n} step {i} nothing stood out "
                                           f"and the deploy went on as planned" for i in range(6)])
               for n in range(40)]
    return relevant, backlog


def build(path: Path, items: list[ItemRecord], engine: str) -> apsw.Connection:
    with Store(path) as store:
        for it in items:  # one write each: storage order is this order
            store.write([it])
    if engine != "fts5":
        from jezero.store import engines

        assert engines.sync(engine, path, rebuild=True) is not None
    return open_readonly(path)


ENGINES = ["fts5"]
try:
    import jezero_index_tantivy  # noqa: F401

    ENGINES.append("tantivy")
except ImportError:
    pass


@pytest.fixture(params=ENGINES)
def libraries(request, tmp_path, monkeypatch):
    """The same sessions stored twice: the relevant one first and the backlog after it (a first
    run, or a device's upload, after the session people mean), and in time order."""
    monkeypatch.setattr(rules, "LANE_MAX_ROWS", LANE_ROWS)
    monkeypatch.setattr(mq, "RANK_CAP", RANK_ROWS)
    relevant, backlog = the_sessions()
    stored_first = build(tmp_path / "first.sqlite3", [relevant, *backlog], request.param)
    by_time = build(tmp_path / "time.sqlite3", [*backlog, relevant], request.param)
    yield stored_first, by_time, request.param
    stored_first.close()
    by_time.close()


def _sessions(hits) -> list[str]:
    return [h["session_id"] for h in hits]


def test_a_common_word_reads_the_newest_by_time_whatever_the_storage_order(libraries):
    stored_first, by_time, engine = libraries
    held = stored_first.execute("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'deploy'").fetchone()[0]
    assert held > max(LANE_ROWS, RANK_ROWS)  # common for both lanes
    options = None
    if engine != "fts5":
        from jezero.config import SearchConfig

        options = SearchConfig(engine=engine)
    for lanes in (("messages",), ("items", "messages")):
        first = search(stored_first, "deploy", lanes=lanes, now=NOW, options=options, explain=True)
        timed = search(by_time, "deploy", lanes=lanes, now=NOW, options=options, explain=True)
        assert _sessions(first) == _sessions(timed)
        assert _sessions(first)[0] == "relevant"
    hits = recall(stored_first, "deploy", options=options)["hits"]
    assert [h["session_id"] for h in hits] == [h["session_id"] for h in recall(by_time, "deploy", options=options)["hits"]]
    assert hits[0]["session_id"] == "relevant"


def test_ids_follow_time_and_a_rewrite_keeps_them(tmp_path):
    relevant, backlog = the_sessions()
    path = tmp_path / "lib.sqlite3"
    with Store(path) as store:
        store.write([relevant])
        store.write(backlog)
        rows = store.db.execute("SELECT id, at FROM messages ORDER BY id").fetchall()
        assert [at for _, at in rows] == sorted(at for _, at in rows)
        before = dict(store.db.execute("SELECT seq, id FROM messages WHERE session_id = 'relevant'").fetchall())
        relevant.content_hash = "changed"
        store.write([relevant])  # rewritten: the same times take the same ids
        assert dict(store.db.execute("SELECT seq, id FROM messages WHERE session_id = 'relevant'").fetchall()) == before
        assert store.db.execute("INSERT INTO messages_fts(messages_fts) VALUES('integrity-check')").fetchall() == []


def test_messages_at_one_time_take_the_next_free_ids(tmp_path):
    when = T0
    crowd = [session(f"c{n}", 0, ["same time"] * 5) for n in range(3)]
    for it in crowd:
        it.messages = [message_rows.MessageRecord("user", f"same time {n}", when) for n in range(5)]
    with Store(tmp_path / "lib.sqlite3") as store:
        store.write(crowd)
        ids = [r[0] for r in store.db.execute("SELECT id FROM messages ORDER BY id")]
    first = message_rows.time_id(format_time(when))
    assert ids == list(range(first, first + 15))


def test_migration_renumbers_a_library_main_wrote(tmp_path):
    path = tmp_path / "lib.sqlite3"
    shutil.copy(MAIN_LIBRARY, path)
    old = apsw.Connection(str(path))
    assert old.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == "8"
    before = old.execute("SELECT m.id, m.item_id, m.source, m.session_id, m.segment_index, m.seq, m.role, m.tool, m.at, "
                         "m.project, m.parent_session_id, m.prompt_hash, t.text FROM messages AS m "
                         "JOIN message_texts AS t ON t.id = m.id").fetchall()
    stored = [r[0] for r in sorted(before, key=lambda r: r[0])]
    assert [r[8] for r in sorted(before, key=lambda r: r[0])] != sorted(r[8] for r in before)  # stored out of time order
    library_id = old.execute("SELECT value FROM meta WHERE key = 'library_id'").fetchone()[0]
    word_hits = {w: sorted(old.execute("SELECT m.item_id, m.seq FROM messages_fts JOIN messages AS m "
                                       "ON m.id = messages_fts.rowid WHERE messages_fts MATCH ?", (w,)).fetchall())
                 for w in ("deploy", "canary", "webhook")}
    old.close()

    with Store(path) as store:
        assert store.schema_version() == LATEST
        db = store.db
        after = db.execute("SELECT m.id, m.item_id, m.source, m.session_id, m.segment_index, m.seq, m.role, m.tool, "
                           "m.at, m.project, m.parent_session_id, m.prompt_hash, t.text FROM messages AS m "
                           "JOIN message_texts AS t ON t.id = m.id").fetchall()
        # nothing lost: the same messages, each with its own text, only the ids changed
        assert len(after) == len(before) == len(stored)
        assert db.execute("SELECT count(*) FROM message_texts").fetchone()[0] == len(before)
        assert sorted(r[1:] for r in after) == sorted(r[1:] for r in before)
        assert len({r[0] for r in after}) == len(after)
        # the ids follow the time now
        by_id = sorted(after, key=lambda r: r[0])
        assert [r[8] for r in by_id] == sorted(r[8] for r in after)
        assert all(r[0] >= message_rows.time_id(r[8]) for r in after)
        # the index was rebuilt from the renumbered texts
        assert db.execute("INSERT INTO messages_fts(messages_fts) VALUES('integrity-check')").fetchall() == []
        for w, hits in word_hits.items():
            assert sorted(db.execute("SELECT m.item_id, m.seq FROM messages_fts JOIN messages AS m "
                                     "ON m.id = messages_fts.rowid WHERE messages_fts MATCH ?", (w,)).fetchall()) == hits
        # derived indexes beside it are rebuilt, not caught up
        assert db.execute("SELECT value FROM meta WHERE key = 'library_id'").fetchone()[0] != library_id
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        # and the writer goes on: a new message takes its time's id
        store.write([session("later", 900, ["deploy after the migration"])])
        newest = db.execute("SELECT session_id FROM messages ORDER BY id DESC LIMIT 1").fetchone()[0]
        assert newest == "later"
    conn = open_readonly(path)
    try:
        hits = recall(conn, "webhook", limit=50, include_tools=True, include_subagents=True)["hits"]
        seq = dict(conn.execute("SELECT id, seq FROM messages").fetchall())
        assert sorted((h["item_id"], seq[h["message_id"]]) for h in hits) == \
            word_hits["webhook"]
    finally:
        conn.close()


def test_an_item_written_twice_in_one_write_is_indexed_once(tmp_path):
    """A write indexes its messages at its end, in id order: an item given twice in one write
    (its second version wins) must not leave the first version's words in the index."""
    first, _ = the_sessions()
    second = session("relevant", 300, ["the rollout to eu-west finished", "done"])
    second.content_hash = "second"
    with Store(tmp_path / "lib.sqlite3") as store:
        store.write([first, session("other", 5, ["deploy elsewhere"]), second])
        db = store.db
        assert db.execute("INSERT INTO messages_fts(messages_fts) VALUES('integrity-check')").fetchall() == []
        assert db.execute("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'stalled'").fetchone()[0] == 0
        assert db.execute("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'rollout'").fetchone()[0] == 1
        assert db.execute("SELECT count(*) FROM messages").fetchone()[0] == 3


@pytest.mark.skipif("tantivy" not in ENGINES, reason="jezero-index-tantivy is not installed")
def test_tantivy_breaks_equal_scores_by_id_whatever_order_it_stored_them(tmp_path, monkeypatch):
    # The backlog's messages score alike. tantivy orders equal scores by where it stored them
    # (segments filled by several threads: the order differed between two builds on CI), so the
    # hits of _top are here given back with equal scores reversed, as another build could give
    # them: the answer
    # must not move (the lowest ids first, as FTS5's ORDER BY bm25, id).
    from jezero.config import SearchConfig
    from jezero_index_tantivy.messages import MessageIndex

    relevant, backlog = the_sessions()
    conn = build(tmp_path / "lib.sqlite3", [*backlog, relevant], "tantivy")
    options = SearchConfig(engine="tantivy")
    try:
        want = [(h["session_id"], h["message_id"])
                for h in recall(conn, "deploy", options=options)["hits"]]
        top = MessageIndex._top
        # equal scores in the reverse order (a stable sort of the reversed hits by score)
        monkeypatch.setattr(MessageIndex, "_top",
                            lambda self, *a, **kw: sorted(top(self, *a, **kw)[::-1], key=lambda h: -h[0]))
        got = [(h["session_id"], h["message_id"])
               for h in recall(conn, "deploy", options=options)["hits"]]
        assert got == want
        assert len({s for s, _ in want}) > 1
    finally:
        conn.close()
