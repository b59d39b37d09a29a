"""A disk that fills while `jezero run` upgrades an older library (migration 9 copies the
messages tables, so it needs about their size again, in the WAL): the library stays as it was,
at its old version, and the run says so in one line; once there is room the next run upgrades it
with every message as it was. Found by the harden10 sweep: SQLite had already rolled the
transaction back when the disk filled, the migration's own ROLLBACK then failed with "cannot
rollback - no transaction is active", and the run ended in that traceback, hiding the cause.
(kill -9 during the same migration held: 6 kills of 6 left version 8 and every message.)

Mounting needs root (and a kernel that lets this process mount); elsewhere this test skips."""

from __future__ import annotations

import hashlib
import sqlite3
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path

from jz_support import jezero_command, needs_plugin
from jezero.store import ItemRecord, Store
from jezero.store.messages import MessageRecord
from jezero.store.migrations import LATEST
from test_harden_disk_full import fill, mounts  # noqa: F401 (the fixture)

pytestmark = needs_plugin("jezero-connectors-claude")  # the config names a claude connector

T0 = datetime(2025, 1, 6, 9, tzinfo=timezone.utc)
WORDS = "deploy rollback canary migration vacuum checkpoint flaky retry timeout webhook invoice cache".split()


def schema_8_library(path: Path, items: int) -> None:
    """A library as schema 8 had it (message ids in the order stored), written by this code."""
    with Store(path, migrate_to=8) as store:
        for start in range(0, items, 100):
            records = []
            for n in range(start, start + 100):
                when = T0 + timedelta(minutes=7 * (items - n))
                msgs = [MessageRecord(("user", "assistant")[i % 2], f"{WORDS[(n + i) % 12]} s{n} m{i} " + "pad " * 30,
                                      when + timedelta(seconds=i) if i % 3 else None) for i in range(20)]
                records.append(ItemRecord(uid=f"claude:s{n}:0", source="claude", agent="claude-code", session_id=f"s{n}",
                                          segment_index=0, occurred_at=when, title=f"session {n}", summary="work",
                                          questions=[], atoms=[], original="".join(m.text for m in msgs),
                                          content_hash=f"h{n}", summarizer="x", summary_schema=1, project="p",
                                          messages=msgs))
            store.write(records)
        store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def state(path: Path) -> tuple[int, str]:
    """(schema version, a digest of every item and message as readers see them)."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        version = int(conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0])
        digest = hashlib.sha256()
        for row in conn.execute("SELECT uid, title, summary, original FROM items ORDER BY uid"):
            digest.update(repr(row).encode())
        for row in conn.execute("SELECT m.item_id, m.seq, m.role, m.at, t.text FROM messages m "
                                "JOIN message_texts t ON t.id = m.id ORDER BY m.item_id, m.seq"):
            digest.update(repr(row).encode())
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        return version, digest.hexdigest()
    finally:
        conn.close()


def test_a_disk_that_fills_during_a_migration_keeps_the_old_library_and_says_so(mounts, tmp_path):  # noqa: F811
    where = mounts.tmpfs(tmp_path / "disk", "64m")
    library = where / "library.sqlite3"
    schema_8_library(library, 1000)
    before = state(library)
    assert before[0] == 8
    (where / "projects").mkdir()
    config = tmp_path / "config.toml"
    config.write_text(f'[storage]\npath = "{library}"\n[summarizer]\nname = "offline"\n[[connectors]]\n'
                      f'name = "claude"\ntype = "claude"\noptions = {{ path = "{where / "projects"}" }}\n')
    filler = fill(where, leave_kb=2048)  # less than the messages' copy needs
    ran = subprocess.run([*jezero_command(), "--config", str(config), "run"], capture_output=True, text=True,
                         timeout=300)
    assert ran.returncode != 0 and "Traceback" not in ran.stderr, ran.stderr[-3000:]
    assert ran.stderr.startswith("error: no space left to write the library"), ran.stderr
    assert state(library) == before
    filler.unlink()
    mounts.resize(where, "256m")
    ran = subprocess.run([*jezero_command(), "--config", str(config), "run"], capture_output=True, text=True,
                         timeout=300)
    assert ran.returncode == 0, ran.stderr[-3000:]
    after = state(library)
    assert after == (LATEST, before[1])  # every message as it was (their ids follow their time now)
