"""`jezero migrate-store`: a SQLite library copied into PostgreSQL and back, verified by counts and
content hashes, resumed after an interruption, and searchable the same way on both ends."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone

import pytest

from jezero.query import get_item, timeline
from jezero.store import ItemRecord, Store, open_readonly
from jezero.store.messages import MessageRecord

NOW = datetime(2026, 5, 1, tzinfo=timezone.utc)
URL_ENV = "JEZERO_TEST_DATABASE_URL"


def _item(n: int) -> ItemRecord:
    return ItemRecord(
        uid=f"claude-local:s{n}:0", source="claude-local" if n % 3 else "codex-ci", agent="claude",
        session_id=f"s{n}", segment_index=0, occurred_at=NOW - timedelta(hours=n), title=f"Fix number {n}: café",
        summary=f"Squashed bug {n} in the scheduler", questions=[f"How was bug {n} fixed?"],
        atoms=[{"type": "file", "text": f"src/mod{n}.py"}], original=f"USER: fix bug {n}\nASSISTANT: done {n}",
        content_hash=f"h{n}", summarizer="offline", summary_schema=1, project="shop" if n % 2 else None,
        messages=[MessageRecord("user", f"fix bug {n}", NOW - timedelta(hours=n)), MessageRecord("assistant", f"done {n}")],
    )


@pytest.fixture
def sqlite_library(tmp_path):
    path = tmp_path / "library.sqlite3"
    with Store(path) as store:
        store.write([_item(n) for n in range(1, 31)], connector="claude-local", cursor={"a.jsonl": {"offset": 12}})
        store.record_run("claude-local", error=None, warnings=["line 3: unknown record"], ok=True)
        store.record_call(run_id="r1", source="claude-local", uid="claude-local:s1:0", summarizer="offline",
                          model=None, input_tokens=10, output_tokens=5, cost_usd=0.25, ok=True)
        store.write((), delete_uids=["claude-local:s7:0"])  # a gap in the ids
    return path


def cli(tmp_path, url, *args, check=True):
    (tmp_path / "config.toml").write_text(f'[storage]\npath = "{tmp_path / "library.sqlite3"}"\nurl_env = "{URL_ENV}"\n')
    env = {**os.environ, "JEZERO_CONFIG": str(tmp_path / "config.toml"), URL_ENV: url}
    proc = subprocess.run([sys.executable, "-m", "jezero.cli", *args], env=env, capture_output=True, text=True,
                          timeout=120)
    if check:
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def test_to_postgres_and_back_verified_and_resumable(tmp_path, sqlite_library, pg_url, monkeypatch):
    from jezero_store_postgres import connect_reader, migrate

    # Interrupted after the first batch: what was copied stays, the rerun copies the rest.
    monkeypatch.setattr(migrate, "BATCH", 10)

    def stop_after_first(line):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        migrate.to_postgres(sqlite_library, pg_url, progress=stop_after_first)
    report = json.loads(cli(tmp_path, pg_url, "migrate-store", "--to", "postgres", "--json").stdout)
    assert report["verified"] and report["differing"] == []
    assert report["skipped_items"] == 10 and report["copied_items"] == 19
    assert report["counts"]["items"] == [29, 29] and report["counts"]["messages"] == [58, 58]
    assert report["counts"]["cursors"] == [1, 1] and report["counts"]["summarizer_calls"] == [1, 1]
    # Once more: nothing to copy, still verified.
    again = json.loads(cli(tmp_path, pg_url, "migrate-store", "--to", "postgres", "--json").stdout)
    assert again["verified"] and again["copied_items"] == 0 and again["skipped_items"] == 29

    sqlite, pg = open_readonly(sqlite_library), connect_reader(pg_url)
    try:
        for item_id in (1, 8, 30):  # the same ids name the same items, the original included
            assert get_item(pg, item_id, include_original=True) == get_item(sqlite, item_id, include_original=True)
        assert [h["id"] for h in timeline(pg, project="shop", limit=50)] == \
               [h["id"] for h in timeline(sqlite, project="shop", limit=50)]
        from jezero.query import search

        assert [h["id"] for h in search(pg, "cafe", lanes=["items"], limit=50)] and \
               {h["id"] for h in search(pg, "mod12", lanes=["items"])} == {12}
        from jezero.query import recall

        # the copied messages are ranked on PostgreSQL too (messages_search), as on SQLite
        copied = recall(pg, "bug 12", window=0)["hits"]
        assert copied[0]["item_id"] == 12 and [h["message_id"] for h in copied] == \
               [h["message_id"] for h in recall(sqlite, "bug 12", window=0)["hits"]]
    finally:
        sqlite.close()
        pg.close()

    # A new item written to PostgreSQL gets an id past the copied ones.
    from jezero_store_postgres.store import PostgresStore

    with PostgresStore(pg_url, "trigram remove_diacritics 1") as store:
        [new_id] = store.write([_item(99)])
    assert new_id > 30

    back = tmp_path / "back.sqlite3"
    report = json.loads(cli(tmp_path, pg_url, "migrate-store", "--to", "sqlite", "--path", str(back), "--json").stdout)
    assert report["verified"] and report["counts"]["items"] == [30, 30]
    conn = open_readonly(back)
    try:
        assert conn.execute("SELECT count(*) FROM items_fts").fetchone()[0] == 30
        assert conn.execute("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'done'").fetchone()[0] == 30
        from jezero.query import search

        assert {h["id"] for h in search(conn, "mod12", lanes=["items"])} == {12}
    finally:
        conn.close()


def test_a_destination_holding_other_content_is_not_verified(tmp_path, sqlite_library, pg_url):
    from jezero_store_postgres.store import PostgresStore

    with PostgresStore(pg_url, "trigram remove_diacritics 1") as store:
        store.write([_item(500)])  # id 1 there is another item than id 1 here
    proc = cli(tmp_path, pg_url, "migrate-store", "--to", "postgres", check=False)
    assert proc.returncode == 1 and "NOT verified" in proc.stdout and "items" in proc.stdout


def test_the_copied_tables_have_planner_statistics(sqlite_library, pg_url):
    """A copy ends with ANALYZE: 29 items are under autovacuum's threshold (50 rows), so without it
    the first searches would be planned for tables PostgreSQL knows nothing of."""
    from jezero_store_postgres import migrate
    from jezero_store_postgres.db import Connection

    assert migrate.to_postgres(sqlite_library, pg_url).verified
    db = Connection(pg_url)
    try:
        analysed = {r[0] for r in db.execute("SELECT DISTINCT tablename FROM pg_stats WHERE schemaname = current_schema()")}
    finally:
        db.close()
    assert {"items", "items_search", "messages", "messages_search", "search_postings", "search_words"} <= analysed


def test_a_library_an_older_jezero_wrote_is_migrated_before_it_is_copied(tmp_path, pg_url):
    """Its message ids were numbered as stored; the copy's must follow time, as this backend's do."""
    import shutil
    from pathlib import Path

    from jezero_store_postgres import connect_reader, migrate

    library = tmp_path / "library.sqlite3"
    shutil.copy(Path(__file__).resolve().parents[2] / "tests" / "data" / "main-e85cee8-library.sqlite3", library)
    report = migrate.to_postgres(library, pg_url)
    assert report.verified and report.differing() == []
    sqlite, pg = open_readonly(library), connect_reader(pg_url)
    try:
        assert sqlite.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == "9"
        rows = "SELECT id, item_id, seq, at FROM messages ORDER BY id"
        copied = pg.execute(rows).fetchall()
        assert [tuple(r) for r in copied] == [tuple(r) for r in sqlite.execute(rows).fetchall()]
        assert [r[3] for r in copied] == sorted(r[3] for r in copied)
    finally:
        sqlite.close()
        pg.close()
