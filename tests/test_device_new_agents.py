"""A device uploads the stores of Gemini CLI, Copilot CLI and OpenCode (the real files in
../shared/samples/newest/, copied at test time), the inbox keeps them in the agents' layouts, and
the inbox connectors read them like the agents' own connectors do. OpenCode's database goes up as
a snapshot made with SQLite's online backup, which includes what is still in its WAL."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess

import pytest

from device_support import Device, jezero_serve, wait_for
from jz_support import SAMPLES, jezero_command, needs_plugin, needs_samples

pytestmark = [needs_samples(), needs_plugin("jezero-connectors-inbox"), pytest.mark.slow]
NEWEST = SAMPLES / "newest"


def test_gemini_copilot_and_opencode_stores_upload_and_ingest(tmp_path):
    laptop = Device(tmp_path / "laptop")
    gemini = tmp_path / "laptop" / "gemini-home" / ".gemini"
    shutil.copytree(NEWEST / "gemini", gemini)
    shutil.copytree(NEWEST / "copilot", tmp_path / "laptop" / "copilot")
    opencode = tmp_path / "laptop" / "data" / "opencode"
    opencode.mkdir(parents=True)
    shutil.copy(NEWEST / "opencode" / "opencode.db", opencode / "opencode.db")
    # Something only in the WAL: a live OpenCode keeps its newest writes there until a checkpoint.
    live = sqlite3.connect(opencode / "opencode.db")
    live.execute("PRAGMA journal_mode=WAL")
    live.execute("PRAGMA wal_autocheckpoint=0")
    live.execute("UPDATE session SET title = 'renamed while running' WHERE id = "
                 "(SELECT id FROM session ORDER BY time_created LIMIT 1)")
    live.commit()
    assert (opencode / "opencode.db-wal").stat().st_size > 0

    with jezero_serve(tmp_path / "server", extra_config="\n[ingest]\nsettle_minutes = 0\n") as server:
        env = {**os.environ, "JEZERO_CONFIG": str(server.config)}
        made = laptop.client("init", "--server", server.base, "--device", "laptop")
        assert subprocess.run([*jezero_command(), *made.stdout.split()[1:]], env=env, capture_output=True).returncode == 0
        wait_for(lambda: laptop.client("status").returncode == 0)
        sent = laptop.client("upload", "--wait", "--verbose")
        assert sent.returncode == 0, sent.stderr
        inbox = tmp_path / "server" / "inbox" / "laptop"
        stored = {p.relative_to(inbox).as_posix() for p in inbox.rglob("*") if p.is_file() and "/." not in "/" + p.relative_to(inbox).as_posix()}
        assert stored == {
            "gemini/tmp/demo/chats/session-2026-11-30T17-33-5debda9c.jsonl",
            "copilot/session-state/ca1301bb-00ad-43ea-bf85-ea7400d58aef/events.jsonl",
            "copilot/session-state/ca1301bb-00ad-43ea-bf85-ea7400d58aef/workspace.yaml",
            "opencode/opencode.db",
        }
        # The snapshot holds the write that was only in the WAL; the device's own file is untouched.
        copy = sqlite3.connect(f"file:{inbox / 'opencode' / 'opencode.db'}?mode=ro", uri=True)
        assert copy.execute("SELECT count(*) FROM session WHERE title = 'renamed while running'").fetchone() == (1,)
        copy.close()
        live.close()
        # Nothing changed: nothing is sent again.
        assert laptop.client("upload", "--wait").returncode == 0
        assert json.loads(laptop.client("status", "--json").stdout)["last_upload"]["sent"] == 0

        for agent in ("gemini", "copilot", "opencode"):
            ran = subprocess.run([*jezero_command(), "run", f"inbox-laptop-{agent}"], env=env, capture_output=True,
                                 text=True, timeout=300)
            assert ran.returncode == 0, ran.stdout + ran.stderr
            found = subprocess.run([*jezero_command(), "timeline", "--source", f"inbox-laptop-{agent}", "--json"],
                                   env=env, capture_output=True, text=True, timeout=120)
            items = json.loads(found.stdout)
            assert items, f"nothing ingested from {agent}"
            assert all(i["agent"].startswith(agent) for i in items)
            # The sessions ran in /home/dev/src/demo: the device's hint (gemini through projects.json,
            # copilot from session.start) or the server's own rules (opencode) name the project.
            assert {i["project"] for i in items} == {"demo"}
