"""A reader keeps the statements it runs prepared (READ_STATEMENTS_KEPT): a search repeated on the
same connection prepares nothing again, and the IN lists of item ids are one statement whatever
their count (common.id_list), with the same rows in the same order as a list of marks."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import apsw
import pytest

from jezero.query import common, search
from jezero.store import READ_STATEMENTS_KEPT, ItemRecord, Store, open_readonly
from jezero.store.messages import MessageRecord

T0 = datetime(2026, 3, 1, 9, tzinfo=timezone.utc)
NOW = T0 + timedelta(days=40)


def item(n: int, title: str, texts: list[str], source: str = "claude-local") -> ItemRecord:
    msgs = [MessageRecord("user" if i % 2 == 0 else "assistant", text, T0 + timedelta(days=n, minutes=i))
            for i, text in enumerate(texts)]
    return ItemRecord(uid=f"{source}:s{n}:0", source=source, agent="claude-code", session_id=f"s{n}", segment_index=0,
                      occurred_at=T0 + timedelta(days=n), title=title, summary=f"{title}, done.", questions=[],
                      atoms=[], original="(messages)", content_hash=f"h{n}", summarizer="x", summary_schema=1,
                      project="infra", messages=msgs)


@pytest.fixture
def conn(tmp_path):
    path = tmp_path / "lib.sqlite3"
    topics = ["file watcher limit", "checkout copy", "parser error E1442", "deploy script", "cache tests"]
    with Store(path) as store:
        store.write([item(n, f"{topics[n % len(topics)]} {n}",
                          [f"the {topics[n % len(topics)]} again", f"tests for the parser, step {n}",
                           f"ran scripts/deploy.sh with utils/loader_{n}.py"],
                          source="claude-local" if n % 3 else "codex-local")
                     for n in range(30)])
    c = open_readonly(path)
    yield c
    c.close()


def test_a_reader_keeps_as_many_statements_as_it_is_set_to(conn):
    assert READ_STATEMENTS_KEPT >= 256  # apsw's default (100) re-prepared statements of every fused search
    assert conn.cache_stats()["size"] == READ_STATEMENTS_KEPT


def test_a_search_repeated_on_the_reader_prepares_at_most_one_statement_again(conn):
    queries = ["parser tests", "deploy scripts loader", "watcher limit", "checkout", "E1442 utils/loader_7.py"]
    counts = [3, 7, 12, 20, 25]  # hits' counts vary: the IN lists would be texts of their own

    def run():
        for q in queries:
            for limit in counts:
                search(conn, q, now=NOW, limit=limit)
                search(conn, q, now=NOW, limit=limit, allowed=["claude-*"])

    run()
    before = conn.cache_stats()
    run()
    after = conn.cache_stats()
    assert after["hits"] - before["hits"] > 500
    assert after["misses"] - before["misses"] <= 1  # (of 50 searches)


def test_more_statements_than_apsws_default_stay_prepared(conn):
    """150 distinct statements, run twice: the second time none is prepared again (apsw's default
    cache of 100 prepares them all again)."""
    texts = [f"SELECT id FROM items WHERE id = ? AND {n} = {n}" for n in range(150)]
    for text in texts:
        conn.execute(text, (1,)).fetchall()
    before = conn.cache_stats()["misses"]
    for text in texts:
        conn.execute(text, (1,)).fetchall()
    assert conn.cache_stats()["misses"] == before


@pytest.mark.parametrize("carray", [True, False])
def test_the_ids_listed_give_the_rows_an_in_list_gives(conn, monkeypatch, carray):
    if not carray:
        monkeypatch.setattr(common, "_CARRAY", None)
    elif common._CARRAY is None:
        pytest.skip("this apsw has no carray")
    ids = [17, 3, 3, 29, 1, 999, 8]
    listed, args = common.id_list(conn, ids)
    assert (listed == "carray(?)") is carray
    got = [r for r in conn.execute(f"SELECT id, title FROM items WHERE id IN {listed}", args)]
    marks = ",".join("?" * len(ids))
    assert got == [r for r in conn.execute(f"SELECT id, title FROM items WHERE id IN ({marks})", ids)]
    assert [r[0] for r in got] == [1, 3, 8, 17, 29]  # sorted, each once, an unknown id left out
    assert common.fetch_hits(conn, ids) == {i: h for i, h in common.fetch_hits(conn, sorted(set(ids))).items()}
    assert list(common.fetch_hits(conn, ids)) == [1, 3, 8, 17, 29]


def test_the_ids_listed_outside_sqlite_are_marks():
    class Other:  # a backend's connection (PostgreSQL's adapter): no array binding
        pass

    assert common.id_list(Other(), [4, 2]) == ("(?,?)", [4, 2])
    assert not isinstance(Other(), apsw.Connection)
