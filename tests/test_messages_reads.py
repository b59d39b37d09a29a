"""The messages lane's reads of the library, written for speed (2026-12-02, branch fusedfast):
the items' sessions and the shown rows read through one carray statement, and a common word's
newest reduced to each session's first row from columns. Each must answer as the plain way does."""

from __future__ import annotations

import random

import pytest

from jezero.query import messages as mq
from jezero.store import open_readonly
from jezero.store.__init__ import READ_MMAP_BYTES
from test_messages_engines import session, write


def _library(tmp_path):
    path = tmp_path / "lib.sqlite3"
    write(path, [session(f"s{i}", [("user", f"word {i}"), ("tool", "ran it"), ("assistant", "done")],
                         source="claude-local" if i % 2 else "codex-local", project="shop" if i % 3 else "web",
                         parent="p" if i % 4 == 0 else None, day=i) for i in range(12)])
    return path


def test_the_items_sessions_and_the_rows_read_as_one_array_answer_as_the_in_lists(tmp_path, monkeypatch):
    path = _library(tmp_path)
    with open_readonly(path) as conn:
        items = [r[0] for r in conn.execute("SELECT id FROM items ORDER BY id")]
        ids = [r[0] for r in conn.execute("SELECT id FROM messages ORDER BY id")]
        wanted_items = sorted(items[::2] + [max(items) + 1000])  # one the library does not hold
        wanted_ids = ids[::3] + [ids[0], max(ids) + 1]  # one twice, one missing
        kinds = [mq.MessageFilters(), mq.MessageFilters(include_tools=True, include_subagents=True),
                 mq.MessageFilters(sources=["codex-local"], projects=["shop"], roles=["user", "tool"]),
                 mq.MessageFilters(min_messages=3, include_subagents=True)]
        assert mq._CARRAY is not None  # the locked apsw has it: the array path is what runs
        by_array = (mq.item_sessions(conn, wanted_items), [mq.rows(conn, wanted_ids, f) for f in kinds])
        monkeypatch.setattr(mq, "_CARRAY", None)
        by_lists = (mq.item_sessions(conn, wanted_items), [mq.rows(conn, wanted_ids, f) for f in kinds])
        monkeypatch.undo()
        assert mq.item_sessions(conn, []) == {} and mq.rows(conn, [], kinds[0]) == {}  # (an empty array is refused)
    assert by_array == by_lists
    assert len(by_array[0]) == len(wanted_items) - 1 and all(len(r) for r in by_array[1])


class _Columns(list):
    ids: list
    items: list


def _plain(found, get, relevance):
    """A common word's newest as defined: each session's first row among the rows whose item the
    library holds, in their order; how many such rows, and their lowest id."""
    kept = [(mid, get(item)) for mid, item, _ in found if get(item) is not None]
    first = {}
    for mid, pair in kept:
        first.setdefault(pair, (mid, *pair, relevance))
    return list(first.values()), len(kept), min((mid for mid, _ in kept), default=None)


@pytest.mark.parametrize("columns", [False, True])
@pytest.mark.parametrize("deleted", [False, True])
def test_a_common_words_newest_per_session_is_each_sessions_first_row(columns, deleted):
    rng = random.Random(7)
    # sessions of one to three items (segments), their rows interleaved as the ids fall
    sessions = {item: ("claude-local" if item % 2 else "codex-local", f"s{item // 3}") for item in range(60)}
    if deleted:
        for item in (4, 5, 31):
            del sessions[item]
    for _ in range(20):
        mids = sorted(rng.sample(range(10_000, 20_000), 300), reverse=True)
        found = [(mid, rng.randrange(60), None) for mid in mids]
        if columns:
            found = _Columns(found)
            found.ids, found.items = [r[0] for r in found], [r[1] for r in found]
        newest = mq._newest_per_session(found, sessions.get, 1.5)
        assert (list(newest), newest.read, newest.oldest) == _plain(found, sessions.get, 1.5)


def test_readers_map_the_whole_library_file(tmp_path):
    """The readers' mmap covers a library past 2 GB (at 2 GB a 7.9 GB library read the rest through
    the 2 MB cache): SQLite keeps the size asked for, not a lower cap."""
    path = _library(tmp_path)
    with open_readonly(path) as conn:
        assert conn.execute("PRAGMA mmap_size").fetchone()[0] == READ_MMAP_BYTES >= 1 << 36


def test_readers_have_fts5_plan_its_own_lookups_once(tmp_path):
    """FTS5's own statements are prepared under the query planner stability guarantee (QPSG),
    the connection's others as before: without it FTS5 prepared its term lookup again at every
    MATCH, once per segment of the index. Its answers are the same."""
    import apsw

    from jezero import store

    path = _library(tmp_path)
    seen = []
    with open_readonly(path) as conn:
        assert conn.config(apsw.SQLITE_DBCONFIG_ENABLE_QPSG, -1) == 0  # the rest planned as before
        conn.exec_trace = lambda cursor, sql, bindings: seen.append(sql) or True
        stable = [mq.token_rows(conn, t, 100) for t in ("word", "done", "absent")]
    assert not any("jezeroplanned" in sql for sql in seen)  # done once, at the opening
    store.READ_STABLE_PLANS = False
    try:
        with open_readonly(path) as conn:
            assert [mq.token_rows(conn, t, 100) for t in ("word", "done", "absent")] == stable
    finally:
        store.READ_STABLE_PLANS = True


def test_a_token_over_a_count_answers_as_counting_it(tmp_path):
    """messages.token_over (the phrase check's skip past `rows`) says what counting says."""
    path = _library(tmp_path)
    with open_readonly(path) as conn:
        for token in ("word", "done", "ran", "7", "absent"):
            held = mq.token_rows(conn, token, 10_000)
            for rows in {0, 1, max(held - 1, 0), held, held + 1}:
                assert mq.token_over(conn, token, rows) == (held > rows), (token, rows)
        assert mq.token_rows(conn, "word", 10_000) == 12 and mq.token_rows(conn, "absent", 10_000) == 0
