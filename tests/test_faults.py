"""Fault injection (issue 10): what an unlucky admin, a full disk, a damaged file or a hostile
line does to `jezero run`, `status` and `search`. Each case ends in a clear one-line error or a
warning, never a traceback, and the library keeps what it had.

Runs the real CLI in subprocesses on real files; the whole file takes a few seconds. The longer
soak is benchmarks/soak/."""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import subprocess
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from jz_support import jezero_command, needs_plugin
from jezero.demo import SessionSpec, Turn
from jezero.store import open_readonly


def write(spec, claude_projects, codex_home):
    """One made-up session in its agent's own format (the connectors' demo writers)."""
    from jezero_connectors_claude.demo import write_claude
    from jezero_connectors_codex.demo import write_codex

    return write_claude(claude_projects, spec) if spec.agent == "claude" else write_codex(codex_home, spec)

pytestmark = [needs_plugin("jezero-connectors-claude"), needs_plugin("jezero-connectors-codex"),
              needs_plugin("jezero-summarizers")]

T0 = datetime(2026, 2, 1, tzinfo=timezone.utc)


def specs(n: int, offset: int = 0) -> list[SessionSpec]:
    out = []
    for i in range(offset, offset + n):
        turns = [Turn("user", f"task {i}: make the invoice webhook retry on timeout"),
                 Turn("command", f"make test-{i}", "FAILED test_webhook - TimeoutError\n" * 5, failed=True),
                 Turn("assistant", f"Fixed step {i}: the webhook now retries with backoff.")]
        out.append(SessionSpec("claude" if i % 2 else "codex", f"/home/dev/src/p{i % 3}",
                               T0 + timedelta(hours=i), turns, id=f"00000000-0000-4000-8000-{i:012d}"))
    return out


class Setup:
    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.sessions = tmp / "sessions"
        self.library = tmp / "lib" / "library.sqlite3"
        self.config = tmp / "config.toml"
        self.config.write_text(f"""
[storage]
path = "{self.library}"
[ingest]
settle_minutes = 0
[[connectors]]
name = "claude"
type = "claude"
options = {{ path = "{self.sessions / 'claude' / 'projects'}" }}
[[connectors]]
name = "codex"
type = "codex"
options = {{ path = "{self.sessions / 'codex'}" }}
""")

    def add(self, n: int, offset: int = 0) -> None:
        for spec in specs(n, offset):
            write(spec, self.sessions / "claude" / "projects", self.sessions / "codex")

    def cli(self, *args: str, preexec=None, timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run([*jezero_command(), "--config", str(self.config), *args], capture_output=True,
                              text=True, timeout=timeout, preexec_fn=preexec)

    def items(self) -> list[tuple]:
        conn = open_readonly(self.library)
        try:
            return conn.execute("SELECT uid, content_hash, title FROM items ORDER BY uid").fetchall()
        finally:
            conn.close()


@pytest.fixture
def setup(tmp_path) -> Setup:
    return Setup(tmp_path)


def one_line_error(proc: subprocess.CompletedProcess, *words: str) -> str:
    assert proc.returncode != 0, proc.stdout
    assert "Traceback" not in proc.stderr and 'File "' not in proc.stderr, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1, proc.stderr
    for w in words:
        assert w in lines[0], lines[0]
    return lines[0]


# -- a damaged library ---------------------------------------------------------------------------


@pytest.mark.parametrize("damage", ["not_sqlite", "pages"])
def test_a_damaged_library_is_one_line_with_the_way_back(setup, damage):
    setup.add(4)
    assert setup.cli("run", "-q").returncode == 0
    if damage == "not_sqlite":
        setup.library.write_bytes(b"this is not a database, it is a note\n" * 200)
        for suffix in ("-wal", "-shm"):
            Path(str(setup.library) + suffix).unlink(missing_ok=True)
    else:
        assert setup.cli("status").returncode == 0  # checkpoint the WAL into the file
        data = bytearray(setup.library.read_bytes())
        page = 4096
        for at in range(page * 2, len(data), page * 3):  # scribble over every third page's header
            data[at:at + 64] = b"\xa5" * 64
        setup.library.write_bytes(bytes(data))
        for suffix in ("-wal", "-shm"):
            Path(str(setup.library) + suffix).unlink(missing_ok=True)
    before = setup.library.read_bytes()
    for args in (["run"], ["status"], ["search", "webhook"]):
        proc = setup.cli(*args)
        line = one_line_error(proc, "damaged", "move the file aside")
        assert str(setup.library) in line
    assert setup.library.read_bytes() == before  # nothing "repaired" in place


# -- a library nobody may write --------------------------------------------------------------------


def _make_read_only(path: Path) -> list[Path]:
    """Read-only even for root (these tests may run as root): the immutable attribute where the
    file system has it, else plain permissions for an ordinary user."""
    targets = [path, path.parent]
    if os.geteuid() != 0:
        for t in targets:
            t.chmod(0o555 if t.is_dir() else 0o444)
        return []
    chattr = shutil.which("chattr")
    if chattr is None or subprocess.run([chattr, "+i", *map(str, targets)], capture_output=True).returncode:
        pytest.skip("running as root on a file system without chattr +i: cannot make a file read-only")
    return targets


def test_a_read_only_library_is_one_line_and_unchanged(setup):
    setup.add(3)
    assert setup.cli("run", "-q").returncode == 0
    assert setup.cli("status").returncode == 0
    for suffix in ("-wal", "-shm"):
        Path(str(setup.library) + suffix).unlink(missing_ok=True)
    before = setup.items()
    setup.add(3, offset=3)  # new work to write
    locked = _make_read_only(setup.library)
    try:
        proc = setup.cli("run")
        one_line_error(proc, str(setup.library))
        assert "read-only" in proc.stderr or "cannot write" in proc.stderr
    finally:
        if locked:
            subprocess.run(["chattr", "-i", *map(str, locked)], check=True)
        else:
            setup.library.parent.chmod(0o700)
            setup.library.chmod(0o600)
    assert setup.items() == before
    assert setup.cli("run", "-q").returncode == 0  # writable again: the new sessions come in
    assert len(setup.items()) > len(before)


# -- a full disk -------------------------------------------------------------------------------


def test_a_full_disk_mid_run_keeps_what_was_written(setup):
    """A file-size limit on the run stands in for a full disk: SQLite's writes fail past it, as
    they do with ENOSPC. Then a run with room finishes the job."""
    setup.add(2)
    assert setup.cli("run", "-q").returncode == 0
    before = setup.items()
    size = max(p.stat().st_size for p in setup.library.parent.iterdir())
    setup.add(60, offset=2)

    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a failed write, not a killed process
        resource.setrlimit(resource.RLIMIT_FSIZE, (size + 4096 * 8, size + 4096 * 8))

    proc = setup.cli("run", preexec=limit)
    if proc.returncode != 0:
        one_line_error(proc)
    mid = setup.items()
    assert set(before) <= set(mid)
    assert setup.cli("run", "-q").returncode == 0
    after = setup.items()
    assert set(mid) <= set(after) and len(after) >= 62
    conn = open_readonly(setup.library)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


# -- the run lock ------------------------------------------------------------------------------------


def test_a_held_lock_refuses_a_second_run_in_one_line(setup):
    from filelock import FileLock

    setup.add(2)
    setup.library.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(setup.library) + ".lock")
    with lock:
        proc = setup.cli("run")
        one_line_error(proc, "holds")
        assert proc.returncode == 3
    assert setup.cli("run", "-q").returncode == 0


