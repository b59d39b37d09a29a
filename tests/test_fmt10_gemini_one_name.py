"""One Gemini chat name in two project folders (`tmp/<a>/chats/session-X.jsonl` and
`tmp/<b>/chats/session-X.jsonl`: stores copied together, an old hash folder beside its slug).

Before: the walk kept one file per name, the first project folder in name order, and never read
the other, without a word: the live chat under `demo` was lost behind an older copy under a
folder that sorts first (test_the_longer_copy_is_read failed: nothing stored), and a different
conversation under the same name was never stored (test_two_conversations_are_both_kept
failed). Now a copy that is the start of the other is left for the longer, and a different
conversation is kept as session `<id>@<project folder>` (cursor `<key>@<project folder>`)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from jezero import plugins
from jezero.plugin.testing import Library
from jz_support import SAMPLES, needs_samples, stored_texts

SID = "5a5a5a5a-1111-4222-8333-944455556666"
NAME = f"session-2026-03-01T10-00-{SID[:8]}.jsonl"


@pytest.fixture(autouse=True)
def _gemini_installed():
    types = plugins.connector_types()
    if "gemini" not in types or types["gemini"].build is None:
        pytest.skip("connector type 'gemini' is not installed")


def chat(words: list[str]) -> bytes:
    lines = [{"sessionId": SID, "projectHash": hashlib.sha256(b"/srv/app").hexdigest(), "kind": "main",
              "startTime": "2026-03-01T10:00:00.000Z", "lastUpdated": "2026-03-01T10:00:00.000Z"}]
    for i, word in enumerate(words):
        lines.append({"id": f"u{i}", "timestamp": f"2026-03-01T10:{i:02d}:00.000Z", "type": "user",
                      "content": [{"text": f"please look at {word}"}]})
        lines.append({"id": f"g{i}", "timestamp": f"2026-03-01T10:{i:02d}:30.000Z", "type": "gemini",
                      "content": f"done with {word}", "thoughts": [], "model": "gemini-2.5-pro"})
    return b"".join(json.dumps(x).encode() + b"\n" for x in lines)


def put(root: Path, project: str, data: bytes) -> Path:
    path = root / "tmp" / project / "chats" / NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def stored(lib: Library) -> dict[str, str]:
    return stored_texts(lib.config.library_path())


def test_the_longer_copy_is_read(tmp_path):
    root = tmp_path / ".gemini"
    full = chat(["alpha", "bravo"])
    put(root, "aaa-old", full[: full.index(b"\n") + 1])  # a copy taken when only the header was written
    live = put(root, "demo", full)
    with Library(tmp_path / "lib", "gemini", {"path": str(root)}) as lib:
        report = lib.run()
        assert report["error"] is None
        assert "bravo" in stored(lib).get(SID, ""), stored(lib)
        assert any("the longer is read" in w for w in report["warnings"]), report["warnings"]
        live.write_bytes(chat(["alpha", "bravo", "charlie"]))  # the live one grows
        assert lib.run()["error"] is None
        assert "charlie" in stored(lib)[SID] and list(stored(lib)) == [SID]


def test_two_conversations_are_both_kept(tmp_path):
    root = tmp_path / ".gemini"
    a = put(root, "aaa", chat(["alpha", "bravo", "charlie"]))
    b = put(root, "bbb", chat(["zulu"]))
    with Library(tmp_path / "lib", "gemini", {"path": str(root)}) as lib:
        report = lib.run()
        assert report["error"] is None
        held = stored(lib)
        assert set(held) == {SID, f"{SID}@bbb"}, held
        assert "charlie" in held[SID] and "zulu" in held[f"{SID}@bbb"] and "zulu" not in held[SID]
        assert lib.run()["sessions_seen"] == 0
        a.unlink()  # the first gone: both stay, the second keeps its own id
        b.write_bytes(chat(["zulu", "yankee"]))
        assert lib.run()["error"] is None
        now = stored(lib)
        assert now[SID] == held[SID] and "yankee" in now[f"{SID}@bbb"]


def test_the_file_the_library_read_keeps_the_plain_id(tmp_path):
    """A library that read one of the two before (the old code read the first in the walk, or
    the second came later) keeps what it holds: the other is the one kept apart."""
    root = tmp_path / ".gemini"
    put(root, "zzz", chat(["alpha", "bravo"]))
    with Library(tmp_path / "lib", "gemini", {"path": str(root)}) as lib:
        assert lib.run()["error"] is None
        before = stored(lib)
        put(root, "aaa", chat(["zulu", "yankee", "xray"]))  # sorts first, and is longer
        assert lib.run()["error"] is None
        now = stored(lib)
    assert now[SID] == before[SID] and "xray" in now[f"{SID}@aaa"]


@needs_samples()
def test_the_real_chat_behind_an_older_copy_is_read(tmp_path):
    src = SAMPLES / "newest" / "gemini"
    if not src.is_dir():
        pytest.skip(f"{src} not found")
    root = tmp_path / "g"
    shutil.copytree(src, root)
    live = next(root.rglob("session-*.jsonl"))
    copy = root / "tmp" / "aaa-first" / "chats" / live.name
    copy.parent.mkdir(parents=True)
    copy.write_bytes(b"".join(live.read_bytes().splitlines(keepends=True)[:2]))
    with Library(tmp_path / "lib", "gemini", {"path": str(root)}) as lib, \
            Library(tmp_path / "alone", "gemini", {"path": str(src)}) as alone:
        assert lib.run()["error"] is None and alone.run()["error"] is None
        assert stored(lib) == stored(alone) and stored(lib)


def test_a_json_migrated_into_a_jsonl_in_another_folder_is_one_session(tmp_path):
    """A pre-0.40 `.json` recording under an old hash folder and its `.jsonl` under the slug folder
    (resuming migrates it): the `.jsonl` is read, as in one folder; nothing is stored twice."""
    root = tmp_path / ".gemini"
    lines = [json.loads(x) for x in chat(["alpha", "bravo"]).splitlines()]
    doc = dict(lines[0], messages=lines[1:])
    old = root / "tmp" / ("f" * 64) / "chats" / NAME.replace(".jsonl", ".json")
    old.parent.mkdir(parents=True)
    old.write_text(json.dumps(doc, indent=2))
    put(root, "slug", chat(["alpha", "bravo", "charlie"]))
    with Library(tmp_path / "lib", "gemini", {"path": str(root)}) as lib:
        assert lib.run()["error"] is None
        held = stored(lib)
    assert list(held) == [SID] and "charlie" in held[SID], held
