"""Every format generation, folding, and the tolerant reader, on hand-written rollouts."""

from __future__ import annotations

import json
from datetime import datetime, timezone

SID = "5973b6c0-94b8-487b-a530-2aeb6098ae0e"
SID2 = "0199a213-81c0-7800-8aa1-bbab2a035a53"


def blocks(session, kind=None):
    return [(b.role, b.kind, b.text) for b in session.blocks if kind is None or b.kind == kind]


# ----------------------------------------------------------------------------------------------
# Generation 2 (May–Sept 2025): bare lines, `record_type` markers, no per-line timestamps


def test_generation_two_bare_lines(home):
    env_ctx = "<environment_context>\n  <cwd>/home/dev/rocket</cwd>\n  <approval_policy>on-request</approval_policy>\n</environment_context>"
    home.write(f"sessions/2025/07/01/rollout-2025-07-01T10-00-00-{SID}.jsonl", [
        {"id": SID, "timestamp": "2025-07-01T08:00:00.123Z", "instructions": None,
         "git": {"commit_hash": "abc", "branch": "feature/fuel", "repository_url": "git@example.com:x/rocket.git"}},
        {"record_type": "state"},
        {"type": "message", "id": None, "role": "user", "content": [{"type": "input_text", "text": "<user_instructions>\nBe terse.\n</user_instructions>"}]},
        {"type": "message", "id": None, "role": "user", "content": [{"type": "input_text", "text": env_ctx}]},
        {"type": "message", "id": None, "role": "user", "content": [{"type": "input_text", "text": "why does the fuel gauge test fail?"}]},
        {"record_type": "state", "previous_response_id": "resp_1"},
        {"type": "function_call", "name": "shell", "arguments": json.dumps({"command": ["bash", "-lc", "pytest -x tests/test_fuel.py"]}), "call_id": "call_1"},
        {"type": "function_call_output", "call_id": "call_1", "output": json.dumps({"output": "1 failed", "metadata": {"exit_code": 1, "duration_seconds": 1.5}})},
        {"type": "local_shell_call", "id": "lsc_1", "call_id": "call_2", "status": "completed",
         "action": {"type": "exec", "command": ["git", "log", "-1", "--format=%s by %an"]}},
        {"type": "function_call_output", "call_id": "call_2", "output": "fix: gauge rounding"},
        {"type": "message", "id": None, "role": "assistant", "content": [{"type": "output_text", "text": "The gauge rounds down; fixed in fuel.py."}]},
    ])
    [s] = home.read()
    assert s.id == SID and s.cursor_key == SID
    assert s.cwd == "/home/dev/rocket"  # no cwd field yet: taken from <environment_context>
    assert s.git_branch == "feature/fuel"
    assert s.model is None  # no turn_context in this generation
    assert s.started_at == s.ended_at == datetime(2025, 7, 1, 8, 0, 0, 123000, tzinfo=timezone.utc)
    assert blocks(s) == [
        ("user", "text", "why does the fuel gauge test fail?"),
        ("assistant", "tool_call", "pytest -x tests/test_fuel.py"),
        ("tool", "tool_result", "1 failed"),
        ("assistant", "tool_call", "git log -1 '--format=%s by %an'"),
        ("tool", "tool_result", "fix: gauge rounding"),
        ("assistant", "text", "The gauge rounds down; fixed in fuel.py."),
    ]
    assert [b.is_error for b in s.blocks if b.kind == "tool_result"] == [True, False]
    assert [b.tool for b in s.blocks if b.kind.startswith("tool")] == ["shell", "shell", "local_shell", "local_shell"]
    assert all(b.time is None for b in s.blocks)
    assert s.title == "why does the fuel gauge test fail?"
    assert s.warnings == []


# ----------------------------------------------------------------------------------------------
# Generation 1 (TypeScript CLI): one pretty-printed JSON document per file


def ts_doc(sid, items, ts="2025-04-20T10:00:00.000Z"):
    return {"session": {"timestamp": ts, "id": sid, "instructions": ""}, "items": items}


