"""A transcript rewritten in place to the same size with the same mtime (a copy that keeps times:
`cp -p`, `rsync -t`, a restore; or two rewrites within a coarse mtime tick: 1-2 s on FAT and some
network file systems; an editor or a scrubber that sets the times back) is read again: a file's
cursor signature carries a hash of its ctime and its first and last 4 KB besides its size and
mtime (jezero.ingest.files.file_signature).

Before: the cursor trusted size and mtime alone, so the library kept the old text forever, and
no run said anything. A cursor written before the hash was kept is trusted on size and mtime, as
it was then (no run over the whole store after an upgrade)."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from jezero import plugins
from jezero.ingest.files import SIGNATURE_EDGE, file_signature, same_signature
from jezero.plugin.testing import Library
from jezero.store import open_readonly
from jz_support import SAMPLES, needs_samples

STORES = {"claude": "newest/claude", "codex": "newest/codex", "gemini": "newest/gemini", "copilot": "newest/copilot"}


def needs(ctype: str) -> None:
    types = plugins.connector_types()
    if ctype not in types or types[ctype].build is None:
        pytest.skip(f"connector type {ctype!r} is not installed")


def originals(library: Path) -> list[tuple[str, str]]:
    conn = open_readonly(library)
    try:
        return sorted(conn.execute("SELECT session_id, original FROM items"))
    finally:
        conn.close()


def same_size_rewrite(path: Path, stored: list[tuple[str, str]]) -> str | None:
    """Swap the case of a run of plain words of the stored text in `path` (the same size), keeping
    the file's mtime; the new words."""
    phrases = {p for _, text in stored for p in re.findall(r"[A-Za-z]+(?: [A-Za-z]+){2,}", text)}
    data = path.read_bytes()
    for phrase in sorted(phrases, key=lambda p: (-len(p), p)):
        if phrase.encode() in data:
            st = path.stat()
            path.write_bytes(data.replace(phrase.encode(), phrase.swapcase().encode()))
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
            assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns
            return phrase.swapcase()
    return None


@needs_samples()
@pytest.mark.parametrize("ctype", sorted(STORES))
def test_a_file_rewritten_with_the_same_size_and_mtime_is_read_again(tmp_path, ctype):
    needs(ctype)
    root = tmp_path / "store"
    shutil.copytree(SAMPLES / STORES[ctype], root)
    with Library(tmp_path / "lib", ctype, {"path": str(root)}) as lib:
        assert lib.run()["error"] is None
        library = lib.config.library_path()
        before = originals(library)
        changed = next(((p, w) for p in sorted(root.rglob("*.jsonl")) if (w := same_size_rewrite(p, before))), None)
        if changed is None:
            pytest.skip("no words of the stored text to change in the sample")
        path, words = changed
        report = lib.run()
        after = originals(library)
    assert report["error"] is None
    assert any(words in text for _, text in after), f"{words!r}, rewritten in {path.name}, was never read"
    with Library(tmp_path / "fresh", ctype, {"path": str(root)}) as fresh:  # as a first run reads the files now
        fresh.run()
        assert after == originals(fresh.config.library_path())


@needs_samples()
@pytest.mark.parametrize("ctype", sorted(STORES))
def test_an_unchanged_store_is_not_read_again(tmp_path, ctype):
    needs(ctype)
    root = tmp_path / "store"
    shutil.copytree(SAMPLES / STORES[ctype], root)
    with Library(tmp_path / "lib", ctype, {"path": str(root)}) as lib:
        first = lib.run()
        again = lib.run()
    assert first["sessions_seen"] > 0 and again["sessions_seen"] == 0


def test_a_cursor_written_before_the_hash_was_kept_is_trusted_on_size_and_mtime(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_bytes(b'{"a": 1}\n' * 5000)
    sig = file_signature(path)
    assert len(sig) == 3 and json.loads(json.dumps(sig)) == sig
    assert same_signature(sig, sig) and same_signature(sig[:2], sig)
    assert not same_signature([sig[0], sig[1] + 1], sig) and not same_signature(None, sig)
    assert not same_signature("x", sig) and not same_signature([*sig[:2], sig[2] ^ 1], sig)


@pytest.mark.parametrize("where", ["head", "tail", "small"])
def test_the_check_sees_the_first_and_last_bytes_within_one_tick_of_the_clock(tmp_path, monkeypatch, where):
    """Two writes in one tick of a coarse clock leave mtime and ctime as they were: the bytes at
    the file's ends still tell (a rewrite of its middle alone is not seen: the cost of not
    reading unchanged files)."""
    path = tmp_path / "a.jsonl"
    data = bytearray(b"x" * (10 if where == "small" else SIGNATURE_EDGE * 10))
    path.write_bytes(data)
    real = os.fstat
    fd = os.open(path, os.O_RDONLY)
    first = real(fd)
    os.close(fd)
    before = file_signature(path)
    data[0 if where != "tail" else -1] = ord("y")
    path.write_bytes(data)
    monkeypatch.setattr(os, "fstat", lambda fd: first)  # the same size, mtime and ctime as before
    assert file_signature(path) != before
    data[0 if where != "tail" else -1] = ord("x")
    data[len(data) // 2] = ord("y")  # the middle: the whole of a small file, unseen in a large one
    path.write_bytes(data)
    assert (file_signature(path) == before) is (where != "small")


def test_touched_files_are_read_again_and_found_unchanged(tmp_path):
    """A file whose times are set back after a rewrite has a new ctime, wherever the rewrite is."""
    path = tmp_path / "a.jsonl"
    data = bytearray(b"x" * (SIGNATURE_EDGE * 10))
    path.write_bytes(data)
    st = path.stat()
    before = file_signature(path)
    data[len(data) // 2] = ord("y")
    path.write_bytes(data)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert file_signature(path)[:2] == before[:2] and file_signature(path) != before


def test_a_named_pipe_where_a_transcript_should_be_is_refused_without_waiting(tmp_path):
    fifo = tmp_path / "a.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="not a regular file"):
        file_signature(fifo)
