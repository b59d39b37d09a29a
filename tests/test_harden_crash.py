"""`jezero run` killed with SIGKILL at seeded points of its progress, on both index engines, over
the connectors' real samples (shared/samples, where present) and generated sessions: after every
kill the library passes SQLite's integrity check, its items, their FTS index and the messages
layer agree, and no segment is stored twice; after a last whole run it holds what one clean run
holds and answers a few searches the same. The points are chosen by watching the library fill
(kill once it holds N sessions), not by sleeping, so a slow machine kills at the same places.
(Kills at random moments of a longer run, with sessions growing between runs: test_ingest_crash.py,
marked slow.)"""

from __future__ import annotations

import random
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import apsw
import pytest

from device_support import wait_for
from jezero import plugins
from jezero.config import SearchConfig
from jezero.query import search
from jezero.store import engines, open_readonly
from jezero.store.migrations import LATEST, current_version
from jz_support import SAMPLES, jezero_command, needs_plugin
from test_ingest_crash import assert_messages_in_step, make_specs, write_all
from test_query_engines import engine  # noqa: F401  (the parametrised fixture: fts5, tantivy)

pytestmark = [needs_plugin("jezero-connectors-claude"), needs_plugin("jezero-connectors-codex"),
              needs_plugin("jezero-summarizers")]

# connector type -> the sample store laid out for it, under shared/samples
SAMPLE_STORES = {"claude": "claude", "codex": "codex", "gemini": "newest/gemini", "copilot": "newest/copilot",
                 "opencode": "newest/opencode"}
GENERATED = 24  # sessions of make_specs(): half Claude Code, half Codex
KILLS = 4  # per engine: one as the library appears, three once it holds a seeded number of sessions
QUERIES = ["deploy webhook", "postgres schema retry", "invoice refund token", "docker cache", "task 7"]
BOUND = 120.0  # the most a run may take before the test calls it hung


def lay_out(folder: Path) -> list[tuple[str, str, Path]]:
    """The stores the runs read, as (connector name, type, path): the generated sessions, and
    each sample store whose connector type is installed."""
    write_all(folder, make_specs(GENERATED))
    roots = [("gen-claude", "claude", folder / "claude" / "projects"), ("gen-codex", "codex", folder / "codex")]
    if SAMPLES.is_dir():
        types = plugins.connector_types()
        for ctype, store in SAMPLE_STORES.items():
            if ctype in types and types[ctype].build is not None:
                shutil.copytree(SAMPLES / store, folder / "samples" / ctype)
                path = folder / "samples" / ctype
                roots.append((f"sample-{ctype}", ctype, path / "projects" if ctype == "claude" else path))
    return roots


def config(folder: Path, name: str, roots, engine: str) -> Path:
    path = folder / f"{name}.toml"
    blocks = [f'[storage]\npath = "{folder / (name + ".sqlite3")}"\n[search]\nengine = "{engine}"\n'
              "[ingest]\nsettle_minutes = 0\nmax_input_chars = 8000\n"]
    blocks += [f'[[connectors]]\nname = "{cname}"\ntype = "{ctype}"\noptions = {{ path = "{root}" }}\n'
               for cname, ctype, root in roots]
    path.write_text("\n".join(blocks))
    return path