TS_ITEMS = [
    {"id": "msg_1", "type": "message", "role": "user", "status": "completed",
     "content": [{"type": "input_text", "text": "rename the config loader"},
                 {"type": "input_image", "image_url": "data:image/png;base64," + "A" * 4000}]},
    {"id": "fc_1", "type": "function_call", "call_id": "call_a", "name": "shell", "status": "completed",
     "arguments": json.dumps({"command": ["bash", "-lc", "grep -rn load_config src"]})},
    {"type": "function_call_output", "call_id": "call_a", "output": json.dumps({"output": "src/app.py:3", "metadata": {"exit_code": 0}})},
    {"id": "msg_2", "type": "message", "role": "assistant", "status": "completed", "content": [{"type": "output_text", "text": "Renamed to read_config."}]},
]


def test_generation_one_document(home):
    path = home.root / "sessions" / f"rollout-2025-04-20-{SID}.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(ts_doc(SID, TS_ITEMS), indent=2))
    [s] = home.read()
    assert s.id == SID and s.cursor_key == SID
    assert s.started_at == datetime(2025, 4, 20, 10, 0, tzinfo=timezone.utc)
    assert s.model is None and s.cwd is None
    assert blocks(s) == [
        ("user", "text", "rename the config loader\n[image: image/png, 3 KB]"),  # never the data URL
        ("assistant", "tool_call", "grep -rn load_config src"),
        ("tool", "tool_result", "src/app.py:3"),
        ("assistant", "text", "Renamed to read_config."),
    ]
    assert s.warnings == []


def test_generation_one_snapshots_fold_into_the_most_complete(home):
    """Early TS builds saved every snapshot under a new id: read only the most complete one."""
    sessions_dir = home.root / "sessions"
    sessions_dir.mkdir()
    first, second, other = SID, "11111111-2222-4333-8444-555555555555", "66666666-7777-4888-9999-000000000000"
    (sessions_dir / f"rollout-2025-04-20-{first}.json").write_text(json.dumps(ts_doc(first, TS_ITEMS[:2]), indent=2))
    (sessions_dir / f"rollout-2025-04-20-{second}.json").write_text(json.dumps(ts_doc(second, TS_ITEMS, "2025-04-20T10:05:00Z"), indent=2))
    # the later TS layout: `<uuid>.json`, a different conversation
    (sessions_dir / f"{other}.json").write_text(json.dumps(ts_doc(other, [TS_ITEMS[3]])))
    cursor: dict = {}
    got = {s.id: s for s in home.read(cursor)}
    assert set(got) == {second, other}
    assert set(got[second].cursor_value["covers"]) == {first}
    assert home.read(cursor) == []
    assert home.warnings == []


def test_broken_document_is_reported_and_others_are_read(home):
    sessions_dir = home.root / "sessions"
    sessions_dir.mkdir()
    (sessions_dir / f"rollout-2025-04-20-{SID}.json").write_text('{"session": {"id": "')
    home.write(f"sessions/2026/02/01/{rollout_name(SID2)}", [meta(SID2), *user("2026-02-01T10:00:01Z", "hello")])
    [s] = home.read()
    assert s.id == SID2
    assert len(home.warnings) == 1 and f"rollout-2025-04-20-{SID}.json" in home.warnings[0]


# ----------------------------------------------------------------------------------------------
# Generation 3 (envelope): folding the response_item / event_msg pairs


def test_pairs_fold_into_one_block_each(home, rec):
    t = "2026-02-01T10:00:0{}.000Z".format
    home.write(f"sessions/2026/02/01/{rec.rollout_name(SID2)}", [
        rec.meta(SID2, t(0)),
        rec.turn(t(1)),
        *rec.user(t(1), "add a retry to the uploader"),
        # the event side first, as agent_reasoning is written before its reasoning item
        rec.env(t(2), "event_msg", {"type": "agent_reasoning", "text": "**Looking at uploader**"}),
        rec.env(t(2), "response_item", {"type": "reasoning", "summary": [{"type": "summary_text", "text": "**Looking at uploader**"}],
                                        "content": None, "encrypted_content": "gAAAAsecret"}),
        *rec.shell(t(3), "call_1", ["bash", "-lc", "make test"], "boom", code=2),
        *rec.answer(t(4), "Added retries; `make test` still fails."),
        *rec.user(t(5), "ok"),
        *rec.answer(t(6), "Done."),
        *rec.user(t(7), "ok"),  # typed again, a new turn: kept
        *rec.answer(t(8), "Done."),
    ])
    [s] = home.read()
    assert blocks(s) == [
        ("user", "text", "add a retry to the uploader"),
        ("assistant", "thinking", "**Looking at uploader**"),
        ("assistant", "tool_call", "make test"),
        ("tool", "tool_result", "boom"),
        ("assistant", "text", "Added retries; `make test` still fails."),
        ("user", "text", "ok"),
        ("assistant", "text", "Done."),
        ("user", "text", "ok"),
        ("assistant", "text", "Done."),
    ]
    result = next(b for b in s.blocks if b.kind == "tool_result")
    assert result.is_error and result.tool == "shell"
    assert s.model == "gpt-5-codex" and s.cwd == "/work/proj" and s.git_branch == "main"
    assert s.blocks[0].time == datetime(2026, 2, 1, 10, 0, 1, tzinfo=timezone.utc)
    assert s.warnings == []


