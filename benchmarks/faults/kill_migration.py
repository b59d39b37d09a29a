"""SIGKILL `jezero run` while it upgrades a library of schema 8 (migration 9 renumbers every
message and rebuilds the messages index in one transaction), ROUNDS times at a random 0.8-5 s;
after each kill: integrity_check, the version (8 or 9, nothing between), and every item and
message (uid, title, summary, original; item, position, role, time, text) equal to the library
before; `jezero recall` answers; then a whole run upgrades it with the same items and messages.

    uv run --locked python benchmarks/faults/kill_migration.py ROUNDS SEED [ITEMS]

ITEMS (16,000 by default, 30 messages each, about 450 MB) makes the migration last a few seconds
on a loaded 2-core machine; the library is written once by this code at schema 8."""
import hashlib
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parents[1] / "tests")]
from jz_support import jezero_command  # noqa: E402

from jezero.store import ItemRecord, Store  # noqa: E402
from jezero.store.messages import MessageRecord  # noqa: E402

T0 = datetime(2025, 1, 6, 9, tzinfo=timezone.utc)
WORDS = "deploy rollback canary migration vacuum checkpoint flaky retry timeout webhook invoice cache".split()


def make_library(folder: Path, items: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    with Store(folder / "lib.sqlite3", migrate_to=8) as store:
        for start in range(0, items, 200):
            records = []
            for n in range(start, min(items, start + 200)):
                when = T0 + timedelta(minutes=(items - n) * 7)
                msgs = [MessageRecord(("user", "assistant")[i % 2], f"{WORDS[(n + i) % 12]} {WORDS[(n * 3 + i) % 12]} "
                                      f"s{n} m{i} " + "pad " * 40, when + timedelta(seconds=i) if i % 3 else None)
                        for i in range(30)]
                records.append(ItemRecord(uid=f"claude:s{n}:0", source="claude", agent="claude-code",
                                          session_id=f"s{n}", segment_index=0, occurred_at=when, title=f"session {n}",
                                          summary=f"work on {WORDS[n % 12]}", questions=[], atoms=[],
                                          original="".join(f"[{m.role}]\n{m.text}\n" for m in msgs),
                                          content_hash=f"h{n}", summarizer="x", summary_schema=1, project=f"p{n % 3}",
                                          messages=msgs))
            store.write(records)
        store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    (folder / "projects").mkdir(exist_ok=True)
    write_config(folder)
    return folder


def write_config(folder: Path) -> Path:
    config = folder / "config.toml"
    config.write_text(f'[storage]\npath = "{folder / "lib.sqlite3"}"\n[summarizer]\nname = "offline"\n'
                      f'[[connectors]]\nname = "claude"\ntype = "claude"\noptions = {{ path = "{folder / "projects"}" }}\n')
    return config


def digest(path: Path):
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        version = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0]
        ok = conn.execute("PRAGMA integrity_check").fetchone()[0]
        messages, items = hashlib.sha1(), hashlib.sha1()
        for row in conn.execute("SELECT m.item_id, m.seq, m.role, m.at, t.text FROM messages m "
                                "JOIN message_texts t ON t.id = m.id ORDER BY m.item_id, m.seq"):
            messages.update(repr(row).encode())
        for row in conn.execute("SELECT uid, title, summary, project, original, content_hash FROM items ORDER BY uid"):
            items.update(repr(row).encode())
        count = conn.execute("SELECT count(*) FROM items").fetchone()[0]
    finally:
        conn.close()
    return version, ok, count, messages.hexdigest(), items.hexdigest()


def main(rounds: int, seed: int, items: int) -> int:
    rng = random.Random(seed)
    tmp = Path(tempfile.gettempdir()) / f"jezero-faults-kill-migration-{items}"
    source = tmp / "schema8"
    if not (source / "lib.sqlite3").exists():
        make_library(source, items)
    base = digest(source / "lib.sqlite3")
    print("schema 8 library:", base)
    bad = 0
    for r in range(rounds):
        victim = tmp / "victim"
        shutil.rmtree(victim, ignore_errors=True)
        shutil.copytree(source, victim)
        config = write_config(victim)
        proc = subprocess.Popen([*jezero_command(), "--config", str(config), "run"], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
        at = rng.uniform(0.8, 5.0)
        time.sleep(at)
        ended = proc.poll() is not None
        if not ended:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        killed = digest(victim / "lib.sqlite3")
        recall = subprocess.run([*jezero_command(), "--config", str(config), "recall", "deploy", "-n", "2"],
                                capture_output=True, text=True)
        whole = subprocess.run([*jezero_command(), "--config", str(config), "run"], capture_output=True, text=True)
        after = digest(victim / "lib.sqlite3")
        good = (killed[0] in ("8", "9") and killed[1] == "ok" and killed[2:] == base[2:] and recall.returncode == 0
                and whole.returncode == 0 and after[0] == "9" and after[2:] == base[2:])
        bad += not good
        print(f"round {r}: kill at {at:.1f} s{' (already ended)' if ended else ''}: version {killed[0]}, "
              f"integrity {killed[1]}, items and messages {'the same' if killed[2:] == base[2:] else 'CHANGED'}; "
              f"recall {recall.returncode}; after a whole run: version {after[0]}, "
              f"{'the same' if after[2:] == base[2:] else 'CHANGED'}" + ("" if good else "  <-- DEFECT"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 16000))
