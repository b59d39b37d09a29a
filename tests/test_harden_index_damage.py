"""The tantivy index damaged or removed between runs or while a reader has it open: files deleted,
cut short, a meta.json that does not parse, the whole folder gone. Search never fails and never
answers from a state the library did not have (FTS5 answers until the index is whole again),
`jezero status` says what is wrong, and the next `jezero run` (or `jezero reindex`) rebuilds it.

Before: a damaged index stayed damaged. Every search fell back to FTS5 after a failed open,
`jezero run` warned "could not update its index; `jezero reindex` rebuilds it", and `jezero
reindex` failed on the same error: only deleting the folder by hand helped."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from jezero.config import SearchConfig
from jezero.query import search
from jezero.store import engines, open_readonly
from jz_support import jezero_command, needs_plugin
from test_ingest_crash import config as crash_config, make_specs, write_all

pytestmark = [needs_plugin("jezero-connectors-claude"), needs_plugin("jezero-connectors-codex"),
              needs_plugin("jezero-summarizers"),
              pytest.mark.skipif(not __import__("importlib").util.find_spec("jezero_index_tantivy"),
                                 reason="jezero-index-tantivy is not installed")]

SESSIONS = 8
QUERIES = ["deploy webhook", "postgres schema retry", "task 3", "docker cache"]


def config(folder: Path, sessions: Path) -> Path:
    return crash_config(folder, sessions, "config", library=folder / "library.sqlite3", engine="tantivy")


def cli(cfg: Path, *args: str) -> subprocess.CompletedProcess:
    proc = subprocess.run([*jezero_command(), "--config", str(cfg), *args], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    return proc


def answers(library: Path, engine: str) -> tuple[dict, set]:
    """Each query's hit ids, and which engines found the candidates, in a fresh reader."""
    engines.forget()
    try:
        return ask(library, engine)
    finally:
        engines.forget()


def ask(library: Path, engine: str) -> tuple[dict, set]:
    found, by = {}, set()
    with open_readonly(library) as conn:
        for query in QUERIES:
            hits = search(conn, query, options=SearchConfig(engine=engine), lanes=("items",), explain=True)
            found[query] = [h["id"] for h in hits]
            by |= {h["explain"]["candidates"] for h in hits}
    return found, by


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A library and its tantivy indexes made by `jezero run`, and the answers of FTS5 and of the
    index rebuilt at once (what a repaired index answers)."""
    folder = tmp_path_factory.mktemp("damage")
    write_all(folder / "sessions", make_specs(SESSIONS))
    cli(config(folder, folder / "sessions"), "run", "-q")
    library = folder / "library.sqlite3"
    engines.sync("tantivy", library, rebuild=True)
    engines.forget()
    fts5, _ = answers(library, "fts5")
    rebuilt, by = answers(library, "tantivy")
    assert by == {"tantivy"}
    return folder, fts5, rebuilt


def copy(built, tmp_path: Path) -> tuple[Path, Path]:
    folder, *_ = built
    for p in folder.iterdir():
        if p.name.startswith("library.sqlite3"):
            (shutil.copytree if p.is_dir() else shutil.copy2)(p, tmp_path / p.name)
    return config(tmp_path, folder / "sessions"), tmp_path / "library.sqlite3"


def damage(folder: Path, how: str) -> None:
    files = sorted(folder.iterdir())
    if how == "folder removed":
        shutil.rmtree(folder)
    elif how == "segment files deleted":
        for f in files:
            if f.suffix in (".term", ".idx"):
                f.unlink()
    elif how == "segment files cut short":
        for f in files:
            if f.suffix in (".term", ".idx", ".pos", ".store"):
                os.truncate(f, f.stat().st_size // 2)
    elif how == "meta.json not json":
        (folder / "meta.json").write_text("{not json")
    elif how == "meta.json of another schema":
        meta = json.loads((folder / "meta.json").read_text())
        meta["schema"] = meta["schema"][:3]
        (folder / "meta.json").write_text(json.dumps(meta))


# (The folder removed was already rebuilt by the first reader, inline for a small library, and by
# the next run otherwise.)
# `jezero reindex` is tried on segment files deleted.
HOW = ["segment files cut short", "meta.json not json", "meta.json of another schema"]


@pytest.mark.parametrize("how", HOW)
def test_a_damaged_index_never_costs_an_answer_and_the_next_run_rebuilds_it(built, tmp_path, how):
    from jezero_index_tantivy.index import folder_for
    from jezero_index_tantivy.messages import folder_for as messages_folder_for

    _, fts5, rebuilt = built
    cfg, library = copy(built, tmp_path)
    damage(folder_for(library), how)
    damage(messages_folder_for(library), how)

    found, by = answers(library, "tantivy")  # a new reader: FTS5 answers, not the damaged index
    assert by != {"tantivy"} and found == fts5
    status = cli(cfg, "status").stdout
    assert "damaged" in status and "jezero run" in status, status

    run = cli(cfg, "run", "-q")  # nothing new to write
    assert "Traceback" not in run.stderr
    engines.forget()
    assert engines.sync("tantivy", library) == 0, "the run left the index damaged or behind"
    assert answers(library, "tantivy") == (rebuilt, {"tantivy"})


def test_reindex_rebuilds_a_damaged_index(built, tmp_path):
    from jezero_index_tantivy.index import folder_for

    _, _, rebuilt = built
    cfg, library = copy(built, tmp_path)
    damage(folder_for(library), "segment files deleted")
    out = cli(cfg, "reindex").stdout
    assert "written to the index" in out, out
    assert answers(library, "tantivy") == (rebuilt, {"tantivy"})
    assert "damaged" not in cli(cfg, "status").stdout


def test_an_index_damaged_under_an_open_reader_is_rebuilt_by_the_next_write(built, tmp_path):
    """A server has the index open; its files are damaged, then `jezero run` writes new sessions:
    the server's next searches find them (from the rebuilt index or from FTS5), and never fail."""
    from jezero_index_tantivy.index import folder_for

    folder, _, rebuilt = built
    cfg, library = copy(built, tmp_path)
    engines.forget()
    try:
        assert ask(library, "tantivy") == (rebuilt, {"tantivy"})  # the "server" holds it open
        damage(folder_for(library), "segment files cut short")
        sessions = tmp_path / "sessions"
        write_all(sessions, make_specs(SESSIONS + 4))
        cfg = config(tmp_path, sessions)
        cli(cfg, "run", "-q")
        with open_readonly(library) as conn:
            hits = search(conn, f"task {SESSIONS + 2}", options=SearchConfig(engine="tantivy"), explain=True)
            assert any(h["session_id"].endswith(f"{SESSIONS + 2:012d}") for h in hits), hits
        assert engines.sync("tantivy", library) == 0
    finally:
        engines.forget()


def test_a_rebuild_removes_what_a_discard_killed_midway_left(built, tmp_path):
    """A damaged index is renamed `<folder>.damaged-<pid>` and then deleted; a kill between the
    two left the renamed folder (as large as the index) for good. The next rebuild removes it,
    and only it (the messages index's folder and other names beside it stay)."""
    from jezero_index_tantivy.index import folder_for

    _, _, rebuilt = built
    cfg, library = copy(built, tmp_path)
    items = folder_for(library)
    left = items.with_name(items.name + ".damaged-4242")
    shutil.copytree(items, left)
    other = items.with_name(items.name + ".kept")
    other.mkdir()
    cli(cfg, "reindex")
    assert not left.exists() and other.is_dir()
    assert answers(library, "tantivy") == (rebuilt, {"tantivy"})