def test_images_tools_and_compaction(home, rec):
    t = "2026-02-01T10:00:{:02d}.000Z".format
    data_url = "data:image/jpeg;base64," + "B" * 8000
    home.write(f"sessions/2026/02/01/{rec.rollout_name(SID2)}", [
        rec.meta(SID2, t(0)),
        rec.env(t(1), "response_item", {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "<permissions instructions>x"}]}),
        rec.env(t(1), "response_item", {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "what is wrong in this screenshot?"}, {"type": "input_image", "image_url": data_url}]}),
        rec.env(t(1), "event_msg", {"type": "user_message", "message": "what is wrong in this screenshot?", "images": [data_url], "local_images": []}),
        rec.env(t(2), "response_item", {"type": "custom_tool_call", "status": "completed", "call_id": "call_p", "name": "apply_patch",
                                        "input": "*** Begin Patch\n*** Update File: a.py\n-x\n+y\n*** End Patch\n"}),
        rec.env(t(3), "event_msg", {"type": "patch_apply_end", "call_id": "call_p", "stdout": "", "stderr": "hunk failed", "success": False, "changes": {}}),
        rec.env(t(3), "response_item", {"type": "custom_tool_call_output", "call_id": "call_p", "output": "apply_patch verification failed: hunk failed"}),
        rec.env(t(4), "response_item", {"type": "function_call", "name": "shell_command", "arguments": json.dumps({"command": "ls -la"}), "call_id": "call_s"}),
        rec.env(t(4), "response_item", {"type": "function_call_output", "call_id": "call_s", "output": "Exit code: 0\nWall time: 0.1 seconds\nOutput:\n\x1b[1mtotal 0\x1b[0m"}),
        # a command the user ran with `!`: only the event exists
        rec.env(t(5), "event_msg", {"type": "exec_command_end", "call_id": "user_1", "command": ["bash", "-lc", "git status"], "source": "user_shell",
                                    "aggregated_output": "fatal: not a git repository", "exit_code": 128}),
        rec.env(t(6), "compacted", {"message": "Summary: the user wants the screenshot bug fixed.", "replacement_history": []}),
        rec.env(t(6), "event_msg", {"type": "context_compacted"}),
        rec.env(t(7), "event_msg", {"type": "token_count", "info": None, "rate_limits": {}}),
        rec.env(t(7), "response_item", {"type": "ghost_snapshot", "ghost_commit": {"id": "abc"}}),
    ])
    [s] = home.read()
    assert blocks(s) == [
        ("user", "text", "what is wrong in this screenshot?\n[image: image/jpeg, 6 KB]"),
        ("assistant", "tool_call", "*** Begin Patch\n*** Update File: a.py\n-x\n+y\n*** End Patch\n"),
        ("tool", "tool_result", "apply_patch verification failed: hunk failed"),
        ("assistant", "tool_call", "ls -la"),
        ("tool", "tool_result", "Exit code: 0\nWall time: 0.1 seconds\nOutput:\ntotal 0"),
        ("user", "tool_call", "git status"),
        ("tool", "tool_result", "fatal: not a git repository"),
        ("system", "compaction", "Summary: the user wants the screenshot bug fixed."),
    ]
    assert [b.is_error for b in s.blocks if b.kind == "tool_result"] == [True, False, True]
    assert s.warnings == []


def test_file_without_turn_context_has_no_model(home, rec):
    home.write(f"sessions/2026/02/01/{rec.rollout_name(SID2)}", [rec.meta(SID2), *rec.user("2026-02-01T10:00:01Z", "hi")])
    [s] = home.read()
    assert s.model is None
    assert s.cwd == "/work/proj"


