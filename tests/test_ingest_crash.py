"""Kill `jezero run` with SIGKILL at random points, many times, and show that the library ends up
exactly as one clean run leaves it: no duplicates, no lost sessions, a clean integrity check."""

from __future__ import annotations

import random
import signal
import subprocess
import time
from datetime import datetime, timedelta, timezone

import apsw
import pytest

from jz_support import jezero_command, needs_plugin
from jezero.demo import SessionSpec, Turn
from jezero.store import open_readonly

pytestmark = [needs_plugin("jezero-connectors-claude"), needs_plugin("jezero-connectors-codex"),
              needs_plugin("jezero-summarizers")]


def make_specs(n=80, seed=3):
    rng = random.Random(seed)
    start = datetime(2026, 2, 1, tzinfo=timezone.utc)
    specs = []
    for i in range(n):
        turns = [Turn("user", f"task {i}: " + " ".join(rng.choices(WORDS, k=30)))]
        for j in range(rng.randint(2, 12)):
            turns += step(rng, j)
        specs.append(SessionSpec("claude" if i % 2 else "codex", f"/home/dev/src/p{i % 5}",
                                 start + timedelta(hours=i), turns, id=f"00000000-0000-4000-8000-{i:012d}"))
    return specs


WORDS = "deploy invoice webhook postgres docker cache queue retry schema token checkout refund".split()


def step(rng, j):
    output = "\n".join(" ".join(rng.choices(WORDS, k=15)) for _ in range(40))
    return [Turn("command", f"make step-{j}", output, failed=rng.random() < 0.2),
            Turn("assistant", " ".join(rng.choices(WORDS, k=80)))]


def wait_until_writing(proc, wal, timeout=60):
    """Past start-up: the run has begun writing when its WAL file changes."""
    def state():
        return wal.stat().st_mtime_ns if wal.exists() else None

    before = state()
    deadline = time.monotonic() + timeout
    while proc.poll() is None and state() == before and time.monotonic() < deadline:
        time.sleep(0.01)


def write_all(folder, specs):
    from jezero_connectors_claude.demo import write_claude
    from jezero_connectors_codex.demo import write_codex

    for spec in specs:
        write_claude(folder / "claude" / "projects", spec) if spec.agent == "claude" else write_codex(folder / "codex", spec)


def config(tmp_path, sessions, name, library=None, engine=None):
    """A config reading the claude and codex sessions under `sessions` (write_all's layout) into
    `library` (default: `name`.sqlite3 beside the config), searched by `engine` when given."""
    path = tmp_path / f"{name}.toml"
    search = f'[search]\nengine = "{engine}"\n' if engine else ""
    path.write_text(f"""
[storage]
path = "{library or tmp_path / (name + '.sqlite3')}"
{search}[ingest]
settle_minutes = 0
max_input_chars = 8000
[[connectors]]
name = "claude"
type = "claude"
options = {{ path = "{sessions / 'claude' / 'projects'}" }}
[[connectors]]
name = "codex"
type = "codex"
options = {{ path = "{sessions / 'codex'}" }}
""")
    return path


def snapshot(library):
    conn = open_readonly(library)
    items = conn.execute("SELECT uid, source, session_id, segment_index, content_hash, title FROM items ORDER BY uid").fetchall()
    fts = conn.execute("SELECT count(*) FROM items_fts").fetchone()[0]
    integrity = conn.execute("PRAGMA integrity_check").fetchone()[0]
    fts_ok = conn.execute("SELECT count(*) FROM items i JOIN items_fts f ON f.rowid = i.id").fetchone()[0]
    conn.close()
    return items, fts, fts_ok, integrity


def assert_messages_in_step(library):
    """Every item has its messages and no message outlives its item; the messages' index matches
    its table (FTS5's own integrity check, which needs a writable connection)."""
    conn = apsw.Connection(str(library))
    try:
        assert conn.execute("SELECT count(*) FROM messages WHERE item_id NOT IN (SELECT id FROM items)").fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM items WHERE id NOT IN (SELECT item_id FROM messages)").fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM message_texts").fetchone() == \
            conn.execute("SELECT count(*) FROM messages").fetchone()
        conn.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES('integrity-check', 0)")
    finally:
        conn.close()


@pytest.mark.slow
def test_sigkill_at_random_points_loses_nothing_and_duplicates_nothing(tmp_path):
    sessions = tmp_path / "sessions"
    specs = make_specs()
    write_all(sessions, specs)
    victim = config(tmp_path, sessions, "victim")
    rng = random.Random(11)
    kills = 0
    for round in range(10):
        proc = subprocess.Popen([*jezero_command(), "--config", str(victim), "run", "-q"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_until_writing(proc, tmp_path / "victim.sqlite3-wal")
        time.sleep(rng.uniform(0.0, 0.5))  # somewhere inside the writing
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.wait(timeout=30)
        items, fts, fts_ok, integrity = snapshot(tmp_path / "victim.sqlite3")
        assert integrity == "ok"
        assert fts == fts_ok == len(items)  # no item without its index row, or the reverse
        assert len({uid for uid, *_ in items}) == len(items)
        assert_messages_in_step(tmp_path / "victim.sqlite3")
        # the agents keep working between runs: some sessions grow
        for spec in rng.sample(specs, 15):
            spec.turns += step(rng, len(spec.turns))
        write_all(sessions, specs)
    assert kills >= 5, f"only {kills} of 10 runs were still running when killed"

    subprocess.run([*jezero_command(), "--config", str(victim), "run", "-q"], check=True, capture_output=True,
                   timeout=300)
    items, fts, fts_ok, integrity = snapshot(tmp_path / "victim.sqlite3")
    assert integrity == "ok" and fts == fts_ok == len(items)
    assert_messages_in_step(tmp_path / "victim.sqlite3")

    reference = config(tmp_path, sessions, "reference")  # one clean run over the final files
    subprocess.run([*jezero_command(), "--config", str(reference), "run", "-q"], check=True, capture_output=True,
                   timeout=300)
    expected, *_ = snapshot(tmp_path / "reference.sqlite3")
    assert len({(s, sid) for _, s, sid, *_ in expected}) == 80
    assert [i[:5] for i in items] == [e[:5] for e in expected]
