"""`jezero status` on a library this jezero did not write as it is: it reads (no migration, the
file unchanged) and says what matters. Before, it said nothing of either case below:

- a library of an older schema (here main's at e85cee8, schema 8): the next `jezero run`
  upgrades it; a library of a newer schema (a jezero downgraded): every run fails ("newer than
  this jezero knows") while status showed the connectors as never run, and `jezero health` as
  stale, "is the timer running?" (now a failing problem that says why);
- items stored under a source no connector of the config has any more (a connector removed or
  renamed): a renamed connector's next run stored every session again under its new name, and
  status counted only the new ones."""

from __future__ import annotations

import hashlib
import json
import shutil
import socket
import sqlite3
import subprocess
from pathlib import Path

import pytest

from jz_support import jezero_command, needs_plugin
from jezero.store.migrations import LATEST

pytestmark = needs_plugin("jezero-connectors-claude")  # the config names a claude connector

FIXTURE = Path(__file__).parent / "data" / "main-e85cee8-library.sqlite3"  # schema 8: 13 claude items, 1 codex


@pytest.fixture
def library(tmp_path):
    path = tmp_path / "library.sqlite3"
    shutil.copy(FIXTURE, path)
    config = tmp_path / "config.toml"
    config.write_text(f'[storage]\npath = "{path}"\n[summarizer]\nname = "offline"\n[[connectors]]\nname = "claude"\n'
                      f'type = "claude"\noptions = {{ path = "{tmp_path / "projects"}" }}\n')
    (tmp_path / "projects").mkdir()
    return path, config


def cli(config, *args):
    return subprocess.run([*jezero_command(), "--config", str(config), *args], capture_output=True, text=True,
                          timeout=120)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def version(path: Path) -> int:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return int(conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0])
    finally:
        conn.close()


def test_status_says_an_older_schema_is_upgraded_by_the_next_run_and_changes_nothing(library):
    path, config = library
    before = digest(path)
    shown = cli(config, "status")
    assert shown.returncode == 0, shown.stderr
    assert f"schema version 8 (this jezero's is {LATEST}): the next `jezero run` upgrades it" in shown.stdout
    assert digest(path) == before and version(path) == 8
    assert cli(config, "run").returncode == 0
    assert version(path) == LATEST and "schema version" not in cli(config, "status").stdout


def test_while_a_command_runs_status_says_it_is_the_one_upgrading(library):
    """A run upgrading the library now (its marker names a live process): status said the next
    run would upgrade it, under the line saying a run is running. A killed one's marker: the next."""
    path, config = library
    proc = subprocess.Popen(["sleep", "60"])
    try:
        stat = Path(f"/proc/{proc.pid}/stat").read_text()
        start = int(stat.rsplit(")", 1)[1].split()[19])
        Path(str(path) + ".running").write_text(json.dumps({
            "command": "jezero run", "pid": proc.pid, "host": socket.gethostname(), "process_start": start,
            "started_at": "2026-12-04T22:00:00+00:00"}))
        shown = cli(config, "status")
        assert shown.returncode == 0, shown.stderr
        assert f"`jezero run` is running (process {proc.pid}" in shown.stdout
        assert f"schema version 8 (this jezero's is {LATEST}): the command running now upgrades it" in shown.stdout
    finally:
        proc.kill()
        proc.wait()
    shown = cli(config, "status")
    assert "did not finish" in shown.stdout and "the next `jezero run` upgrades it" in shown.stdout, shown.stdout
    assert version(path) == 8


def test_status_says_a_newer_schema_stops_every_run(library):
    path, config = library
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(LATEST + 1),))
    conn.close()
    before = digest(path)
    shown = cli(config, "status")
    assert shown.returncode == 0, shown.stderr
    assert f"schema version {LATEST + 1}, newer than this jezero knows ({LATEST})" in shown.stdout
    assert "every run fails until jezero is upgraded" in shown.stdout
    ran = cli(config, "run")
    assert ran.returncode != 0 and "upgrade jezero" in ran.stderr and "Traceback" not in ran.stderr
    health = cli(config, "health", "--json")  # before: "stale: never run (is the timer running?)" alone
    assert health.returncode == 1, health.stderr
    [problem, *_] = json.loads(health.stdout)["problems"]
    assert problem["kind"] == "failing" and "newer than this jezero knows" in problem["detail"], problem
    assert digest(path) == before


def test_status_names_the_items_of_a_source_the_config_no_longer_has(library):
    path, config = library
    assert cli(config, "run").returncode == 0
    shown = cli(config, "status")
    assert "no connector of the config has (removed or renamed): codex (1)" in shown.stdout, shown.stdout
    config.write_text(config.read_text().replace('name = "claude"\n', 'name = "laptop"\n'))
    shown = cli(config, "status")
    assert "claude (13), codex (1)" in shown.stdout, shown.stdout
    assert cli(config, "status", "--json").returncode == 0  # --json: the connectors only, as before