def test_most_used_model_wins(home, rec):
    t = "2026-02-01T10:00:0{}.000Z".format
    home.write(f"sessions/2026/02/01/{rec.rollout_name(SID2)}", [
        rec.meta(SID2, t(0)), rec.turn(t(1), "gpt-5"), rec.turn(t(2), "gpt-5.1-codex"), rec.turn(t(3), "gpt-5.1-codex"),
    ])
    [s] = home.read()
    assert s.model == "gpt-5.1-codex"


# ----------------------------------------------------------------------------------------------
# Tolerant reading


def test_partial_last_line_is_left_for_next_time(home, rec):
    cursor: dict = {}
    lines = [rec.meta(SID2), *rec.user("2026-02-01T10:00:01Z", "first")]
    half = json.dumps(rec.answer("2026-02-01T10:00:02Z", "an answer")[0])
    path = home.write(f"sessions/2026/02/01/{rec.rollout_name(SID2)}", lines, tail=half[:40])
    [s] = home.read(cursor)
    assert blocks(s) == [("user", "text", "first")]
    assert s.warnings == []
    assert s.cursor_value["bytes"] == path.stat().st_size - 40
    # the writer finishes the line
    with open(path, "a") as f:
        f.write(half[40:] + "\n")
    [s] = home.read(cursor)
    assert blocks(s) == [("user", "text", "first"), ("assistant", "text", "an answer")]


def test_malformed_middle_line_warns_with_file_and_line(home, rec):
    path = home.write(f"sessions/2026/02/01/{rec.rollout_name(SID2)}", [
        rec.meta(SID2), *rec.user("2026-02-01T10:00:01Z", "before"), '{"timestamp": "2026-02-01T10:00:02Z", "type": "resp', "[1, 2]",
        *rec.answer("2026-02-01T10:00:03Z", "after"),
    ])
    [s] = home.read()
    assert blocks(s) == [("user", "text", "before"), ("assistant", "text", "after")]
    assert s.warnings == [f"{path}:4: not a JSON object, skipped", f"{path}:5: not a JSON object, skipped"]


def test_unknown_types_warn_once_per_type(home, rec):
    t = "2026-02-01T10:00:0{}.000Z".format
    path = home.write(f"sessions/2026/02/01/{rec.rollout_name(SID2)}", [
        rec.meta(SID2, t(0)),
        rec.env(t(1), "hologram", {"x": 1}),
        *rec.user(t(2), "still read"),
        rec.env(t(3), "hologram", {"x": 2}),
        rec.env(t(4), "response_item", {"type": "telepathy_call", "call_id": "c"}),
        rec.env(t(5), "event_msg", {"type": "mood_changed"}),
        rec.env(t(6), "event_msg", {"type": "collab_agent_spawn_end"}),  # known family: quiet
    ])
    [s] = home.read()
    assert blocks(s) == [("user", "text", "still read")]
    assert s.warnings == [
        f"{path}:2: unknown record type 'hologram', skipped (2 times)",
        f"{path}:6: unknown item type 'telepathy_call', skipped",
        f"{path}:7: unknown event type 'mood_changed', skipped",
    ]


# ----------------------------------------------------------------------------------------------
# Titles, sub-agents and forks


def test_thread_name_is_the_title(home, rec):
    home.write(f"sessions/2026/02/01/{rec.rollout_name(SID2)}", [rec.meta(SID2), *rec.user("2026-02-01T10:00:01Z", "x" * 300)])
    [s] = home.read()
    assert s.title == "x" * 117 + "..."
    (home.root / "session_index.jsonl").write_text(
        json.dumps({"id": SID2, "thread_name": "Old name", "updated_at": "2026-02-01T10:00:00Z"}) + "\n"
        + json.dumps({"id": SID2, "thread_name": "Uploader retries", "updated_at": "2026-02-02T10:00:00Z"}) + "\n"
    )
    [s] = home.read()
    assert s.title == "Uploader retries"


def test_subagent_names_its_parent(home, rec):
    child = "019a0000-0000-7000-8000-000000000001"
    source = {"subagent": {"thread_spawn": {"parent_thread_id": SID2, "depth": 1, "agent_role": "explorer"}}}
    home.write(f"sessions/2026/02/01/{rec.rollout_name(child)}", [
        rec.meta(child, source=source, agent_nickname="Scout"), *rec.user("2026-02-01T10:00:01Z", "map the repo"),
    ])
    [s] = home.read()
    assert s.id == child and s.parent_id == SID2
    assert blocks(s) == [("user", "text", "map the repo")]


