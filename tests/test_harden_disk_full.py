"""A disk that fills during `jezero run`, made for real: a small tmpfs under the library, or under
the tantivy index's folders alone. Nothing already stored may be lost or changed, the run says so
in one line (the library) or one warning (the derived index), and the next run once there is
room brings everything in, the index included. (A file-size limit standing in for a full disk,
with FTS5: test_faults.py.)

Mounting needs root (and a kernel that lets this process mount); elsewhere these tests skip."""

from __future__ import annotations

import os
import subprocess
from contextlib import suppress
from pathlib import Path

import pytest

from jezero.store import engines, open_readonly
from jz_support import jezero_command, needs_plugin
from test_harden_crash import assert_whole, segments
from test_ingest_crash import config as crash_config, make_specs, write_all

pytestmark = [needs_plugin("jezero-connectors-claude"), needs_plugin("jezero-connectors-codex"),
              needs_plugin("jezero-summarizers")]

SESSIONS = 12  # of make_specs(): half Claude Code, half Codex
BOUND = 120.0  # the most a run may take before the test calls it hung (before the fix: 60 s per write)


class Mounts:
    """tmpfs mounts made by a test, unmounted after it."""

    def __init__(self):
        self.made: list[Path] = []

    def tmpfs(self, where: Path, size: str) -> Path:
        if os.geteuid() != 0:
            pytest.skip("mounting a small tmpfs (a disk that fills) needs root")
        where.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(where)],
                              capture_output=True, text=True)
        if proc.returncode:
            pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.strip()}")
        self.made.append(where)
        return where

    @staticmethod
    def resize(where: Path, size: str) -> None:
        subprocess.run(["mount", "-o", f"remount,size={size}", str(where)], check=True, capture_output=True)

    def undo(self) -> None:
        for where in reversed(self.made):
            with suppress(Exception):
                subprocess.run(["umount", "-l", str(where)], capture_output=True)


@pytest.fixture
def mounts():
    made = Mounts()
    yield made
    made.undo()


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    """The sessions, written in two halves, and a clean FTS5 run over each state: (folder,
    segments after the first half, segments after both)."""
    folder = tmp_path_factory.mktemp("full")
    specs = make_specs(SESSIONS)
    write_all(folder / "first", specs[: SESSIONS // 2])
    write_all(folder / "both", specs)
    expected = {}
    for half in ("first", "both"):
        run(config(folder, f"ref-{half}", folder / half / f"ref-{half}.sqlite3", folder / half, "fts5"))
        expected[half] = segments(folder / half / f"ref-{half}.sqlite3")
    return folder, expected


def config(folder: Path, name: str, library: Path, sessions: Path, engine: str) -> Path:
    return crash_config(folder, sessions, name, library=library, engine=engine)


def run(config_path: Path, *, ok: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run([*jezero_command(), "--config", str(config_path), "run", "-q"], capture_output=True,
                          text=True, timeout=BOUND)
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    if ok:
        assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def fill(where: Path, leave_kb: int) -> Path:
    """A file taking all the free space of `where` but `leave_kb` KiB."""
    st = os.statvfs(where)
    free_kb = st.f_bavail * st.f_frsize // 1024
    filler = where / "filler"
    with open(filler, "wb") as f:
        f.write(b"\0" * max(0, free_kb - leave_kb) * 1024)
    return filler


def in_step(library: Path) -> int:
    """What the tantivy index lacked (0: it had every change), catching up once."""
    engines.forget()
    try:
        return engines.sync("tantivy", library)
    finally:
        engines.forget()


def test_a_full_disk_under_the_library_keeps_what_it_had_and_the_next_run_brings_the_rest(stores, mounts, tmp_path):
    """With tantivy, so that the library, its WAL and the index folders fill together."""
    pytest.importorskip("jezero_index_tantivy", reason="jezero-index-tantivy is not installed")
    folder, expected = stores
    disk = mounts.tmpfs(tmp_path / "disk", "20m")
    library = disk / "library.sqlite3"
    sessions = tmp_path / "sessions"
    write_all(sessions, make_specs(SESSIONS)[: SESSIONS // 2])
    cfg = config(tmp_path, "victim", library, sessions, "tantivy")
    run(cfg)
    before = segments(library)
    assert before == expected["first"]

    write_all(sessions, make_specs(SESSIONS))  # the other half arrives, and the disk is full
    filler = fill(disk, leave_kb=48)
    proc = run(cfg, ok=False)
    assert proc.returncode != 0
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and "no space left" in errors[0] and str(library) in errors[0], proc.stderr[-3000:]
    assert set(before) <= set(segments(library))  # nothing stored was lost or changed
    assert_whole(library)

    filler.unlink()  # room again
    mounts.resize(disk, "60m")
    run(cfg)
    assert segments(library) == expected["both"]
    assert_whole(library)
    assert in_step(library) == 0


def test_a_full_index_folder_costs_the_library_nothing_and_is_caught_up_when_space_returns(stores, mounts, tmp_path):
    """The index's folders on a disk of their own that fills: the library takes every session,
    the run says once per index that it fell behind (it waited 60 s per write before, for a
    writer that was not busy: the run hung for most of an hour), searches answer from FTS5
    meanwhile, and the next run with room (nothing new to write) brings the index in step."""
    pytest.importorskip("jezero_index_tantivy", reason="jezero-index-tantivy is not installed")
    from jezero_index_tantivy.index import folder_for
    from jezero_index_tantivy.messages import folder_for as messages_folder_for

    folder, expected = stores
    library = tmp_path / "lib" / "library.sqlite3"
    library.parent.mkdir(mode=0o700)
    small = [mounts.tmpfs(folder_for(library), "64k"), mounts.tmpfs(messages_folder_for(library), "64k")]
    cfg = config(tmp_path, "victim", library, folder / "both", "tantivy")
    proc = run(cfg)
    assert segments(library) == expected["both"]
    assert_whole(library)
    warned = [ln for ln in proc.stderr.splitlines() if "No space left" in ln or "not brought in step" in ln
              or "could not update" in ln]
    assert warned, proc.stderr[-3000:]
    assert len(warned) <= 4, "\n".join(warned)  # once per index (and the run's last sync), not once per write

    from jezero.config import SearchConfig
    from jezero.query import search

    with open_readonly(library) as conn:  # behind and unable to catch up: FTS5 answers, with everything
        engines.forget()
        hits = search(conn, "task 7", options=SearchConfig(engine="tantivy"), lanes=("items",), explain=True)
        assert hits and all(h["explain"]["candidates"] != "tantivy" for h in hits)
        engines.forget()

    for where in small:
        mounts.resize(where, "20m")
    run(cfg)  # nothing new to write
    assert in_step(library) == 0, "the run with room left the index behind"
