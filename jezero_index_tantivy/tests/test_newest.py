"""A common word's newest messages (MessageIndex._newest), however they are read: the word's whole
list, the id blocks' range, or the range widened while the filters leave too few. Each way must
give the library's own answer: the word's `limit` highest message ids that pass the filters."""

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


def library(path):
    """60 sessions a day apart, 12 messages each a minute apart; "kettle" in every third message
    (so in a third of the library: common), tool output in the last sessions, an old project."""
    records = []
    for i in range(60):
        start = T0 + timedelta(days=i, minutes=7 * i)
        msgs = []
        for j in range(12):
            role = "tool" if i >= 55 and j % 2 else ("user" if j % 2 == 0 else "assistant")
            text = f"kettle {i} {j}" if (i + j) % 3 == 0 else f"walnut {i} {j}"
            msgs.append(MessageRecord(role, text, start + timedelta(minutes=j), "Bash" if role == "tool" else None))
        records.append(ItemRecord(
            uid=f"s:{i}:0", source="claude-local" if i % 4 else "codex-local", agent="a", session_id=f"s{i}",
            segment_index=0, occurred_at=start + timedelta(minutes=12), title=f"session {i}", summary="notes",
            questions=[], atoms=[], original="o", content_hash=str(i), summarizer="t", summary_schema=1,
            project="old" if i < 6 else "shop", messages=msgs))
    with Store(path) as store:
        store.write(records)


FILTERS = [
    mq.MessageFilters(include_tools=True, include_subagents=True),
    mq.MessageFilters(include_tools=False, include_subagents=True),  # the newest are tool output
    mq.MessageFilters(projects=["old"], include_tools=True, include_subagents=True),  # only the oldest pass
    mq.MessageFilters(source="codex-local", include_tools=True, include_subagents=True),
    mq.MessageFilters(since="2026-02-20T00:00:00.000000Z", include_tools=True, include_subagents=True),
    mq.MessageFilters(projects=["nowhere"], include_tools=True, include_subagents=True),
]


def expected(conn, filters: mq.MessageFilters) -> list[tuple[int, int, None]]:
    where, args = filters.sql()
    rows = conn.execute(
        "SELECT m.id, m.item_id FROM messages AS m JOIN message_texts AS t ON t.id = m.id "
        f"WHERE t.text LIKE 'kettle %' {'AND ' + where if where else ''} ORDER BY m.id DESC LIMIT ?",
        [*args, LIMIT]).fetchall()
    return [(mid, item, None) for mid, item in rows]


WAYS = {  # (WHOLE_SHARE, BLOCK_SHARE, WHOLE_FILTERED)
    "whole": (0, 0, True),  # the word's list always read whole
    "chosen": (messages_module.WHOLE_SHARE, messages_module.BLOCK_SHARE, messages_module.WHOLE_FILTERED),
    "blocks": (10**9, 0, False),  # always through the id blocks, widened while too few pass
    "ids": (10**9, 10**9, False),  # always through the id range, likewise
}


@pytest.mark.parametrize("way", list(WAYS))
@pytest.mark.parametrize("bits", [messages_module.BLOCK_BITS, 10, 30])
def test_every_way_of_reading_the_newest_gives_the_librarys_answer(tmp_path, monkeypatch, way, bits):
    """Each way (WAYS; widened while too few pass: the old project's, the codex sessions'), with
    blocks of 2^10 ms (one block a message) to 2^30 ms (12 days: a block reaching below the
    range)."""
    monkeypatch.setattr(messages_module, "BLOCK_BITS", bits)
    monkeypatch.setattr(messages_module, "WHOLE_SHARE", WAYS[way][0])
    monkeypatch.setattr(messages_module, "BLOCK_SHARE", WAYS[way][1])
    monkeypatch.setattr(messages_module, "WHOLE_FILTERED", WAYS[way][2])
    path = tmp_path / "lib.sqlite3"
    library(path)
    engines.forget()
    index = MessageIndex(path)
    index.catch_up()
    with open_readonly(path) as conn:
        for filters in FILTERS:
            request = mq.request_for([("kettle",)], filters, "per_term", LIMIT, None, LIMIT)
            (found,) = index.matches(conn, request)
            assert found == expected(conn, filters), filters
        assert expected(conn, FILTERS[2]) and not expected(conn, FILTERS[5])  # the cases are what they say
    engines.forget()


def test_a_request_of_several_terms_answers_each_as_asked_alone(tmp_path, monkeypatch):
    """The fields of every term's hits are read for the whole request at once
    (MessageIndex._read_fields): a common word's newest and a rarer word's BM25 best, several of
    each, come out as each term asked alone gives them, each in its place."""
    monkeypatch.setattr(messages_module, "TERMS_KEPT", 0)  # each answer read, not kept
    path = tmp_path / "lib.sqlite3"
    library(path)
    engines.forget()
    index = MessageIndex(path)
    index.catch_up()
    terms = [("kettle",), ("walnut",), ("nowhere",), ("kettle", "walnut"), ('"kettle 7"',), ("session",)]
    with open_readonly(path) as conn:
        for filters in FILTERS[:3]:
            for common in (None, 200):  # None: every term by its BM25 best; 200: the two words at their newest
                alone = [index.matches(conn, mq.request_for([t], filters, "per_term", LIMIT, None, common))[0]
                         for t in terms]
                together = index.matches(conn, mq.request_for(terms, filters, "per_term", LIMIT, None, common))
                assert list(together) == alone and alone[0] and alone[2] == []
        newest = index.matches(conn, mq.request_for(terms, FILTERS[0], "per_term", LIMIT, None, LIMIT))
        assert newest[0] == expected(conn, FILTERS[0]) and newest[0][0][2] is None  # read at its newest
        assert newest[4] and newest[4][0][2] is not None  # a phrase in 1 message: its BM25 best
    engines.forget()
