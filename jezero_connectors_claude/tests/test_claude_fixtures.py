"""Hand-written transcripts, written into tmp_path, for the cases the samples do not show."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jezero.ingest.files import TOOL_TEXT_LIMIT

from jezero_connectors_claude import build
from jezero_connectors_claude.reader import read_transcript

SID = "11111111-2222-4333-8444-555555555555"
PROJECT = "-home-me-proj"
CWD = "/home/me/proj"


def stamp(n: int) -> str:
    return f"2026-03-01T10:{n // 60:02d}:{n % 60:02d}.000Z"


def envelope(kind: str, uuid: str | None, n: int, parent: str | None = None, sid: str = SID, **extra) -> dict:
    rec = {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": CWD,
           "sessionId": sid, "version": "2.1.17", "gitBranch": "main", "type": kind,
           "timestamp": stamp(n)}
    if uuid is not None:
        rec["uuid"] = uuid
    rec.update(extra)
    return rec


def user(uuid: str, content, n: int, **extra) -> dict:
    return envelope("user", uuid, n, message={"role": "user", "content": content}, **extra)


def assistant(uuid: str, message_id: str, blocks: list, n: int, model: str = "claude-opus-4-5-20251101", **extra) -> dict:
    message = {"id": message_id, "type": "message", "role": "assistant", "model": model, "content": blocks,
               "stop_reason": None, "usage": {"input_tokens": 1, "output_tokens": 1}}
    return envelope("assistant", uuid, n, message=message, requestId=f"req_{message_id}", **extra)


def text(t: str) -> dict:
    return {"type": "text", "text": t}


def tool_use(tool_id: str, name: str, data: dict) -> dict:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": data}


def tool_result(tool_id: str, content, is_error: bool = False) -> dict:
    return {"type": "tool_result", "tool_use_id": tool_id, "content": content, "is_error": is_error}


def line(rec) -> str:
    return (rec if isinstance(rec, str) else json.dumps(rec)) + "\n"


def write(path: Path, *records, tail: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line(r) for r in records) + tail, encoding="utf-8")
    return path


def append(path: Path, *records, raw: str = "") -> None:
    with open(path, "a", encoding="utf-8") as f:
        f.write(raw + "".join(line(r) for r in records))


def session_file(root: Path, sid: str = SID) -> Path:
    return root / "projects" / PROJECT / f"{sid}.jsonl"


def read(root: Path, context, cursor: dict | None = None) -> list:
    return list(build({"path": str(root)}, context).read({} if cursor is None else cursor))


def store(cursor: dict, sessions) -> dict:
    for s in sessions:
        cursor[s.cursor_key] = json.loads(json.dumps(s.cursor_value))  # what a store would keep
    return cursor


def basic(n0: int = 0) -> list:
    return [
        user("u1", "fix the flaky test in test_cache.py", n0),
        assistant("a1", "msg_1", [text("Looking at it.")], n0 + 1),
        assistant("a2", "msg_1", [tool_use("toolu_1", "Bash", {"command": "pytest -x test_cache.py", "description": "run"})], n0 + 2),
        user("u2", [tool_result("toolu_1", "1 failed")], n0 + 3),
    ]


# -- partial and broken lines ----------------------------------------------------------------


def test_partial_last_line_is_left_for_the_next_read(tmp_path, context):
    path = session_file(tmp_path)
    final = json.dumps(assistant("a3", "msg_2", [text("Fixed: the sleep was too short.")], 5))
    write(path, *basic(), tail=final[:40])
    (s,) = read(tmp_path, context)
    assert s.cursor_value["consumed"] == len(path.read_bytes()) - 40
    assert s.cursor_value["sig"][0] == len(path.read_bytes())
    assert "Fixed: the sleep was too short." not in [b.text for b in s.blocks]
    assert s.warnings == []  # a line being written is not a problem
    cursor = store({}, [s])
    assert read(tmp_path, context, cursor) == []  # unchanged, still partial: nothing new
    append(path, raw=final[40:] + "\n")
    (again,) = read(tmp_path, context, cursor)
    assert again.blocks[-1].text == "Fixed: the sleep was too short."
    assert again.cursor_value["consumed"] == len(path.read_bytes())


def test_malformed_middle_line_is_a_warning_and_the_rest_is_read(tmp_path, context):
    recs = basic()
    path = write(session_file(tmp_path), recs[0], '{"type": "assistant", "message": {"content": [', *recs[1:], "[1, 2]")
    (s,) = read(tmp_path, context)
    assert [b.kind for b in s.blocks] == ["text", "text", "tool_call", "tool_result"]
    assert len(s.warnings) == 1
    assert s.warnings[0].startswith(f"{path}:2: not a JSON object")
    assert "lines 6" in s.warnings[0]  # a JSON array is no record either
    assert context.warned == []


def test_unknown_record_and_block_types_are_skipped_counted_and_warned_once(tmp_path, context):
    recs = basic()
    path = write(
        session_file(tmp_path),
        recs[0],
        {"type": "hologram", "sessionId": SID, "data": 1},
        recs[1],
        {"type": "hologram", "sessionId": SID, "data": 2},
        assistant("a9", "msg_9", [{"type": "sparkle", "x": 1}, text("still here")], 4),
        # known metadata: never a warning
        {"type": "file-history-snapshot", "messageId": "m", "snapshot": {}, "isSnapshotUpdate": False},
        {"type": "queue-operation", "operation": "enqueue", "content": "x", "sessionId": SID, "timestamp": stamp(5)},
        envelope("progress", "p1", 6, data={"type": "hook_progress"}),
        {"type": "permission-mode", "permissionMode": "default", "sessionId": SID},
        {"type": "last-prompt", "leafUuid": "u1", "sessionId": SID},
        envelope("system", "s1", 7, subtype="turn_duration", durationMs=5),
        {"type": "pr-link", "sessionId": SID, "url": "https://example.invalid/pr/1"},
    )
    (s,) = read(tmp_path, context)
    assert sorted(s.warnings) == sorted([
        f"{path}:2: unknown record type 'hologram' (2 lines skipped)",
        f"{path}:5: unknown content block type 'sparkle' (1 block skipped)",
    ])
    assert "still here" in [b.text for b in s.blocks]


# -- duplicates, compaction ------------------------------------------------------------------


def test_resumed_session_replaying_uuids_keeps_the_first(tmp_path, context):
    recs = basic()
    write(session_file(tmp_path), *recs, *recs[:3], user("u5", "now the other test", 9))
    (s,) = read(tmp_path, context)
    assert [b.text for b in s.blocks if b.kind == "text"] == [
        "fix the flaky test in test_cache.py", "Looking at it.", "now the other test",
    ]
    assert len([b for b in s.blocks if b.kind == "tool_call"]) == 1


def test_split_assistant_lines_sharing_a_message_id_keep_each_block_once(tmp_path, context):
    blocks = [{"type": "thinking", "thinking": "The test sleeps 0.1s; too short.", "signature": "c2lnbmF0dXJl" * 50},
              text("Raising the timeout."),
              tool_use("toolu_2", "Edit", {"file_path": "/home/me/proj/t.py", "old_string": "0.1", "new_string": "1.0"})]
    # Each block on its own line, then (another writer) a line repeating all of them.
    write(session_file(tmp_path), user("u1", "go", 0),
          *[assistant(f"a{i}", "msg_x", [b], i + 1) for i, b in enumerate(blocks)],
          assistant("a9", "msg_x", blocks, 5))
    (s,) = read(tmp_path, context)
    assert [(b.kind, b.text) for b in s.blocks[1:]] == [
        ("thinking", "The test sleeps 0.1s; too short."),
        ("text", "Raising the timeout."),
        ("tool_call", "/home/me/proj/t.py"),
    ]
    assert "c2lnbmF0dXJl" not in "".join(b.text for b in s.blocks)


def test_compaction_root_gives_a_compaction_block_and_keeps_both_sides(tmp_path, context):
    summary = ("This session is being continued from a previous conversation that ran out of context. "
               "The conversation is summarized below: the user asked to fix the flaky test.")
    write(
        session_file(tmp_path),
        *basic(),
        envelope("system", "c1", 10, parent=None, subtype="compact_boundary", content="Conversation compacted",
                 logicalParentUuid="u2", compactMetadata={"trigger": "auto", "preTokens": 155000}),
        user("c2", summary, 11, parent="c1", isCompactSummary=True, isVisibleInTranscriptOnly=True),
        user("u6", "and now run the whole suite", 12, parent="c2"),
    )
    (s,) = read(tmp_path, context)
    kinds = [(b.role, b.kind) for b in s.blocks]
    assert kinds[-2:] == [("system", "compaction"), ("user", "text")]
    assert s.blocks[-2].text.startswith("This session is being continued")
    assert s.blocks[0].text == "fix the flaky test in test_cache.py"
    assert "Conversation compacted" not in [b.text for b in s.blocks]


# -- big and binary content ------------------------------------------------------------------


def test_huge_tool_result_is_clipped_and_tool_use_result_ignored(tmp_path, context):
    huge = "HEAD-OF-OUTPUT\n" + "x" * 200_000 + "\nTAIL-OF-OUTPUT"
    write(
        session_file(tmp_path),
        user("u1", "edit it", 0),
        assistant("a1", "msg_1", [tool_use("toolu_9", "Edit", {"file_path": "/p/big.py", "old_string": "a", "new_string": "b"})], 1),
        user("u2", [tool_result("toolu_9", huge)], 2,
             toolUseResult={"filePath": "/p/big.py", "originalFile": "ORIGINAL-FILE-MARKER " * 10_000}),
    )
    (s,) = read(tmp_path, context)
    result = s.blocks[-1]
    assert result.kind == "tool_result" and result.tool == "Edit"
    assert len(result.text) < TOOL_TEXT_LIMIT + 100
    assert result.text.startswith("HEAD-OF-OUTPUT") and result.text.endswith("TAIL-OF-OUTPUT")
    assert "characters cut" in result.text
    assert all("ORIGINAL-FILE-MARKER" not in b.text for b in s.blocks)


def test_images_become_a_short_marker_never_base64(tmp_path, context):
    data = base64.b64encode(b"\x89PNG" + bytes(30_000)).decode()
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}
    write(
        session_file(tmp_path),
        user("u1", [text("what is wrong in this screenshot?"), image], 0),
        assistant("a1", "msg_1", [tool_use("toolu_3", "Read", {"file_path": "/p/shot.jpg"})], 1),
        user("u2", [tool_result("toolu_3", [{"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": data}}])], 2),
    )
    (s,) = read(tmp_path, context)
    assert [(b.role, b.kind, b.text) for b in s.blocks] == [
        ("user", "text", "what is wrong in this screenshot?"),
        ("user", "image", "[image: image/png, 29 KB]"),
        ("assistant", "tool_call", "/p/shot.jpg"),
        ("tool", "tool_result", "[image: image/jpeg, 29 KB]"),
    ]
    assert all(data[:100] not in b.text for b in s.blocks)


# -- user-side scaffolding, titles -----------------------------------------------------------


def test_scaffolding_is_dropped_or_marked_meta(tmp_path, context):
    write(
        session_file(tmp_path),
        user("m1", "Caveat: The messages below were generated by the user while running local commands. DO NOT respond.", 0, isMeta=True),
        user("m2", "<command-name>/model</command-name>\n<command-message>model</command-message>\n<command-args>opus</command-args>", 1),
        user("m3", "<local-command-stdout>Set model to \u001b[1mopus\u001b[22m</local-command-stdout>", 2),
        user("m4", "<local-command-stdout></local-command-stdout>", 3),
        user("m5", [text("<system-reminder>\nThe date changed.\n</system-reminder>"), text("please review <system-reminder>x</system-reminder>the diff")], 4),
        user("m6", "# Skill body expanded from a slash command", 5, isMeta=True),
        {"type": "attachment", "uuid": "q1", "sessionId": SID, "timestamp": stamp(6),
         "attachment": {"type": "queued_command", "prompt": "also check the logs", "commandMode": "prompt"}},
        {"type": "attachment", "uuid": "q2", "sessionId": SID, "timestamp": stamp(7),
         "attachment": {"type": "hook_additional_context", "content": ["ctx"]}},
        user("m7", "[Request interrupted by user]", 8),
    )
    (s,) = read(tmp_path, context)
    assert [(b.role, b.kind, b.text) for b in s.blocks] == [
        ("user", "meta", "/model opus"),
        ("user", "meta", "Set model to opus"),
        ("user", "text", "please review the diff"),
        ("user", "text", "also check the logs"),
        ("user", "meta", "[Request interrupted by user]"),
    ]
    assert s.warnings == []


def test_title_prefers_custom_then_agent_name_then_ai_title(tmp_path, context):
    path = write(session_file(tmp_path), *basic(),
                 {"type": "ai-title", "aiTitle": "Flaky test fix", "sessionId": SID},
                 {"type": "summary", "summary": "Other session", "leafUuid": "not-here"})
    (s,) = read(tmp_path, context)
    assert s.title == "Flaky test fix"
    append(path, {"type": "custom-title", "customTitle": "Timeout hunt", "sessionId": SID},
           {"type": "agent-name", "agentName": "timeouts", "sessionId": SID},
           {"type": "ai-title", "aiTitle": "Later AI title", "sessionId": SID})
    (s,) = read(tmp_path, context)
    assert s.title == "Timeout hunt"


def test_summary_titles_only_when_its_leaf_is_in_the_file(tmp_path, context):
    write(session_file(tmp_path),
          {"type": "summary", "summary": "Someone else's branch", "leafUuid": "elsewhere"},
          *basic(),
          {"type": "summary", "summary": "Fixing the flaky cache test", "leafUuid": "u2"})
    (s,) = read(tmp_path, context)
    assert s.title == "Fixing the flaky cache test"


# -- sub-agents ------------------------------------------------------------------------------


def agent_line(kind: str, uuid: str, parent, n: int, agent: str, content, model="claude-haiku-4-5-20251001", mid=None):
    extra = {"isSidechain": True, "agentId": agent}
    if kind == "user":
        rec = user(uuid, content, n, **extra)
    else:
        rec = assistant(uuid, mid, content, n, model=model, **extra)
    rec["parentUuid"] = parent
    return rec


def test_flat_2_0_agent_files_are_children_and_warmup_agents_carry_nothing(tmp_path, context):
    project = tmp_path / "projects" / PROJECT
    write(project / f"{SID}.jsonl", *basic())
    write(project / "agent-1234abcd.jsonl",
          agent_line("user", "s1", None, 1, "1234abcd", "Find where the cache is cleared"),
          agent_line("assistant", "s2", "s1", 2, "1234abcd", [tool_use("toolu_g", "Grep", {"pattern": "clear_cache", "path": "src"})], mid="msg_s"),
          agent_line("user", "s3", "s2", 3, "1234abcd", [tool_result("toolu_g", "src/cache.py:12")]),
          agent_line("assistant", "s4", "s3", 4, "1234abcd", [text("It is cleared in src/cache.py:12.")], mid="msg_t"))
    write(project / "agent-warm0001.jsonl",
          agent_line("user", "w1", None, 0, "warm0001", "Warmup"),
          agent_line("assistant", "w2", "w1", 0, "warm0001", [text("I'm ready to help search the codebase.")], mid="msg_w"))
    sessions = {s.id: s for s in read(tmp_path, context)}
    assert set(sessions) == {SID, f"{SID}/agent-1234abcd", f"{SID}/agent-warm0001"}
    child = sessions[f"{SID}/agent-1234abcd"]
    assert child.parent_id == SID
    assert child.model == "claude-haiku-4-5-20251001"
    assert [(b.kind, b.tool, b.text) for b in child.blocks] == [
        ("text", None, "Find where the cache is cleared"),
        ("tool_call", "Grep", "clear_cache in src"),
        ("tool_result", "Grep", "src/cache.py:12"),
        ("text", None, "It is cleared in src/cache.py:12."),
    ]
    warm = sessions[f"{SID}/agent-warm0001"]
    assert warm.blocks == [] and warm.parent_id == SID  # yielded only so its cursor moves
    assert warm.cursor_key == f"{PROJECT}/agent-warm0001.jsonl"
    cursor = store({}, sessions.values())
    assert read(tmp_path, context, cursor) == []


def test_nested_2_1_agent_takes_its_title_from_meta_json(tmp_path, context):
    project = tmp_path / "projects" / PROJECT
    write(project / f"{SID}.jsonl", *basic())
    sub = project / SID / "subagents"
    write(sub / "agent-a36efb2a1231c41e2.jsonl",
          agent_line("user", "n1", None, 1, "a36efb2a1231c41e2", "Summarise the failing tests"),
          agent_line("assistant", "n2", "n1", 2, "a36efb2a1231c41e2", [text("Two tests fail on timeouts.")], mid="msg_n"))
    (sub / "agent-a36efb2a1231c41e2.meta.json").write_text(json.dumps({"agentType": "general-purpose", "description": "Summarise failures"}))
    (project / SID / "tool-results").mkdir()
    (project / SID / "tool-results" / "toolu_1.txt").write_text("spilled output")
    write(project / "memory" / "notes.jsonl", user("zz", "not a transcript", 0))
    sessions = read(tmp_path, context)
    assert [s.id for s in sessions] == [SID, f"{SID}/agent-a36efb2a1231c41e2"]
    assert sessions[1].title == "general-purpose: Summarise failures"
    assert sessions[1].parent_id == SID


def test_inline_1_0_sidechains_become_children_with_their_own_cursor_entries(tmp_path, context):
    path = session_file(tmp_path)
    side = lambda kind, uuid, parent, n, content, mid=None: {  # noqa: E731
        **(user(uuid, content, n) if kind == "user" else assistant(uuid, mid, content, n)),
        "isSidechain": True, "parentUuid": parent, "version": "1.0.35"}
    write(
        path,
        user("u1", "research how the cache key is built", 0),
        assistant("a1", "msg_1", [tool_use("toolu_t", "Task", {"description": "cache key", "prompt": "Find the cache key", "subagent_type": "general-purpose"})], 1),
        side("user", "x1", None, 2, "Find the cache key"),
        side("assistant", "x2", "x1", 3, [tool_use("toolu_r", "Read", {"file_path": "/p/cache.py"})], mid="msg_x"),
        side("user", "x3", "x2", 4, [tool_result("toolu_r", "def key(): ...")]),
        side("assistant", "x4", "x3", 5, [text("The key is a hash of the path.")], mid="msg_y"),
        # bookkeeping marked as sidechain, and a Warmup run: no child sessions of their own
        {**envelope("progress", "pg", 5, parent=None, data={"type": "hook_progress"}), "isSidechain": True},
        side("user", "w1", None, 5, "Warmup"),
        side("assistant", "w2", "w1", 5, [text("Ready.")], mid="msg_w"),
        user("u2", [tool_result("toolu_t", "The key is a hash of the path.")], 6),
        assistant("a2", "msg_2", [text("It hashes the path.")], 7),
    )
    sessions = read(tmp_path, context)
    assert [s.id for s in sessions] == [SID, f"{SID}/sidechain-x1"]
    parent, child = sessions
    assert [b.text for b in parent.blocks if b.kind == "text"] == ["research how the cache key is built", "It hashes the path."]
    assert [(b.kind, b.text) for b in child.blocks] == [
        ("text", "Find the cache key"), ("tool_call", "/p/cache.py"), ("tool_result", "def key(): ..."),
        ("text", "The key is a hash of the path."),
    ]
    assert child.parent_id == SID and child.cwd == CWD
    assert child.cursor_key == f"{PROJECT}/{SID}.jsonl#sidechain-x1"
    assert parent.cursor_value["children"] == [child.cursor_key]
    # The pipeline stored the parent but deferred the child: only the child comes back.
    cursor = store({}, [parent])
    assert [s.id for s in read(tmp_path, context, cursor)] == [child.id]
    store(cursor, [child])
    assert read(tmp_path, context, cursor) == []


# -- the cursor, files that come and go -------------------------------------------------------


def test_cursor_yields_nothing_twice_and_an_appended_line_reyields_only_its_session(tmp_path, context):
    other = "99999999-2222-4333-8444-555555555555"
    a = write(session_file(tmp_path), *basic())
    write(session_file(tmp_path, other), *[{**r, "sessionId": other} for r in basic()])
    first = read(tmp_path, context)
    assert sorted(s.id for s in first) == sorted([SID, other])
    cursor = store({}, first)
    assert read(tmp_path, context, cursor) == []
    append(a, assistant("a7", "msg_7", [text("Done.")], 20))
    (again,) = read(tmp_path, context, cursor)
    assert again.id == SID and again.blocks[-1].text == "Done."
    assert len(again.blocks) == 5  # re-read from the start, the pipeline re-segments


def test_empty_and_metadata_only_files_are_yielded_empty(tmp_path, context):
    project = tmp_path / "projects" / PROJECT
    project.mkdir(parents=True)
    (project / "22222222-0000-4000-8000-000000000000.jsonl").write_bytes(b"")
    write(project / "33333333-0000-4000-8000-000000000000.jsonl",
          {"type": "file-history-snapshot", "messageId": "m", "snapshot": {}, "isSnapshotUpdate": False})
    sessions = read(tmp_path, context)
    assert [(s.id, s.blocks, s.warnings) for s in sessions] == [
        ("22222222-0000-4000-8000-000000000000", [], []),
        ("33333333-0000-4000-8000-000000000000", [], []),
    ]
    assert all(s.ended_at is not None for s in sessions)  # the file's mtime when nothing is dated


def test_vanished_file_and_unreadable_one_are_skipped_with_a_warning(tmp_path, context, monkeypatch):
    # A file gone mid-run is said, like the codex connector does (issue 10), not silent.
    from jezero_connectors_claude import connector as connector_module
    from jezero_connectors_claude.store import TranscriptFile

    path = write(session_file(tmp_path), *basic())
    c = build({"path": str(tmp_path)}, context)
    gone = TranscriptFile(path.with_name("gone.jsonl"), f"{PROJECT}/gone.jsonl", agent=False)
    assert list(c._read_file(gone, {})) == []
    assert len(context.warned) == 1 and "gone.jsonl: removed while the run was reading" in context.warned[0]
    context.warned.clear()

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(connector_module, "read_transcript", refuse)
    assert read(tmp_path, context) == []
    assert context.warned == [f"cannot read {path}: Permission denied"]


def test_cwd_is_the_most_common_and_branch_the_last(tmp_path, context):
    recs = basic()
    recs[2] = {**recs[2], "cwd": "/home/me/proj/sub", "gitBranch": ""}
    recs[3] = {**recs[3], "gitBranch": "fix/flaky"}
    write(session_file(tmp_path), *recs)
    (s,) = read(tmp_path, context)
    assert s.cwd == CWD and s.git_branch == "fix/flaky"


# -- tolerance --------------------------------------------------------------------------------

_scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=20)
_json = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3), max_leaves=4)
_block = st.fixed_dictionaries(
    {"type": st.sampled_from(["text", "thinking", "tool_use", "tool_result", "image", "document", "odd", None])},
    optional={"text": _json, "thinking": _json, "id": _json, "name": _json, "input": _json,
              "tool_use_id": _json, "content": _json | st.lists(_json, max_size=2), "is_error": _json, "source": _json},
)
_record = st.fixed_dictionaries(
    {"type": st.sampled_from(["user", "assistant", "system", "summary", "custom-title", "attachment", "weird", 7])},
    optional={"uuid": _json, "parentUuid": _json, "sessionId": _json, "cwd": _json, "timestamp": _json,
              "isSidechain": _json, "isMeta": _json, "subtype": _json, "content": _json, "agentId": _json,
              "leafUuid": _json, "attachment": _json, "gitBranch": _json,
              "message": st.fixed_dictionaries({}, optional={"id": _json, "model": _json,
                                                             "content": _json | st.lists(_block, max_size=4)})},
)


@settings(max_examples=40, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=st.lists(_record, max_size=8))
def test_any_shape_of_record_is_read_without_raising(tmp_path, records):
    path = tmp_path / "fuzz.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    read = read_transcript(path)
    for thread in [read.main, *read.sidechains]:
        assert all(isinstance(b.text, str) for b in thread.blocks)


# -- content in another shape (fmt10) ----------------------------------------------------------


def test_content_as_one_block_or_a_list_is_read_not_dropped(tmp_path, context):
    """A message's content as one block (a dict) instead of a list of them, a system line's as a
    list of text blocks or one block: read as the text it holds. Before, each was dropped without
    a word (benchmarks/faults/silent_loss.py: 13 cases of the real samples); a shape that holds no
    text a reader knows (a number) is said."""
    path = write(session_file(tmp_path),
                 user("u1", {"type": "text", "text": "prompt given as one block"}, 0),
                 assistant("a1", "msg_1", {"type": "text", "text": "answer given as one block"}, 1),
                 envelope("system", "s1", 2, content=[text("hook output as a list of blocks")], level="info"),
                 envelope("system", "s2", 3, content={"type": "text", "text": "hook output as one block"}),
                 user("u2", 42, 4))
    [session] = read(tmp_path, context)
    texts = [b.text for b in session.blocks]
    for wanted in ("prompt given as one block", "answer given as one block", "hook output as a list of blocks",
                   "hook output as one block"):
        assert any(wanted in t for t in texts), (wanted, texts)
    assert any("unknown content shape 'int'" in w for w in session.warnings), session.warnings
    assert str(path) in " ".join(session.warnings)
