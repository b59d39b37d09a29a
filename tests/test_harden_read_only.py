"""A library in a folder this process cannot write: a read-only bind mount of the folder a run
filled (a shared copy, a snapshot, a backup mounted to look something up). Readers (`jezero
search`, `recall`, `show`, the MCP server over stdio) answer from it; `jezero run` says in one line
that it cannot write, and nothing changes.

Before: SQLite reads a WAL library only with its `-shm` file beside it, which it could not make
there, so every reader failed with "cannot write the library ... (unable to open database file)"
although it writes nothing. Mounting needs root (and a kernel that lets this process mount);
elsewhere these tests skip."""

from __future__ import annotations

import json
import os
import subprocess
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from jz_support import jezero_command, needs_plugin
from jezero.demo import SessionSpec, Turn
from jezero.store import open_readonly

pytestmark = [needs_plugin("jezero-connectors-claude"), needs_plugin("jezero-summarizers")]


@pytest.fixture
def read_only(tmp_path):
    """A library filled by a run, then its folder seen through a read-only bind mount: (config, library)."""
    with mounted(tmp_path) as found:
        yield found


@contextmanager
def mounted(tmp_path, search: str = ""):
    """read_only's library, its config with `search` (a `[search]` table) added."""
    from jezero_connectors_claude.demo import write_claude

    if os.geteuid() != 0:
        pytest.skip("a read-only bind mount needs root")
    real, seen = tmp_path / "real", tmp_path / "seen"
    now = datetime.now(timezone.utc)
    for i in range(4):
        write_claude(real / "projects", SessionSpec("claude", "/home/dev/src/shop", now - timedelta(days=i + 1), [
            Turn("user", f"why does the invoice {i} rounding fail"), Turn("assistant", "the rounding is fixed"),
            Turn("command", "make test", "all 12 tests passed")], id=f"00000000-0000-4000-8000-{i:012d}"))
    seen.mkdir()
    config = tmp_path / "config.toml"
    config.write_text(f'[storage]\npath = "{seen / "library.sqlite3"}"\n[ingest]\nsettle_minutes = 0\n{search}'
                      f'[summarizer]\nname = "offline"\n[[connectors]]\nname = "claude"\ntype = "claude"\n'
                      f'options = {{ path = "{seen / "projects"}" }}\n')
    bound = subprocess.run(["mount", "--bind", str(real), str(seen)], capture_output=True, text=True)
    if bound.returncode:
        pytest.skip(f"cannot bind-mount here: {bound.stderr.strip()}")
    try:
        assert cli(config, "run", "-q").returncode == 0
        write_claude(real / "projects", SessionSpec("claude", "/home/dev/src/shop", now - timedelta(hours=3), [
            Turn("user", "a new session the read-only library cannot take"), Turn("assistant", "ok")]))
        made = subprocess.run(["mount", "-o", "remount,bind,ro", str(seen)], capture_output=True, text=True)
        if made.returncode:
            pytest.skip(f"cannot make the bind mount read-only: {made.stderr.strip()}")
        assert not Path(f"{seen / 'library.sqlite3'}-wal").exists()  # the run's writer closed cleanly
        yield config, seen / "library.sqlite3"
    finally:
        subprocess.run(["umount", "-l", str(seen)], capture_output=True)


def cli(config, *args, stdin=None):
    return subprocess.run([*jezero_command(), "--config", str(config), *args], capture_output=True, text=True,
                          timeout=120, input=stdin)


def test_readers_answer_from_a_library_in_a_read_only_folder(read_only):
    config, library = read_only
    before = (library.stat().st_size, library.stat().st_mtime_ns)
    found = cli(config, "search", "invoice rounding", "--json")
    assert found.returncode == 0, found.stderr
    assert len(json.loads(found.stdout)) == 4
    recalled = cli(config, "recall", "rounding")
    assert recalled.returncode == 0 and "rounding" in recalled.stdout, recalled.stderr
    assert cli(config, "show", "1").returncode == 0
    conn = open_readonly(library)
    assert conn.execute("SELECT count(*) FROM items").fetchone() == (4,)
    conn.close()

    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "search", "arguments": {"query": "invoice rounding"}}},
    ]
    served = cli(config, "serve", "--transport", "stdio", stdin="".join(json.dumps(r) + "\n" for r in requests))
    answers = {a.get("id"): a for a in map(json.loads, served.stdout.splitlines())}
    assert "result" in answers[2] and not answers[2]["result"].get("isError"), served.stdout[-2000:]
    assert len(json.loads(answers[2]["result"]["content"][0]["text"])["items"]) == 4

    ran = cli(config, "run")  # a writer still cannot write there: one line, nothing changed
    assert ran.returncode != 0 and "Traceback" not in ran.stderr and "cannot write" in ran.stderr, ran.stderr
    assert (library.stat().st_size, library.stat().st_mtime_ns) == before


def test_a_folder_only_this_user_cannot_write_is_not_read_as_immutable(tmp_path, monkeypatch):
    """Another user's `jezero run` may write a library this user can only read: immutable, its
    reader would answer from pages that changed under it. Only a read-only mount is immutable."""
    from jezero import store

    library = tmp_path / "library.sqlite3"
    library.write_bytes(b"")
    monkeypatch.setattr(os, "access", lambda path, mode: False)  # as a folder of another user's
    assert store._open_in_read_only_folder(library) is None