def start(config_path: Path) -> subprocess.Popen:
    return subprocess.Popen([*jezero_command(), "--config", str(config_path), "run", "-q"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def run_whole(config_path: Path) -> None:
    proc = subprocess.run([*jezero_command(), "--config", str(config_path), "run", "-q"], capture_output=True,
                          timeout=BOUND)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]


def sessions_stored(library: Path) -> int:
    """How many sessions the library holds, as a reader sees it now (0 before it has items)."""
    if not library.exists():
        return 0
    try:
        with open_readonly(library) as conn:
            return conn.execute("SELECT count(*) FROM (SELECT DISTINCT source, session_id FROM items)").fetchone()[0]
    except apsw.Error:  # still being created
        return 0


def kill_when(proc: subprocess.Popen, ready) -> bool:
    """SIGKILL `proc` once `ready()` is true; False if the run had finished before that."""
    wait_for(lambda: ready() or proc.poll() is not None, bound=BOUND, every=0.01)
    if proc.poll() is not None:
        return False
    proc.send_signal(signal.SIGKILL)
    return True


def segments(library: Path) -> list[tuple]:
    with open_readonly(library) as conn:
        return conn.execute("SELECT uid, source, session_id, segment_index, content_hash, title FROM items "
                            "ORDER BY uid").fetchall()


def assert_whole(library: Path) -> None:
    """What a kill must never leave: a damaged file, items and their FTS rows or their messages
    out of step, a segment stored twice."""
    with open_readonly(library) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        if current_version(conn) < LATEST:
            return  # killed between two of a new library's migrations (each whole): the next run goes on
        items = conn.execute("SELECT count(*) FROM items").fetchone()[0]
        assert conn.execute("SELECT count(*) FROM items_fts").fetchone()[0] == items
        assert conn.execute("SELECT count(*) FROM items i JOIN items_fts f ON f.rowid = i.id").fetchone()[0] == items
        assert conn.execute("SELECT count(*) FROM (SELECT DISTINCT source, session_id, segment_index FROM items)"
                            ).fetchone()[0] == items
    assert_messages_in_step(library)


def answers(library: Path, engine: str) -> dict[str, list[tuple]]:
    """Each query's hits as (source, session, title), answered by `engine` (its index brought
    in step first, as the run's end would)."""
    engines.forget()
    if engine != "fts5":
        engines.sync(engine, library)
    found = {}
    with open_readonly(library) as conn:
        for query in QUERIES:
            hits = search(conn, query, options=SearchConfig(engine=engine), lanes=("items",), explain=True)
            if engine != "fts5":
                assert all(h["explain"]["candidates"] == engine for h in hits), query
            found[query] = [(h["source"], h["session_id"], h["title"]) for h in hits]
    engines.forget()
    return found


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The stores, and one clean run over them: (folder, stores, its library)."""
    folder = tmp_path_factory.mktemp("crash")
    roots = lay_out(folder / "stores")
    run_whole(config(folder, "reference", roots, "fts5"))
    return folder, roots, folder / "reference.sqlite3"


def test_sigkill_during_a_run_loses_nothing_and_stores_nothing_twice(reference, engine):  # noqa: F811
    folder, roots, clean = reference
    expected = segments(clean)
    total = len({(source, session) for _, source, session, *_ in expected})
    victim = config(folder, f"victim-{engine}", roots, engine)
    library = folder / f"victim-{engine}.sqlite3"
    rng = random.Random(13)
    points = [0, *sorted(rng.sample(range(1, total), KILLS - 1))]
    killed = 0
    for held in points:
        proc = start(victim)
        # 0: as soon as the library file appears (its schema being written); else once it holds `held` sessions
        ready = (lambda: library.exists()) if held == 0 else (lambda: sessions_stored(library) >= held)
        killed += kill_when(proc, ready)
        _, err = proc.communicate(timeout=BOUND)
        assert b"Traceback" not in err, err.decode()[-2000:]
        if library.exists():
            assert_whole(library)
    assert killed >= KILLS - 1, f"only {killed} of {KILLS} runs were still running at their point"

    run_whole(victim)
    assert_whole(library)
    assert segments(library) == expected
    assert answers(library, "fts5") == answers(clean, "fts5")
    if engine != "fts5":
        assert engines.sync(engine, library) == 0, "the run left its index behind the library"
        answers(library, engine)  # answered by the index the runs wrote, not by FTS5
        # Built over the years by one write after another, tantivy's index scores by statistics
        # that still count replaced documents until its segments merge: a clean run's index and
        # the same library's index built at once rank near-ties differently (seen without any
        # kill). Rebuilt, the two libraries' indexes must answer alike.
        engines.sync(engine, library, rebuild=True)
        assert answers(library, engine) == answers(clean, engine)


# A process that creates a library and is killed (SIGKILL) right after SQLite's first write to a
# library file while its rollback journal is beside it: the moment a new file turns to WAL.
KILLED_AT_THE_FIRST_PAGE = """
import os, signal, sys
import apsw

BASE = apsw.vfs_names()[0]  # the platform's own (the first is the default)

class Killing(apsw.VFS):
    def __init__(self):
        super().__init__("killing", BASE, makedefault=True)

    def xOpen(self, name, flags):
        return KillingFile(name, flags)

class KillingFile(apsw.VFSFile):
    def __init__(self, name, flags):
        self.path = name if isinstance(name, str) else name.filename()
        self.main = bool(flags[0] & apsw.SQLITE_OPEN_MAIN_DB)
        super().__init__(BASE, name, flags)

    def xWrite(self, data, offset):
        super().xWrite(data, offset)
        if self.main and os.path.exists(self.path + "-journal"):
            os.kill(os.getpid(), signal.SIGKILL)

vfs = Killing()
from jezero.store import Store
Store(sys.argv[1])
"""


def test_a_library_killed_as_it_is_created_is_readable_or_absent(tmp_path):
    """Killed while its new file turned to WAL, a library was left with a hot journal that only a
    writer may roll back: every reader failed ("attempt to write a readonly database") until the
    next run. Now the file is made aside and put in place whole."""
    library = tmp_path / "library.sqlite3"
    proc = subprocess.run([sys.executable, "-c", KILLED_AT_THE_FIRST_PAGE, str(library)], capture_output=True,
                          timeout=BOUND)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()[-2000:]
    if library.exists():
        with open_readonly(library) as conn:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    from jezero.store import Store

    with Store(library):
        pass
    with open_readonly(library) as conn:
        assert conn.execute("SELECT count(*) FROM items").fetchone() == (0,)


def test_a_library_is_made_where_the_file_system_has_no_hard_links(tmp_path, monkeypatch):
    """Where a link is refused (a file system without hard links), the new file is moved into
    place instead: the library is made, in WAL mode, only its owner able to read it, and nothing
    is left beside it."""
    import os

    from jezero.store import Store

    def no_links(src, dst):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    library = tmp_path / "library.sqlite3"
    with Store(library):
        pass
    assert library.stat().st_mode & 0o777 == 0o600
    with open_readonly(library) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert conn.execute("SELECT count(*) FROM items").fetchone() == (0,)
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".new")] == []
