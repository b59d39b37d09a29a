"""The walk over a Codex home (archived, compressed, precedence), the cursor, and the options."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
import zstandard

from jezero import plugins
from jezero.models import ConnectorContext
from jezero_connectors_codex import CodexConnector, build

A = "019b0000-0000-7000-8000-00000000000a"
B = "019b0000-0000-7000-8000-00000000000b"
C = "019b0000-0000-7000-8000-00000000000c"


def rollout(rec, sid, prompt):
    return [rec.meta(sid), rec.turn("2026-02-01T10:00:01Z"), *rec.user("2026-02-01T10:00:01Z", prompt),
            *rec.answer("2026-02-01T10:00:02Z", f"answer to {prompt}")]


def compress(path: Path, *, keep_mtime: bool = True, remove: bool = True) -> Path:
    """What Codex's background worker does: zstd level 3, mtime kept, original deleted."""
    target = path.with_name(path.name + ".zst")
    target.write_bytes(zstandard.ZstdCompressor(level=3).compress(path.read_bytes()))
    if keep_mtime:
        st = path.stat()
        os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    if remove:
        path.unlink()
    return target


def prompts(sessions):
    return {s.id: s.blocks[0].text for s in sessions}


# ----------------------------------------------------------------------------------------------
# Where rollouts live


def test_archived_flat_and_dated_and_compressed(home, rec):
    home.write(f"sessions/2026/02/01/{rec.rollout_name(A)}", rollout(rec, A, "active"))
    home.write(f"archived_sessions/{rec.rollout_name(B)}", rollout(rec, B, "archived flat"))
    compress(home.write(f"archived_sessions/2026/01/15/{rec.rollout_name(C)}", rollout(rec, C, "archived dated, compressed")))
    sessions = home.read()
    assert prompts(sessions) == {A: "active", B: "archived flat", C: "archived dated, compressed"}
    assert {s.cursor_key for s in sessions} == {A, B, C}
    assert home.warnings == []


def test_compressed_file_under_sessions(home, rec):
    path = compress(home.write(f"sessions/2026/02/01/{rec.rollout_name(A)}", rollout(rec, A, "squeezed")))
    assert path.name.endswith(".jsonl.zst")
    [s] = home.read()
    assert s.id == A and [b.text for b in s.blocks] == ["squeezed", "answer to squeezed"]


def test_plain_wins_over_compressed_and_active_over_archived(home, rec):
    plain = home.write(f"sessions/2026/02/01/{rec.rollout_name(A)}", rollout(rec, A, "old"))
    compress(plain, remove=False)  # mid-compression: both exist
    home.write(f"sessions/2026/02/01/{rec.rollout_name(A)}", rollout(rec, A, "plain copy"))
    home.write(f"sessions/2026/02/01/{rec.rollout_name(B)}", rollout(rec, B, "active copy"))
    home.write(f"archived_sessions/{rec.rollout_name(B)}", rollout(rec, B, "archived copy"))
    assert prompts(home.read()) == {A: "plain copy", B: "active copy"}


def test_unreadable_compressed_file_warns_and_the_rest_is_read(home, rec):
    bad = home.root / "archived_sessions" / f"{rec.rollout_name(A)}.zst"
    bad.parent.mkdir(parents=True)
    bad.write_bytes(b"\x28\xb5\x2f\xfd this is not zstd data")
    home.write(f"sessions/2026/02/01/{rec.rollout_name(B)}", rollout(rec, B, "fine"))
    assert prompts(home.read()) == {B: "fine"}
    assert len(home.warnings) == 1 and str(bad) in home.warnings[0]


@pytest.mark.parametrize("kept", [0.5, 0.9])
def test_a_cut_compressed_file_warns_instead_of_reading_as_a_shorter_session(home, rec, kept):
    # zstandard's stream reader returns what it could decode and stops without a word: a
    # damaged rollout read as a shorter or an empty session.
    turns = rollout(rec, A, "long work") + [x for i in range(300) for x in rec.answer(
        "2026-02-01T10:00:03Z", f"step {i}: " + " ".join(f"w{i * 7 + j}" for j in range(60)))]
    path = compress(home.write(f"archived_sessions/{rec.rollout_name(A)}", turns))
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * kept)])
    home.write(f"sessions/2026/02/01/{rec.rollout_name(B)}", rollout(rec, B, "fine"))
    assert prompts(home.read()) == {B: "fine"}
    assert len(home.warnings) == 1 and str(path) in home.warnings[0] and "cut short" in home.warnings[0]


def test_several_zstd_frames_read_as_one_file(home, rec):
    path = home.write(f"sessions/2026/02/01/{rec.rollout_name(A)}", rollout(rec, A, "framed"))
    lines = path.read_bytes().splitlines(keepends=True)
    frames = b"".join(zstandard.ZstdCompressor(level=3).compress(line) for line in lines)
    path.with_name(path.name + ".zst").write_bytes(frames)
    path.unlink()
    [s] = home.read()
    assert [b.text for b in s.blocks] == ["framed", "answer to framed"] and home.warnings == []


def test_missing_home_is_reported(tmp_path):
    warnings = []
    connector = build({"path": str(tmp_path / "nope")}, ConnectorContext("t", warnings.append))
    assert list(connector.read({})) == []
    assert warnings and "nope" in warnings[0]


