"""A key's sources in the messages lane (MessageIndex._narrow, EXCLUDE_OTHERS): where the index is
exactly at the reader's state and the library's other sources hold fewer messages, their messages
are taken out instead of the key's kept in. Either way the answer is the library's own: a term's
newest or its BM25 best among the messages of the key's sources alone; and a source the library
gained after the index's state is never let through."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from jezero.query import messages as mq
from jezero.store import ItemRecord, Store, engines, open_readonly
from jezero.store.messages import MessageRecord
from jezero_index_tantivy import messages as messages_module
from jezero_index_tantivy.messages import MessageIndex

T0 = datetime(2026, 1, 1, 9, tzinfo=timezone.utc)
LIMIT = 5
KEY = ["claude-local", "codex-local"]  # the key's sources: 3 sessions in 4; agent-ci the 4th


def _session(i: int, source: str, texts: list[str]) -> ItemRecord:
    start = T0 + timedelta(days=i)
    msgs = [MessageRecord("user", text, start + timedelta(minutes=j), None) for j, text in enumerate(texts)]
    return ItemRecord(uid=f"{source}:{i}:0", source=source, agent="a", session_id=f"s{i}", segment_index=0,
                      occurred_at=start + timedelta(minutes=len(texts)), title=f"session {i}", summary="notes",
                      questions=[], atoms=[], original="o", content_hash=str(i), summarizer="t", summary_schema=1,
                      project="shop", messages=msgs)


def _source(i: int) -> str:
    return ("codex-local", "claude-local", "claude-local", "agent-ci")[i % 4]


def library(path, sessions=range(40)):
    """`kettle` in every message (common), `walnut` once a session, the newest sessions agent-ci's."""
    with Store(path) as store:
        store.write([_session(i, "agent-ci" if i >= 36 else _source(i),
                              [f"kettle {i} {j}" + (" walnut" if j == 3 else "") for j in range(8)])
                     for i in sessions])


def expected(conn, word: str, filters: mq.MessageFilters, newest: bool) -> list[int]:
    where, args = filters.sql()
    rows = conn.execute(
        "SELECT m.id FROM messages AS m JOIN message_texts AS t ON t.id = m.id "
        f"WHERE t.text LIKE ? {'AND ' + where if where else ''} ORDER BY m.id DESC", [f"%{word}%", *args]).fetchall()
    ids = [r[0] for r in rows]
    return ids[:LIMIT] if newest else ids


def _answer(index, conn, word: str, filters, newest: bool) -> list[int]:
    request = mq.request_for([(word,)], filters, "per_term", LIMIT if newest else 100, None, LIMIT if newest else None)
    (found,) = index.matches(conn, request)
    return sorted((f[0] for f in found), reverse=True)


@pytest.fixture
def lib(tmp_path, monkeypatch):
    monkeypatch.setattr(messages_module, "TERMS_KEPT", 0)  # each answer read, not kept
    path = tmp_path / "lib.sqlite3"
    library(path)
    engines.forget()
    index = MessageIndex(path)
    index.catch_up()
    yield path, index
    engines.forget()


@pytest.mark.parametrize("exclude", [True, False])
def test_a_keys_sources_give_the_librarys_answer_either_way(lib, monkeypatch, exclude):
    monkeypatch.setattr(messages_module, "EXCLUDE_OTHERS", exclude)
    path, index = lib
    with open_readonly(path) as conn:
        head = engines.library_head(conn)
        searcher = index._in_step(head)
        others = index._others(searcher, conn, index._kept_for(searcher), head,
                               mq.request_for([("kettle",)], mq.MessageFilters(sources=KEY), "per_term", LIMIT))
        assert others == (["agent-ci"] if exclude else None)  # the others hold fewer: taken out
        for sources in (KEY, ["codex-local"], ["agent-ci"]):
            filters = mq.MessageFilters(sources=sources, include_tools=True, include_subagents=True)
            for word, newest in (("kettle", True), ("walnut", False)):
                want = expected(conn, word, filters, newest)
                assert want and _answer(index, conn, word, filters, newest) == want, (sources, word)


def test_a_source_the_library_gained_after_the_index_is_not_let_through(lib):
    path, index = lib
    with Store(path) as store:  # written after the index's state: the index does not hold it yet
        store.write([_session(50, "inbox-anna", [f"kettle late {j}" for j in range(8)])])
    with open_readonly(path) as conn:
        head = engines.library_head(conn)
        searcher = index._in_step(head)  # (catches up inline: a few items)
        filters = mq.MessageFilters(sources=KEY, include_tools=True, include_subagents=True)
        want = expected(conn, "kettle", filters, True)
        assert _answer(index, conn, "kettle", filters, True) == want
        late = {r[0] for r in conn.execute("SELECT id FROM messages WHERE source = 'inbox-anna'")}
        assert late and not late & set(_answer(index, conn, "kettle", filters, True))
        assert searcher is not None
        kept = index._kept_for(searcher)
        assert messages_module._library_sources(conn, kept, head) == ["agent-ci", "claude-local", "codex-local",
                                                                     "inbox-anna"]


def test_the_librarys_sources_are_read_only_at_the_indexs_state(lib):
    path, index = lib
    with open_readonly(path) as conn:
        head = engines.library_head(conn)
        searcher = index._in_step(head)
        kept = index._kept_for(searcher)
        assert messages_module._library_sources(conn, kept, head) == ["agent-ci", "claude-local", "codex-local"]
        moved = engines.Head(head.library, head.seq - 1)  # a state the library is no longer at
        kept.sources = None
        assert messages_module._library_sources(conn, kept, moved) is None
