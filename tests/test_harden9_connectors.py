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
