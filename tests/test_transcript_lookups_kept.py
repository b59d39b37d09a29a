"""The transcript lookups' answers (fused.reads.TranscriptRead.item_holds) are kept per state of
the library's messages: a later search asks none of them again, and a write that changes what a
lookup would find (new messages, a retagged project) is a new state whose lookups are made again
(benchmarks/load/README.md, 2026-12-06, `load12`)."""

from __future__ import annotations

from datetime import timedelta

from jezero.query import messages as mq
from jezero.query.fused import Hits, reads
from jezero.query.fused.reads import TranscriptRead
from jezero.store import ItemRecord, Store, open_readonly
from jezero.store.messages import MessageRecord
from test_transcript_read import T0, library  # noqa: F401  (the fixture: 4 sessions of 3 messages)

ASKED = [(("claude-local", f"s{i}"), word) for i in range(4) for word in ('"walnut"', '"pecan"', '"fig"')]


def _lane(projects=None):
    lane = Hits()
    lane.filters = mq.MessageFilters(include_tools=True, include_subagents=True, projects=projects)
    return lane


def _answers(path, projects=None):
    """Each (session, word) of ASKED through a new search's read, and how many lookups it ran."""
    statements = []
    with open_readonly(path) as conn:
        read = TranscriptRead(conn, _lane(projects))
        conn.exec_trace = lambda cursor, sql, bindings: statements.append(sql) or True
        answers = [read.session_holds(key, word) for key, word in ASKED]
    return answers, sum("MATCH" in s for s in statements)


def test_another_search_asks_no_lookup_again(library):  # noqa: F811
    reads.forget()
    first, lookups = _answers(library)
    assert lookups > 0
    again, asked_again = _answers(library)  # another search, the same state
    assert again == first and asked_again == 0
    assert _answers(library, projects=["shop"])[1] > 0  # other filters: other lookups
    reads.forget()
    assert _answers(library) == (first, lookups)  # as a cold start


def test_a_write_is_a_new_state_whose_lookups_are_made_again(library):  # noqa: F811
    reads.forget()
    before, _ = _answers(library, projects=["shop"])
    assert any(before)
    with open_readonly(library) as conn:
        s1 = conn.execute("SELECT id FROM items WHERE session_id = 's1'").fetchone()[0]
    with Store(library) as store:
        store.set_project(s1, "elsewhere")  # its messages' project too; their text and ids unchanged
    after, lookups = _answers(library, projects=["shop"])
    assert lookups > 0
    reads.forget()
    assert _answers(library, projects=["shop"])[0] == after  # as a cold start
    assert after != before and not any(after[3:6])  # s1's messages are no longer the shop's
    # a session's new messages: its item's range grows, and the new word is found
    start = T0 + timedelta(days=2)
    msgs = [MessageRecord("user", t, start + timedelta(minutes=j), None)
            for j, t in enumerate(["kettle 2", "pecan", "note 2", "fig at last"])]
    with Store(library) as store:
        store.write([ItemRecord(uid="s:2:0", source="claude-local", agent="a", session_id="s2", segment_index=0,
                                occurred_at=start + timedelta(minutes=5), title="session 2", summary="notes",
                                questions=[], atoms=[], original="o", content_hash="2 grown", summarizer="t",
                                summary_schema=1, project="shop", messages=msgs)])
    grown, _ = _answers(library, projects=["shop"])
    assert grown[8] and not after[8]  # s2 holds "fig" now