def test_fork_drops_the_copied_parent_history(home, rec):
    fork = "019a0000-0000-7000-8000-000000000002"
    t = "2026-02-01T10:00:0{}.000Z".format
    parent_lines = [rec.meta(SID2, t(0)), rec.turn(t(1)), *rec.user(t(1), "build the parser"), *rec.answer(t(2), "Parser built.")]
    home.write(f"sessions/2026/02/01/{rec.rollout_name(SID2)}", parent_lines)
    # The fork: its own meta, the parent's items (re-stamped), then its own turn.
    copied = [dict(line, timestamp="2026-02-01T11:00:00.000Z") for line in parent_lines]
    home.write(f"sessions/2026/02/01/{rec.rollout_name(fork, '2026-02-01T13-00-00')}", [
        rec.meta(fork, "2026-02-01T11:00:00.000Z", forked_from_id=SID2), *copied,
        rec.turn("2026-02-01T11:00:01Z"), *rec.user("2026-02-01T11:00:01Z", "now try a recursive descent version"),
        *rec.answer("2026-02-01T11:00:02Z", "Rewritten as recursive descent."),
    ])
    got = {s.id: s for s in home.read()}
    s = got[fork]
    assert s.parent_id == SID2
    assert blocks(s) == [("user", "text", "now try a recursive descent version"), ("assistant", "text", "Rewritten as recursive descent.")]
    assert s.title == "now try a recursive descent version"
    assert got[SID2].parent_id is None and len(got[SID2].blocks) == 2


def test_fork_without_its_parent_file_keeps_everything(home, rec):
    fork = "019a0000-0000-7000-8000-000000000002"
    home.write(f"sessions/2026/02/01/{rec.rollout_name(fork)}", [
        rec.meta(fork, forked_from_id=SID2), rec.meta(SID2), *rec.user("2026-02-01T10:00:01Z", "build the parser"),
        *rec.user("2026-02-01T11:00:01Z", "now the fork's own prompt"),
    ])
    [s] = home.read()
    assert s.id == fork and s.parent_id == SID2
    assert [b.text for b in s.blocks] == ["build the parser", "now the fork's own prompt"]


def rollout_name(sid, stamp="2026-02-01T11-00-00"):
    return f"rollout-{stamp}-{sid}.jsonl"


def meta(sid, ts="2026-02-01T10:00:00.000Z"):
    return {"timestamp": ts, "type": "session_meta", "payload": {"id": sid, "timestamp": ts, "cwd": "/work/proj"}}


def user(ts, text):
    return [{"timestamp": ts, "type": "event_msg", "payload": {"type": "user_message", "message": text}}]


def test_newer_image_wrappers_and_mcp_calls_fold(home, rec):
    t = "2026-03-01T10:00:0{}.000Z".format
    png = "data:image/png;base64," + "C" * 400
    home.write(f"sessions/2026/03/01/{rec.rollout_name(SID2)}", [
        rec.meta(SID2, t(0)),
        rec.env(t(1), "response_item", {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "<image name=[Image #1]>"}, {"type": "input_image", "image_url": png},
            {"type": "input_text", "text": "</image>"}, {"type": "input_text", "text": "why is [Image #1] blurry?"}]}),
        rec.env(t(1), "event_msg", {"type": "user_message", "message": "why is [Image #1] blurry?", "images": [],
                                    "local_images": ["/home/dev/shot.png"], "text_elements": []}),
        rec.env(t(2), "response_item", {"type": "function_call", "name": "mcp__docs__lookup", "arguments": '{"q": "blur"}', "call_id": "call_m"}),
        rec.env(t(3), "event_msg", {"type": "mcp_tool_call_end", "call_id": "call_m", "invocation": {"server": "docs", "tool": "lookup", "arguments": {"q": "blur"}},
                                    "result": {"Ok": {"content": [{"type": "text", "text": "no match"}], "isError": True}}}),
        rec.env(t(3), "response_item", {"type": "function_call_output", "call_id": "call_m", "output": "no match"}),
    ])
    [s] = home.read()
    assert blocks(s) == [
        ("user", "text", "[image: image/png, 300 bytes]\nwhy is [Image #1] blurry?"),
        ("assistant", "tool_call", '{"q":"blur"}'),
        ("tool", "tool_result", "no match"),
    ]
    assert s.blocks[2].is_error and s.blocks[2].tool == "mcp__docs__lookup"
    assert s.warnings == []
