"""Store layouts a connector meets in the wild, through the real pipeline (`Library`, a real
SQLite library): a symlink that leads back into the store, folders and special files where a
transcript should be. Each run ends without an error, stores what a clean run stores, and says
what it skipped when that could hide a transcript."""

from __future__ import annotations

import os
import shutil

import pytest

from jezero import plugins
from jezero.plugin.testing import Library
from jezero.store import open_readonly
from jz_support import SAMPLES, needs_samples

pytestmark = needs_samples()


def needs(ctype: str) -> None:
    types = plugins.connector_types()
    if ctype not in types or types[ctype].build is None:
        pytest.skip(f"connector type {ctype!r} is not installed")


def items(library) -> list[tuple]:
    conn = open_readonly(library)
    try:
        return sorted(conn.execute("SELECT uid, session_id, parent_session_id, project, content_hash FROM items"))
    finally:
        conn.close()


def run(folder, ctype, root):
    with Library(folder, ctype, {"path": str(root)}) as lib:
        return lib.run(), items(lib.config.library_path())


def test_a_gemini_chat_found_twice_through_a_symlink_is_read_once_as_itself(tmp_path):
    """Before: `chats/loop -> .` made the main chat a sub-agent chat of a parent named "loop",
    with the same session id: the stored item took that parent, silently."""
    needs("gemini")
    root = tmp_path / "store"
    shutil.copytree(SAMPLES / "newest" / "gemini", root)
    _, clean = run(tmp_path / "clean", "gemini", root)
    chats = next(root.rglob("chats"))
    os.symlink(".", chats / "loop")
    os.symlink(str(root / "tmp"), root / "tmp" / "again")  # a project folder linked to all of them
    report, looped = run(tmp_path / "looped", "gemini", root)
    assert report["error"] is None and looped == clean
    assert any("through a symlink" in w and "loop" in w for w in report["warnings"]), report["warnings"]


def test_a_gemini_folder_reached_through_a_symlink_reads_as_before(tmp_path):
    needs("gemini")
    root = tmp_path / "store"
    shutil.copytree(SAMPLES / "newest" / "gemini", root)
    _, clean = run(tmp_path / "clean", "gemini", root)
    os.symlink(root, tmp_path / "linked")  # ~/.gemini a link to another disk
    report, linked = run(tmp_path / "linked-lib", "gemini", tmp_path / "linked")
    assert report["error"] is None and report["warnings"] == [] and linked == clean


ODD_NAMES = {  # a name each connector reads as a transcript, in the folder of its first one
    "claude": "aaaaaaaa-0000-4000-8000-000000000000.jsonl",
    "codex": "rollout-2026-11-30T17-29-33-01a22d81-3930-71a3-8999-d07b12f1aaaa.jsonl",
    "gemini": "session-2026-11-30T17-33-aaaaaaaa.jsonl",
    "copilot": "aaaaaaaa-00ad-43ea-bf85-ea7400d58aef/events.jsonl",
}


@pytest.mark.parametrize("kind", ["a folder", "a named pipe", "a symlink to nothing"])
@pytest.mark.parametrize("ctype", sorted(ODD_NAMES))
def test_what_is_named_like_a_transcript_but_is_no_file_is_said_once_and_stores_nothing(tmp_path, ctype, kind):
    """Before (small9): skipped without a word. A named pipe (no writer) must not block the run."""
    needs(ctype)
    root = tmp_path / "store"
    shutil.copytree(SAMPLES / "newest" / ctype, root)
    _, clean = run(tmp_path / "clean", ctype, root)
    folder = sorted(root.rglob("*.jsonl"))[0].parent
    odd = (folder.parent if ctype == "copilot" else folder) / ODD_NAMES[ctype]
    odd.parent.mkdir(exist_ok=True)
    {"a folder": os.mkdir, "a named pipe": os.mkfifo,
     "a symlink to nothing": lambda p: os.symlink(tmp_path / "nowhere.jsonl", p)}[kind](odd)
    report, seen = run(tmp_path / "odd", ctype, root)
    assert report["error"] is None and seen == clean
    said = [w for w in report["warnings"] if str(odd) in w]
    assert len(said) == 1 and kind in said[0], report["warnings"]


def test_not_a_file_tells_what_a_path_is_without_opening_it(tmp_path):
    from jezero.plugin import not_a_file

    (tmp_path / "file.jsonl").write_text("{}\n")
    os.symlink(tmp_path / "file.jsonl", tmp_path / "link.jsonl")
    os.mkdir(tmp_path / "folder.jsonl")
    os.mkfifo(tmp_path / "pipe.jsonl")  # no writer: an open would wait
    os.symlink(tmp_path / "gone", tmp_path / "dangling.jsonl")
    os.symlink(tmp_path / "loop.jsonl", tmp_path / "loop.jsonl")
    assert {p.name: not_a_file(p) for p in tmp_path.iterdir()} == {
        "file.jsonl": None, "link.jsonl": None, "folder.jsonl": "a folder", "pipe.jsonl": "a named pipe",
        "dangling.jsonl": "a symlink to nothing", "loop.jsonl": "a symlink loop"}
    assert not_a_file(tmp_path / "absent.jsonl") is None
