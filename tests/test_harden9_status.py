"""`jezero status` reads: a library on a read-only mount (a snapshot, a backup mounted to look
something up) is shown as it is, and a library that is not there yet is not made by looking. It
says when a run is under way, and when one was killed before it ended.

Before: status opened the library as its writer, so on a read-only mount it failed with
"cannot write the library" although it writes nothing, and on a fresh config it created an empty
library (and chmod-ed its folder) as a side effect of looking."""

from __future__ import annotations

import json
import os
import socket
import subprocess

import pytest

from device_support import wait_for
from jz_support import jezero_command, needs_plugin
from test_harden_read_only import cli, read_only  # noqa: F401 (the fixture)

pytestmark = [needs_plugin("jezero-connectors-claude"), needs_plugin("jezero-summarizers")]


def test_status_reads_a_library_on_a_read_only_mount(read_only):  # noqa: F811
    config, library = read_only
    before = (library.stat().st_size, library.stat().st_mtime_ns)
    shown = cli(config, "status", "--json")
    assert shown.returncode == 0, shown.stderr
    [row] = json.loads(shown.stdout)
    assert row["name"] == "claude" and row["items"] == 4 and row["last_success_at"]
    table = cli(config, "status")
    assert table.returncode == 0 and "claude" in table.stdout and "search engine" in table.stdout, table.stderr
    assert (library.stat().st_size, library.stat().st_mtime_ns) == before


def test_status_of_a_library_not_made_yet_makes_none(tmp_path):
    library = tmp_path / "data" / "library.sqlite3"
    config = tmp_path / "config.toml"
    config.write_text(f'[storage]\npath = "{library}"\n[summarizer]\nname = "offline"\n[[connectors]]\n'
                      f'name = "claude"\ntype = "claude"\noptions = {{ path = "{tmp_path / "projects"}" }}\n')
    shown = subprocess.run([*jezero_command(), "--config", str(config), "status", "--json"], capture_output=True,
                           text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout) == [{"name": "claude", "type": "claude", "enabled": True, "items": 0,
                                         "last_run_at": None, "last_success_at": None, "last_error": None,
                                         "warnings": 0}]
    assert not library.exists() and not library.parent.exists()
    table = subprocess.run([*jezero_command(), "--config", str(config), "status"], capture_output=True, text=True,
                           timeout=120)
    assert table.returncode == 0 and "no library" in table.stdout, table.stdout + table.stderr
    assert not library.exists()


@pytest.fixture
def crash_stores(tmp_path):
    from test_harden_crash import config as crash_config
    from test_ingest_crash import make_specs, write_all

    write_all(tmp_path / "stores", make_specs(24))
    roots = [("gen-claude", "claude", tmp_path / "stores" / "claude" / "projects"),
             ("gen-codex", "codex", tmp_path / "stores" / "codex")]
    return crash_config(tmp_path, "victim", roots, "fts5"), tmp_path / "victim.sqlite3"


@needs_plugin("jezero-connectors-codex")
def test_status_says_a_run_was_killed_and_stops_saying_it_after_a_whole_run(crash_stores):
    """Before: a run killed mid-way recorded nothing, and status showed the run before it as the
    last one (or "never"), with more items than that run wrote and no word of the killed one."""
    from test_harden_crash import kill_when, run_whole, sessions_stored, start

    config, library = crash_stores
    proc = start(config)
    assert kill_when(proc, lambda: sessions_stored(library) >= 3), "the run ended before it could be killed"
    proc.wait(timeout=60)
    shown = cli(config, "status")
    assert shown.returncode == 0, shown.stderr
    assert "`jezero run` started at" in shown.stdout and "did not finish (killed" in shown.stdout, shown.stdout
    run_whole(config)
    shown = cli(config, "status")
    assert shown.returncode == 0 and "did not finish" not in shown.stdout and "is running" not in shown.stdout


@needs_plugin("jezero-connectors-codex")
def test_status_says_a_run_is_running_while_it_runs(crash_stores):
    from jezero import config as config_mod
    from jezero.ingest.runner import unfinished_run
    from test_harden_crash import sessions_stored, start

    config, library = crash_stores
    loaded = config_mod.load(config)
    proc = start(config)
    try:
        wait_for(lambda: sessions_stored(library) >= 1 or proc.poll() is not None, bound=120, every=0.01)
        said = unfinished_run(loaded)
    finally:
        proc.wait(timeout=120)
    if said is None and proc.returncode == 0:
        pytest.skip("the run ended before it could be looked at")
    assert said == f"`jezero run` is running (process {proc.pid}, since {said.split('since ')[1]}", said
    assert unfinished_run(loaded) is None and "is running" not in cli(config, "status").stdout


