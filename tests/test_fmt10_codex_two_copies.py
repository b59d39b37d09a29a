"""One Codex rollout (one id) in two files: a copy of its start left in a dated folder that sorts
first, an active file restored short beside its archived copy. The longer is read.

Before: the best ranked file (active over archived, then the path) was read and the rest of the
longer copy was lost without a word (both tests failed: the last answer was not stored). Copies
that differ otherwise are said (the first is read, as before)."""

from __future__ import annotations

import json

import pytest

from jezero import plugins
from jezero.plugin.testing import Library
from jezero.store import open_readonly

SID = "019b0000-1111-7222-8333-944455556666"
NAME = f"rollout-2026-02-01T10-00-00-{SID}.jsonl"


@pytest.fixture(autouse=True)
def _codex_installed():
    types = plugins.connector_types()
    if "codex" not in types or types["codex"].build is None:
        pytest.skip("connector type 'codex' is not installed")


def env(ts: str, kind: str, payload: dict) -> dict:
    return {"timestamp": ts, "type": kind, "payload": payload}


def rollout(words: list[str]) -> bytes:
    lines = [env("2026-02-01T10:00:00.000Z", "session_meta", {"id": SID, "timestamp": "2026-02-01T10:00:00.000Z",
                                                              "cwd": "/work/proj", "cli_version": "0.90.0", "source": "cli"})]
    for i, word in enumerate(words):
        ts = f"2026-02-01T10:{i:02d}:10.000Z"
        lines.append(env(ts, "response_item", {"type": "message", "role": "user",
                                               "content": [{"type": "input_text", "text": f"please look at {word}"}]}))
        lines.append(env(ts, "response_item", {"type": "message", "role": "assistant",
                                               "content": [{"type": "output_text", "text": f"done with {word}"}]}))
    return b"".join(json.dumps(x).encode() + b"\n" for x in lines)


def stored(lib: Library) -> str:
    conn = open_readonly(lib.config.library_path())
    try:
        return "".join(t for (t,) in conn.execute("SELECT original FROM items WHERE session_id = ? ORDER BY segment_index", (SID,)))
    finally:
        conn.close()


@pytest.mark.parametrize("layout", ["older-dated-folder", "archived-longer"])
def test_the_longer_copy_is_read(tmp_path, layout):
    home = tmp_path / ".codex"
    full = rollout(["alpha", "bravo", "charlie"])
    start = full[: full.index(b"done with bravo")]
    start = start[: start.rindex(b"\n") + 1]
    live = home / "sessions" / "2026" / "02" / "01" / NAME
    live.parent.mkdir(parents=True)
    if layout == "older-dated-folder":
        live.write_bytes(full)
        old = home / "sessions" / "2026" / "01" / "31" / NAME
        old.parent.mkdir(parents=True)
        old.write_bytes(start)
    else:
        live.write_bytes(start)
        (home / "archived_sessions").mkdir()
        (home / "archived_sessions" / NAME).write_bytes(full)
    with Library(tmp_path / "lib", "codex", {"path": str(home)}) as lib:
        report = lib.run()
        assert report["error"] is None
        assert "done with charlie" in stored(lib)
        assert any("the longer is read" in w for w in report["warnings"]), report["warnings"]


def test_copies_that_differ_are_said(tmp_path):
    home = tmp_path / ".codex"
    for day, words in (("01", ["alpha"]), ("02", ["zulu"])):
        path = home / "sessions" / "2026" / "02" / day / NAME
        path.parent.mkdir(parents=True)
        path.write_bytes(rollout(words))
    with Library(tmp_path / "lib", "codex", {"path": str(home)}) as lib:
        report = lib.run()
        assert report["error"] is None and "alpha" in stored(lib)
        assert any("holding different lines" in w for w in report["warnings"]), report["warnings"]
