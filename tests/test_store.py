"""The store: migrations from every earlier version, the tokenizer guard, read-only readers,
and the FTS rows kept in step with the items."""

from __future__ import annotations

from datetime import datetime, timezone

import apsw
import pytest

from jezero.store import ItemRecord, Store, StoreError, TokenizerMismatch, open_readonly
from jezero.store.migrations import LATEST, MIGRATIONS


def record(uid="src:s1:aaa", title="Crème brûlée migrations", **over):
    base = dict(uid=uid, source="src", agent="claude-code", session_id="s1", segment_index=0,
                occurred_at=datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc), title=title, summary="did things",
                questions=["q1?", "q2?", "q3?"], atoms=[{"type": "error", "text": "ENOSPC: no space left"}],
                original="[user]\nhello", content_hash="h1", summarizer="test", summary_schema=1)
    return ItemRecord(**{**base, **over})


def test_migrations_upgrade_a_library_created_at_version_1(tmp_path):
    path = tmp_path / "lib.sqlite3"
    with Store(path, migrate_to=1) as old:
        assert old.schema_version() == 1
        old.db.execute(
            "INSERT INTO items(uid, source, agent, session_id, segment_index, occurred_at, title, summary, questions,"
            " atoms, original, content_hash, summarizer, summary_schema, ingested_at, updated_at) VALUES"
            " ('u', 'src', 'a', 's', 0, '2026-01-01T00:00:00.000000Z', 'kept title', 'x', '[]', '[]', 'o', 'h',"
            " 'offline', 1, 'now', 'now')"
        )
        with pytest.raises(apsw.SQLError):
            old.db.execute("SELECT * FROM summarizer_calls")
    with Store(path) as new:
        assert new.schema_version() == LATEST == len(MIGRATIONS)
        assert new.db.execute("SELECT title FROM items").fetchall() == [("kept title",)]
        new.record_call(run_id="r", source="src", uid="u", summarizer="llm", model="m", input_tokens=10,
                        output_tokens=2, cost_usd=0.001, ok=True)
        assert new.db.execute("SELECT input_tokens FROM summarizer_calls").fetchall() == [(10,)]


@pytest.mark.parametrize("start", range(1, LATEST))
def test_each_migration_from_the_previous_version(tmp_path, start):
    path = tmp_path / "lib.sqlite3"
    Store(path, migrate_to=start).close()
    with Store(path, migrate_to=start + 1) as s:
        assert s.schema_version() == start + 1
        assert s.integrity_check() == "ok"


def test_a_newer_schema_is_refused_with_a_clear_message(tmp_path):
    path = tmp_path / "lib.sqlite3"
    with Store(path) as s:
        s.db.execute("UPDATE meta SET value='999' WHERE key='schema_version'")
    with pytest.raises(StoreError, match="newer than this jezero knows"):
        Store(path)


def test_another_tokenizer_is_refused_with_how_to_rebuild(tmp_path):
    path = tmp_path / "lib.sqlite3"
    Store(path).close()
    with pytest.raises(TokenizerMismatch, match="rebuild"):
        Store(path, tokenizer="unicode61")


def test_items_and_index_stay_in_step(tmp_path):
    path = tmp_path / "lib.sqlite3"
    with Store(path) as s:
        [item_id] = s.write([record()], connector="src", cursor={"file.jsonl": [10, 20]})
        [same_id] = s.write([record(title="Updated title", content_hash="h2")])
        assert same_id == item_id
        assert s.counts() == {"items": 1, "fts": 1, "messages": 1}
        s.write([], delete_uids=["src:s1:aaa"])
        assert s.counts() == {"items": 0, "fts": 0, "messages": 0}
        assert s.cursor("src") == {"file.jsonl": [10, 20]}


def test_trigram_index_ignores_accents_and_matches_substrings(tmp_path):
    path = tmp_path / "lib.sqlite3"
    with Store(path) as s:
        s.write([record()])
    ro = open_readonly(path)
    assert ro.execute("SELECT count(*) FROM items_fts WHERE items_fts MATCH '\"brulee\"'").fetchone()[0] == 1
    assert ro.execute("SELECT count(*) FROM items_fts WHERE items_fts MATCH '\"migrat\"'").fetchone()[0] == 1
    assert ro.execute("SELECT count(*) FROM items_fts WHERE items_fts MATCH '\"no space\"'").fetchone()[0] == 1


def test_readers_cannot_write(tmp_path):
    path = tmp_path / "lib.sqlite3"
    Store(path).close()
    ro = open_readonly(path)
    with pytest.raises(apsw.ReadOnlyError):
        ro.execute("DELETE FROM items")
    with pytest.raises(StoreError, match="no library"):
        open_readonly(tmp_path / "missing.sqlite3")


def test_a_failed_write_leaves_nothing_half_written(tmp_path):
    path = tmp_path / "lib.sqlite3"
    with Store(path) as s:
        s.write([record()], connector="src", cursor={"a": 1})
        bad = record(uid="src:s1:bbb")
        bad.title = None  # NOT NULL: the whole transaction must roll back
        with pytest.raises(apsw.ConstraintError):
            s.write([record(uid="src:s1:ccc"), bad], connector="src", cursor={"b": 2})
        assert s.counts() == {"items": 1, "fts": 1, "messages": 1}
        assert s.cursor("src") == {"a": 1}


def test_tidying_merges_the_index_after_a_large_write_and_a_little_after_a_small_one(tmp_path, monkeypatch):
    import jezero.store as store_mod

    monkeypatch.setattr(store_mod, "OPTIMIZE_MIN_ITEMS", 20)
    with Store(tmp_path / "lib.sqlite3") as store:
        for batch in range(12):  # one FTS5 segment per transaction, until automerge steps in
            store.write([record(uid=f"src:s{batch}-{i}:a", title=f"batch {batch} item {i}") for i in range(5)])
        assert store.index_segments() > 1
        statements = []
        store.db.exec_trace = lambda cursor, sql, bindings: statements.append(sql) or True
        store.tidy_index(written=5)  # a small run: a bounded merge
        assert not any("optimize" in s for s in statements) and any("'merge'" in s for s in statements)
        statements.clear()
        store.tidy_index(written=60)  # the whole library was just written: one segment
        assert any("'optimize'" in s for s in statements)
        store.db.exec_trace = None
        assert store.index_segments() == 1
        assert store.integrity_check() == "ok"
        conn = open_readonly(store.path)
        assert conn.execute("SELECT count(*) FROM items_fts WHERE items_fts MATCH '\"batch 7\"'").fetchone()[0] == 5
