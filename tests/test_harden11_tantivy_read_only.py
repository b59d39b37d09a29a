"""The tantivy engine over a library seen through a read-only bind mount: tantivy's reader must
write `.tantivy-meta.lock` in the index folder, which it cannot there (tantivy-py 0.27 has no
way to open an index without it), so FTS5 answers every search.

Before: `jezero status` said "its index cannot be read (ValueError: Failed to acquire Lockfile:
IoError(Os { code: 30, ... })). None)", naming neither the cause nor that FTS5 answers, and
`jezero health` said nothing (test_status_and_health_say_fts5_answers failed). Now both say the
index cannot be read here because tantivy must write a lock file, and that FTS5 answers;
health counts it as no problem (every search is answered). Mounting needs root; elsewhere this
skips."""

from __future__ import annotations

import json
import os
import subprocess
from datetime import datetime, timedelta, timezone

import pytest

from jz_support import jezero_command, needs_plugin

pytestmark = [needs_plugin("jezero-connectors-claude"), needs_plugin("jezero-summarizers"),
              needs_plugin("jezero-index-tantivy")]


def cli(config, *args):
    return subprocess.run([*jezero_command(), "--config", str(config), *args], capture_output=True, text=True, timeout=120)


@pytest.fixture
def read_only(tmp_path):
    from jezero.demo import SessionSpec, Turn
    from jezero_connectors_claude.demo import write_claude

    if os.geteuid() != 0:
        pytest.skip("a read-only bind mount needs root")
    real, seen = tmp_path / "real", tmp_path / "seen"
    now = datetime.now(timezone.utc)
    for i in range(3):
        write_claude(real / "projects", SessionSpec("claude", "/home/dev/src/shop", now - timedelta(days=i + 1), [
            Turn("user", f"why does the invoice {i} rounding fail"), Turn("assistant", "the rounding is fixed")],
            id=f"00000000-0000-4000-8000-{i:012d}"))
    seen.mkdir()
    config = tmp_path / "config.toml"
    config.write_text(f'[storage]\npath = "{seen / "library.sqlite3"}"\n[ingest]\nsettle_minutes = 0\n'
                      '[search]\nengine = "tantivy"\n[summarizer]\nname = "offline"\n[[connectors]]\nname = "claude"\n'
                      f'type = "claude"\noptions = {{ path = "{seen / "projects"}" }}\n')
    bound = subprocess.run(["mount", "--bind", str(real), str(seen)], capture_output=True, text=True)
    if bound.returncode:
        pytest.skip(f"cannot bind-mount here: {bound.stderr.strip()}")
    try:
        assert cli(config, "run", "-q").returncode == 0
        made = subprocess.run(["mount", "-o", "remount,bind,ro", str(seen)], capture_output=True, text=True)
        if made.returncode:
            pytest.skip(f"cannot make the bind mount read-only: {made.stderr.strip()}")
        yield config
    finally:
        subprocess.run(["umount", "-l", str(seen)], capture_output=True)


def test_status_and_health_say_fts5_answers(read_only):
    config = read_only
    status = cli(config, "status")
    assert status.returncode == 0, status.stderr
    line = next(x for x in status.stdout.splitlines() if x.startswith("search engine"))
    assert "cannot be read here" in line and "lock file" in line and "Read-only file system" in line, line
    assert "fts5 answers every search" in line and "None)" not in line, line
    health = cli(config, "health")
    assert health.returncode == 0, health.stdout + health.stderr  # every search is answered: no problem
    assert "fts5 answers every search" in health.stdout and "lock file" in health.stdout, health.stdout
    report = json.loads(cli(config, "health", "--json").stdout)
    assert report["problems"] == [] and "fts5 answers" in report["search_engine"]
    found = cli(config, "search", "invoice rounding", "--json")
    assert found.returncode == 0 and len(json.loads(found.stdout)) == 3