# -- kill during a run ---------------------------------------------------------------------------------


def test_kill_during_run_then_a_clean_run_leaves_a_whole_library(setup):
    setup.add(40)
    wal = Path(str(setup.library) + "-wal")
    for delay in (0.0, 0.15, 0.4):
        proc = subprocess.Popen([*jezero_command(), "--config", str(setup.config), "run", "-q"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while proc.poll() is None and not wal.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(delay)
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)
    assert setup.cli("run", "-q").returncode == 0
    conn = open_readonly(setup.library)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    n = conn.execute("SELECT count(*) FROM items").fetchone()[0]
    assert n == conn.execute("SELECT count(*) FROM items_fts").fetchone()[0]
    assert n == len({u for u, *_ in setup.items()})
    sessions = conn.execute("SELECT count(DISTINCT source || session_id) FROM items").fetchone()[0]
    assert sessions == 40


# -- huge and binary lines, files vanishing --------------------------------------------------------


def test_huge_and_binary_lines_are_skipped_or_clipped_never_fatal(setup):
    import random

    setup.add(4)
    rng = random.Random(5)
    junk = bytes(rng.randrange(256) for _ in range(200_000)).replace(b"\n", b"")
    for path in [*setup.sessions.rglob("*.jsonl")]:
        with path.open("ab") as f:
            f.write(junk + b"\n")  # binary garbage: NULs, invalid UTF-8
            f.write(b"\x00" * 1000 + b"\n")
    huge = "y" * 20_000_000  # one 20 MB line that is valid JSON
    spec = specs(1, offset=9)[0]
    spec.turns.append(Turn("user", "paste: " + huge))
    write(spec, setup.sessions / "claude" / "projects", setup.sessions / "codex")
    proc = setup.cli("run", "--json")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    reports = json.loads(proc.stdout)
    assert sum(r["items_written"] for r in reports) >= 5
    assert any("not a JSON object" in w for r in reports for w in r["warnings"])
    conn = open_readonly(setup.library)
    longest = conn.execute("SELECT max(length(original)) FROM items").fetchone()[0]
    assert longest <= 70_000  # the 20 MB paste was cut to fit one segment
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_files_vanishing_mid_run_are_warned_and_the_rest_ingested(setup, monkeypatch):
    """Every other transcript is removed between the store's walk and its read (retention,
    archiving): each connector says which, and ingests the others."""
    from jezero.config import load
    from jezero.ingest.runner import run_connectors
    from jezero_connectors_claude import connector as claude
    from jezero_connectors_codex import store as codex_store

    setup.add(8)
    removed: list[str] = []

    def vanish_every_other(real):
        def wrapper(ref_or_path, *args, **kwargs):
            path = Path(getattr(ref_or_path, "path", ref_or_path))
            if path.exists() and int(path.stem[-1]) % 2 == 0 and str(path) not in removed:
                path.unlink()
                removed.append(str(path))
            return real(ref_or_path, *args, **kwargs)
        return wrapper

    monkeypatch.setattr(claude, "read_transcript", vanish_every_other(claude.read_transcript))
    monkeypatch.setattr(codex_store, "complete_lines_digest", vanish_every_other(codex_store.complete_lines_digest))
    reports = run_connectors(load(setup.config))
    assert removed and all(r.error is None for r in reports)
    warned = [w for r in reports for w in r.warnings]
    assert all("removed while the run was reading" in w for w in warned)
    assert sorted(removed) == sorted(w.removeprefix("codex: ").split(": ")[0] for w in warned)
    assert sum(r.items_written for r in reports) == 8 - len(removed)