def test_other_files_are_ignored(home, rec):
    home.write("history.jsonl", [{"session_id": A, "ts": 1, "text": "hi"}])
    home.write("sessions/2026/02/01/notes.jsonl", [{"hello": 1}])
    home.write("log/codex-tui.log", ["x"])
    assert home.read() == [] and home.warnings == []


# ----------------------------------------------------------------------------------------------
# The cursor


def test_cursor_yields_only_what_changed(home, rec):
    a = home.write(f"sessions/2026/02/01/{rec.rollout_name(A)}", rollout(rec, A, "first"))
    home.write(f"sessions/2026/02/01/{rec.rollout_name(B)}", rollout(rec, B, "second"))
    cursor: dict = {}
    assert len(home.read(cursor)) == 2
    assert set(cursor) == {A, B}
    assert set(cursor[A]) == {"sig", "size", "bytes", "sha256"}
    assert home.read(cursor) == []  # nothing changed
    with open(a, "a") as f:  # the session goes on
        f.write("\n".join(json.dumps(x) for x in rec.user("2026-02-01T10:05:00Z", "and more")) + "\n")
    [s] = home.read(cursor)
    assert s.id == A and [b.text for b in s.blocks][-1] == "and more"  # re-read from the start
    assert len(s.blocks) == 3
    assert home.read(cursor) == []


def test_deferred_session_comes_back(home, rec):
    home.write(f"sessions/2026/02/01/{rec.rollout_name(A)}", rollout(rec, A, "first"))
    cursor: dict = {}
    sessions = list(home.connector().read(cursor))  # the pipeline defers it: no cursor update
    assert len(sessions) == 1
    assert [s.id for s in home.read(cursor)] == [A]
    assert home.read(cursor) == []


def test_archiving_or_compressing_does_not_yield_again(home, rec):
    src = home.write(f"sessions/2026/02/01/{rec.rollout_name(A)}", rollout(rec, A, "moving"))
    other = home.write(f"sessions/2026/02/01/{rec.rollout_name(B)}", rollout(rec, B, "recompressed"))
    cursor: dict = {}
    assert len(home.read(cursor)) == 2
    archived = home.root / "archived_sessions" / src.name
    archived.parent.mkdir()
    shutil.move(src, archived)  # "archive": a rename, same size and mtime
    assert home.read(cursor) == []
    compress(archived)  # mtime kept: judged without decompressing
    assert home.read(cursor) == []
    compress(other, keep_mtime=False)  # a new mtime: decompressed and hashed, still the same
    assert home.read(cursor) == []
    assert home.warnings == []


def test_touched_file_with_same_content_is_not_yielded(home, rec):
    path = home.write(f"sessions/2026/02/01/{rec.rollout_name(A)}", rollout(rec, A, "same"))
    cursor: dict = {}
    home.read(cursor)
    os.utime(path, ns=(0, 10**18))
    assert home.read(cursor) == []


def test_a_growing_partial_line_alone_is_not_a_change(home, rec):
    path = home.write(f"sessions/2026/02/01/{rec.rollout_name(A)}", rollout(rec, A, "p"), tail='{"timestamp": "2026')
    cursor: dict = {}
    assert len(home.read(cursor)) == 1
    with open(path, "a") as f:
        f.write('-02-01T10:00:09Z", "type": ')
    assert home.read(cursor) == []


# ----------------------------------------------------------------------------------------------
# Options and registration


def test_codex_home_from_the_environment(tmp_path, monkeypatch, rec):
    codex_home = tmp_path / "elsewhere"
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    connector = build({}, ConnectorContext("t", print))
    assert isinstance(connector, CodexConnector) and connector.root == codex_home
    path = codex_home / "sessions" / "2026" / "02" / "01" / rec.rollout_name(A)
    path.parent.mkdir(parents=True)
    path.write_text("\n".join(json.dumps(x) for x in rollout(rec, A, "from CODEX_HOME")) + "\n")
    assert [s.blocks[0].text for s in connector.read({})] == ["from CODEX_HOME"]


def test_default_home_is_dot_codex(tmp_path, monkeypatch):
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # never the real home
    assert build({}, ConnectorContext("t", print)).root == tmp_path / ".codex"
    assert build({"path": "~/codex-copy"}, ConnectorContext("t", print)).root == tmp_path / "codex-copy"


def test_unknown_option_is_rejected():
    with pytest.raises(ValueError, match="'projects'"):
        build({"path": "/tmp", "projects": "x"}, ConnectorContext("t", print))
    with pytest.raises(ValueError, match="path"):
        build({"path": ""}, ConnectorContext("t", print))


def test_built_through_the_plugin_host(home, rec):
    home.write(f"sessions/2026/02/01/{rec.rollout_name(A)}", rollout(rec, A, "via the host"))
    kind = plugins.connector_types()["codex"]
    assert kind.plugin == "jezero_connectors_codex" and kind.build is not None and kind.description
    connector = kind.build({"path": str(home.root)}, ConnectorContext("codex", home.warnings.append))
    [s] = list(connector.read({}))
    assert s.agent == "codex" and s.blocks[0].text == "via the host"