@pytest.mark.parametrize("command", [["status"], ["search", "x"], ["health"], ["recall", "x"]])
def test_a_library_file_that_is_empty_is_one_line_and_stays_empty(tmp_path, command):
    """An empty file where the library should be (`touch`, a copy cut short). Before: status made it
    a library (it opened the writer); with status reading, it and every other reader failed with
    an SQLError traceback ("no such table")."""
    library = tmp_path / "library.sqlite3"
    library.write_bytes(b"")
    config = tmp_path / "config.toml"
    config.write_text(f'[storage]\npath = "{library}"\n[summarizer]\nname = "offline"\n[[connectors]]\n'
                      f'name = "claude"\ntype = "claude"\noptions = {{ path = "{tmp_path / "projects"}" }}\n')
    ran = cli(config, *command)
    assert "Traceback" not in ran.stderr, ran.stderr[-2000:]
    if command == ["status"]:
        assert ran.returncode == 0 and "claude" in ran.stdout
    elif command[0] == "recall":  # (it says so itself)
        assert ran.returncode == 0 and "no messages index yet" in ran.stdout
    else:
        assert ran.returncode != 0 and "empty or not a Jezero library" in ran.stderr, ran.stderr
    assert library.stat().st_size == 0


def test_the_server_over_an_empty_library_file_says_so(tmp_path):
    library = tmp_path / "library.sqlite3"
    library.write_bytes(b"")
    config = tmp_path / "config.toml"
    config.write_text(f'[storage]\npath = "{library}"\n')
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        *({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": name, "arguments": args}}
          for i, (name, args) in enumerate([("search", {"query": "x"}), ("timeline", {"project": "p"}),
                                            ("get_item", {"item_id": 1})], start=2)),
    ]
    served = subprocess.run([*jezero_command(), "--config", str(config), "serve", "--transport", "stdio"],
                            input="".join(json.dumps(r) + "\n" for r in requests), capture_output=True, text=True,
                            timeout=120)
    answers = {a.get("id"): a for a in map(json.loads, served.stdout.splitlines())}
    for i in (2, 3, 4):
        text = answers[i]["result"]["content"][0]["text"]
        assert answers[i]["result"]["isError"] and "empty: nothing has been ingested" in text, text
    assert "Traceback" not in served.stderr and library.stat().st_size == 0


def test_warnings_are_listed_from_a_library_on_a_read_only_mount(read_only):  # noqa: F811
    """Before: `jezero warnings` opened the writer to list them, and failed there."""
    config, library = read_only
    before = (library.stat().st_size, library.stat().st_mtime_ns)
    for args in (["warnings"], ["warnings", "--all", "--json"]):
        shown = cli(config, *args)
        assert shown.returncode == 0 and "Traceback" not in shown.stderr, shown.stderr
    assert json.loads(cli(config, "warnings", "--json").stdout) == []
    assert (library.stat().st_size, library.stat().st_mtime_ns) == before


@pytest.mark.skipif(not os.path.exists(f"/proc/{os.getpid()}/stat"), reason="no /proc: the pid alone is checked")
def test_a_killed_runs_pid_reused_by_another_process_is_not_a_running_run(tmp_path):
    """The marker of a killed run names its pid; days later another process may have that pid, and
    status said the run "is running" until the next run. The process's start time is kept beside
    the pid: another process of that number is not the run."""
    from jezero import config as config_mod
    from jezero.ingest import runner

    path = tmp_path / "config.toml"
    path.write_text(f'[storage]\npath = "{tmp_path / "lib.sqlite3"}"\n')
    cfg = config_mod.load(path)
    marker = runner._marker(cfg)
    alive = os.getpid()  # a process that is there, with its own start time
    mine = runner._process_start(alive)
    assert isinstance(mine, int)
    for start, said in ((mine, "is running"), (mine + 1, "did not finish (killed")):
        marker.write_text(json.dumps({"command": "jezero run", "pid": alive, "host": socket.gethostname(),
                                      "process_start": start, "started_at": "2026-12-01T00:00:00+00:00"}))
        assert said in runner.unfinished_run(cfg)


def test_retag_dry_run_reads_a_library_on_a_read_only_mount(read_only):  # noqa: F811
    """Before (small9): `retag --dry-run` opened the writer, and failed there; a dry run only reads."""
    config, library = read_only
    before = (library.stat().st_size, library.stat().st_mtime_ns)
    shown = cli(config, "retag", "--dry-run", "--json")
    assert shown.returncode == 0 and "Traceback" not in shown.stderr, shown.stderr
    assert json.loads(shown.stdout) == {"items": 4, "changed": 0}
    told = cli(config, "retag", "--dry-run")
    assert told.returncode == 0 and "4 item(s) checked, 0 would change" in told.stdout, told.stderr
    assert (library.stat().st_size, library.stat().st_mtime_ns) == before


def test_retag_dry_run_of_a_library_not_made_yet_makes_none(tmp_path):
    library = tmp_path / "data" / "library.sqlite3"
    config = tmp_path / "config.toml"
    config.write_text(f'[storage]\npath = "{library}"\n[summarizer]\nname = "offline"\n[[connectors]]\n'
                      f'name = "claude"\ntype = "claude"\noptions = {{ path = "{tmp_path / "projects"}" }}\n')
    shown = subprocess.run([*jezero_command(), "--config", str(config), "retag", "--dry-run", "--json"],
                           capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout) == {"items": 0, "changed": 0}
    assert not library.exists() and not library.parent.exists()
