"""One Claude Code file name (one session id) in two project folders: stores copied or merged
together, a session resumed from another folder. Both conversations are kept.

Before: both files were read as one session, so each run kept whichever it wrote last: a second
file with more blocks replaced the first's stored text, one with fewer was refused as "read back
shorter" (never stored); a warning said "the library keeps only one of them". Now the first file
(the one the cursor knows, else the first in the walk) keeps the id and the other is kept as
`<id>@<project folder>` (its cursor entry `<key>#own-id`), once and for good; a copy that is only
the start of the other (or the same bytes) is still read as the one session it is.

The tests "both conversations" failed before the fix (one of the two texts was not in the
library); the upgrade test checks that a library written by the old code keeps what it holds."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from jezero import plugins
from jezero.plugin.testing import Library
from jezero.store import open_readonly
from jz_support import SAMPLES, needs_samples, stored_texts

SID = "7b0c3f7e-1111-4222-8333-944455556666"


@pytest.fixture(autouse=True)
def _claude_installed():
    types = plugins.connector_types()
    if "claude" not in types or types["claude"].build is None:
        pytest.skip("connector type 'claude' is not installed")


def conversation(words: list[str], sid: str = SID, cwd: str = "/srv/app") -> bytes:
    """A main session file: one prompt and one answer per word, two seconds apart."""
    lines, parent = [], None
    for i, word in enumerate(words):
        for role, text in (("user", f"please look at {word}"), ("assistant", f"done with {word}")):
            uuid = f"{role[0]}{i}-{sid[:8]}"
            content = text if role == "user" else [{"type": "text", "text": text}]
            lines.append({"type": role, "uuid": uuid, "parentUuid": parent, "sessionId": sid, "cwd": cwd,
                          "isSidechain": False, "timestamp": f"2026-02-01T08:{i:02d}:{0 if role == 'user' else 1:02d}.000Z",
                          "message": {"role": role, "content": content}})
            parent = uuid
    return b"".join(json.dumps(rec).encode() + b"\n" for rec in lines)


def stored(lib: Library) -> dict[str, str]:
    return stored_texts(lib.config.library_path())


def items(lib: Library) -> list[tuple]:
    conn = open_readonly(lib.config.library_path())
    try:
        return conn.execute("SELECT uid, session_id, content_hash, title FROM items ORDER BY uid").fetchall()
    finally:
        conn.close()


def two_folders(tmp_path: Path, first: bytes, second: bytes) -> tuple[Path, Path, Path]:
    root = tmp_path / "projects"
    a, b = root / "-srv-app" / f"{SID}.jsonl", root / "-srv-copy" / f"{SID}.jsonl"
    a.parent.mkdir(parents=True)
    b.parent.mkdir()
    a.write_bytes(first)
    b.write_bytes(second)
    return root, a, b


@pytest.mark.parametrize("second_longer", [False, True], ids=["second-shorter", "second-longer"])
def test_both_conversations_are_kept(tmp_path, second_longer):
    first, second = ["alpha", "bravo", "charlie"], ["zulu"]
    if second_longer:
        first, second = second, first
    root, a, b = two_folders(tmp_path, conversation(first), conversation(second))
    with Library(tmp_path / "lib", "claude", {"path": str(root)}) as lib:
        report = lib.run()
        assert report["error"] is None
        held = stored(lib)
        assert set(held) == {SID, f"{SID}@-srv-copy"}, held
        assert all(w in held[SID] for w in first) and not any(w in held[SID] for w in second)
        assert all(w in held[f"{SID}@-srv-copy"] for w in second)
        assert any("-srv-copy" in w and "kept as session" in w for w in report["warnings"]), report["warnings"]
        before = items(lib)
        again = lib.run()  # nothing changed: nothing read, nothing said
        assert again["sessions_seen"] == 0 and items(lib) == before
        assert not any("one name" in w for w in again["warnings"])
        # The first file gone: what was stored of it stays, the copy keeps its own id.
        a.unlink()
        assert lib.run()["error"] is None and items(lib) == before
        # The copy grows: read again under its own id, never under the plain one.
        b.write_bytes(conversation([*second, "xray"]))
        os.utime(b, ns=(b.stat().st_atime_ns, b.stat().st_mtime_ns - 10**9))
        assert lib.run()["error"] is None
        after = stored(lib)
        assert after[SID] == held[SID]
        assert "xray" in after[f"{SID}@-srv-copy"]


def test_a_copy_of_the_start_of_the_other_is_one_session(tmp_path):
    """Stores copied together at two moments: one file is the start of the other. One session,
    the longer text, no second id."""
    full = conversation(["alpha", "bravo", "charlie"])
    start = full[: full.index(b"\n", len(full) // 2) + 1]
    for first, second in ((full, start), (start, full), (full, full)):
        case = tmp_path / str(len(list(tmp_path.iterdir())))
        root, _, _ = two_folders(case, first, second)
        with Library(case / "lib", "claude", {"path": str(root)}) as lib:
            report = lib.run()
            assert report["error"] is None
            held = stored(lib)
            assert list(held) == [SID] and "charlie" in held[SID], held
            assert any("copy of the start" in w for w in report["warnings"]), report["warnings"]


def test_a_library_written_before_keeps_what_it_holds(tmp_path, monkeypatch):
    """A library the old code wrote (both files read as one session: the second, longer, replaced
    the first) keeps its items as they are; the second is read once more, under its own id."""
    import jezero_connectors_claude.connector as claude

    root, a, b = two_folders(tmp_path, conversation(["alpha"]), conversation(["zulu", "yankee"]))
    with Library(tmp_path / "lib", "claude", {"path": str(root)}) as lib:
        with monkeypatch.context() as m:  # the old code: no file takes an id of its own
            m.setattr(claude, "own_ids", lambda files, cursor: (claude.OwnIds({}), []))
            assert lib.run()["error"] is None
        old = items(lib)
        assert [r[1] for r in old] == [SID] and "zulu" in stored(lib)[SID]
        report = lib.run()
        assert report["error"] is None
        now = items(lib)
        assert [r for r in now if r[1] == SID] == old  # not touched
        assert "zulu" in stored(lib)[f"{SID}@-srv-copy"]
        assert lib.run()["sessions_seen"] == 0


def test_the_sub_agents_of_a_copy_go_with_it(tmp_path):
    """2.1.x keeps a session's sub-agents in `<session>/subagents/`: a copy's go under its own id."""
    root, a, b = two_folders(tmp_path, conversation(["alpha"]), conversation(["zulu"]))
    for main, word in ((a, "inner-alpha"), (b, "inner-zulu")):
        agent = main.parent / SID / "subagents" / "agent-a1.jsonl"
        agent.parent.mkdir(parents=True)
        agent.write_bytes(conversation([word]).replace(b'"isSidechain": false', b'"isSidechain": true'))
    with Library(tmp_path / "lib", "claude", {"path": str(root)}) as lib:
        assert lib.run()["error"] is None
        held = stored(lib)
    assert set(held) == {SID, f"{SID}/agent-a1", f"{SID}@-srv-copy", f"{SID}@-srv-copy/agent-a1"}, held
    assert "inner-alpha" in held[f"{SID}/agent-a1"] and "inner-zulu" in held[f"{SID}@-srv-copy/agent-a1"]


@needs_samples()
def test_a_real_session_in_two_folders_keeps_both(tmp_path):
    """The real C3 sample, and a different conversation under its name in a second folder."""
    src = SAMPLES / "claude/projects/-src-experiments-claude_p/29ccd257-68b1-427f-ae5f-6524b7cb6f20.jsonl"
    if not src.is_file():
        pytest.skip(f"{src} not found")
    root = tmp_path / "projects"
    (root / "-a").mkdir(parents=True)
    (root / "-b").mkdir()
    shutil.copy(src, root / "-a" / src.name)
    lines = src.read_bytes().splitlines(keepends=True)
    (root / "-b" / src.name).write_bytes(b"".join(lines[: len(lines) // 2]).replace(b"the ", b"th\xc3\xab "))
    with Library(tmp_path / "lib", "claude", {"path": str(root)}) as lib:
        assert lib.run()["error"] is None
        held = stored(lib)
    sid = src.name[: -len(".jsonl")]
    assert "th\u00eb " not in held[sid] and "th\u00eb " in held[f"{sid}@-b"]
