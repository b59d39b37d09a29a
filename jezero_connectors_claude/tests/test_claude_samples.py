"""The real transcripts in ../shared/samples/claude (see SOURCES.md there): C1 loose 1.0.119,
C2 1.0.51 with summaries and hook lines, C3 + C4 2.1.17 main session and nested sub-agent."""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone

from jezero_connectors_claude import build

C1_ID = "67a8478e-78dc-44ab-82ea-f65c8ead85f6"
C2_ID = "326189cf-5676-4237-8cde-1ce80aae4a9f"
C3_ID = "29ccd257-68b1-427f-ae5f-6524b7cb6f20"
C4_ID = f"{C3_ID}/agent-a2271d1"
BASE64_RUN = re.compile(r"[A-Za-z0-9+/=]{300,}")


def read_all(path, context, cursor=None):
    connector = build({"path": str(path)}, context)
    return list(connector.read({} if cursor is None else cursor))


def texts(session, role=None, kind=None, tool=None):
    return [
        b.text for b in session.blocks
        if (role is None or b.role == role) and (kind is None or b.kind == kind) and (tool is None or b.tool == tool)
    ]


def assert_clean(session):
    for block in session.blocks:
        assert not BASE64_RUN.search(block.text), f"base64-like run in {block.kind} block"
        assert "\x1b[" not in block.text
        assert "<system-reminder>" not in block.text
        assert len(block.text) <= 16100


def test_c1_loose_file_takes_its_id_from_the_records(samples, context):
    (session,) = read_all(samples / "loose", context)
    assert session.id == C1_ID  # the file is tiny-conversation.jsonl
    assert session.agent == "claude-code"
    assert session.cursor_key == "tiny-conversation.jsonl"
    assert session.cwd == "/Users/testuser/Documents/GitHub/projects/example-project/.worktrees/streaming"
    assert session.git_branch == "feature-branch"
    assert session.model == "claude-opus-4-1-20250805"
    assert session.parent_id is None
    assert session.title is None
    assert session.started_at == datetime(2025, 9, 19, 17, 34, 29, 181000, tzinfo=timezone.utc)
    assert session.ended_at > session.started_at
    prompts = texts(session, "user", "text")
    assert len(prompts) == 2
    assert prompts[0].startswith("Lately, I've noticed you being very tentative.")
    assert prompts[1] == "What's the right way to fix the instructions?"
    # msg_013Az… is split over two lines (text, then tool_use): each block once, in order.
    assert texts(session, "assistant", "text").count("I'd suggest these changes to your CLAUDE.md:") == 1
    assert [b.kind for b in session.blocks] == [
        "text", "text", "text", "text", "tool_call", "tool_result", "text",
    ]
    (call,) = texts(session, kind="tool_call", tool="mcp__private-journal__process_thoughts")
    assert "annoyingly tentative" in call
    (result,) = [b for b in session.blocks if b.kind == "tool_result"]
    assert result.tool == "mcp__private-journal__process_thoughts"
    assert result.role == "tool" and result.text == "Thoughts recorded successfully." and not result.is_error
    assert session.warnings == []
    assert context.warned == []
    assert_clean(session)


def test_c2_cwd_comes_from_the_records_not_the_folder_name(samples, context):
    sessions = {s.id: s for s in read_all(samples, context)}
    session = sessions[C2_ID]
    assert session.cursor_key.startswith("-Users-dain-workspace-claude-code-log-sample/")
    assert session.cwd == "/Users/dain/workspace/claude-code-log"
    assert session.git_branch is None  # 1.0.51 wrote no gitBranch
    assert session.model == "claude-sonnet-4-20250514"
    # Its four summary lines name other sessions' leaves: not this session's title.
    assert session.title is None
    assert session.warnings == []

    everything = "\n".join(b.text for b in session.blocks)
    assert "Caveat:" not in everything  # an isMeta line
    assert texts(session, "user", "text") == ["please fix these"]
    # The user's own `!uv run ty check`, and its output.
    assert session.blocks[0].role == "user" and session.blocks[0].kind == "tool_call"
    assert session.blocks[0].tool == "Bash" and session.blocks[0].text == "uv run ty check"
    assert "possibly-unbound-attribute" in session.blocks[1].text
    # The agent's Bash calls, verbatim, one of them failing.
    bash = [b for b in session.blocks if b.kind == "tool_call" and b.tool == "Bash" and b.role == "assistant"]
    assert [b.text for b in bash] == ["uv run ty check"] * 3
    failed = [b for b in session.blocks if b.kind == "tool_result" and b.is_error]
    assert len(failed) == 2 and all(b.tool == "Bash" for b in failed)
    assert "call-non-callable" in failed[0].text
    edits = texts(session, kind="tool_call", tool="Edit")
    assert edits == ["/Users/dain/workspace/claude-code-log/test/test_cache.py"] * 3
    assert texts(session, kind="tool_call", tool="MultiEdit") == ["/Users/dain/workspace/claude-code-log/test/test_cache.py (2 edits)"]
    assert any("[completed] Fix call-non-callable error for pytest.skip()" in t for t in texts(session, tool="TodoWrite"))
    # Edit's toolUseResult.originalFile (the whole test file) never reaches a block.
    assert "Mock library version for consistent testing." not in everything
    # Hook output from the 12 system lines, ANSI stripped.
    hooks = texts(session, "system", "meta")
    assert len(hooks) == 12
    assert "PostToolUse:MultiEdit [uv run ruff format] completed successfully: 1 file reformatted, 26 files left unchanged" in hooks
    # 20 assistant lines for 15 message ids, 20 content blocks: none lost, none doubled.
    assert len([b for b in session.blocks if b.role == "assistant"]) == 20
    assert_clean(session)


def test_c3_c4_subagent_is_a_child_session_of_its_parent(samples, context):
    sessions = read_all(samples, context)
    ids = [s.id for s in sessions]
    assert sorted(ids) == sorted([C2_ID, C3_ID, C4_ID])
    assert ids.index(C3_ID) < ids.index(C4_ID)  # the parent comes first
    main = sessions[ids.index(C3_ID)]
    child = sessions[ids.index(C4_ID)]

    assert main.parent_id is None
    assert main.cwd == "/src/experiments/claude_p"
    assert main.git_branch is None  # "" in the records
    assert main.model == "claude-opus-4-5-20251101"
    assert main.warnings == []  # queue-operation and progress are known metadata
    assert texts(main, "user", "text") == [
        "Use the Explore task in sub-agents with Haiku model to give me an overview of the code "
        "organization in the /workspace/claude-code-log project"
    ]
    (task,) = texts(main, "assistant", "tool_call", "Task")
    assert task.startswith("Explore: Explore codebase structure\nGive me a comprehensive overview")
    (report,) = [b for b in main.blocks if b.kind == "tool_result"]
    assert report.tool == "Task" and "Comprehensive Code Organization Overview" in report.text
    assert texts(main, "assistant", "text")[0].startswith("Here's an overview of the **claude-code-log** project organization")

    assert child.parent_id == C3_ID
    assert child.cursor_key == "-src-experiments-claude_p/29ccd257-68b1-427f-ae5f-6524b7cb6f20/subagents/agent-a2271d1.jsonl"
    assert child.model == "claude-haiku-4-5-20251001"
    assert child.cwd == "/src/experiments/claude_p"
    assert child.warnings == []
    assert texts(child, "user", "text")[0].startswith("Give me a comprehensive overview of the code organization")
    calls = [b for b in child.blocks if b.kind == "tool_call"]
    results = [b for b in child.blocks if b.kind == "tool_result"]
    assert len(calls) == 24 and len(results) == 24
    assert {b.tool for b in calls} == {"Bash", "Read"}
    assert [b.tool for b in results].count("Bash") == 12
    assert "ls -la /workspace/claude-code-log" in texts(child, tool="Bash", kind="tool_call")
    assert "/workspace/claude-code-log/README.md" in texts(child, tool="Read", kind="tool_call")
    # 34 assistant lines for 10 message ids: 10 texts + 24 calls, each once.
    assert len(texts(child, "assistant", "text")) == 10
    assert child.started_at >= main.started_at and child.ended_at <= main.ended_at
    for session in sessions:
        assert_clean(session)


def test_samples_cursor_round_trip(samples, context):
    cursor: dict = {}
    first = read_all(samples, context, cursor)
    assert len(first) == 3
    for session in first:
        cursor[session.cursor_key] = json.loads(json.dumps(session.cursor_value))  # as a store keeps it
        assert session.cursor_value["consumed"] == session.cursor_value["sig"][0]  # every sample ends in \n
    assert read_all(samples, context, cursor) == []
    # A session the pipeline deferred (its entry not stored) comes back, alone.
    del cursor[first[0].cursor_key]
    assert [s.id for s in read_all(samples, context, cursor)] == [first[0].id]


def test_store_root_and_projects_folder_are_the_same(samples, context):
    a = [s.id for s in read_all(samples, context)]
    b = [s.id for s in read_all(samples / "projects", context)]
    assert a == b


def test_newest_2_1_332_record_types_are_known_not_warned(samples, context):
    """C5-C7 (Claude Code 2.1.197 and 2.1.332): api-request, api-request-shape,
    api-request-blob, tools-used and cost-state are understood, not reported (issue 10)."""
    newest = samples.parent / "newest" / "claude"
    if not newest.is_dir():
        import pytest

        pytest.skip(f"newest samples not found at {newest}")
    sessions = read_all(newest, context)
    assert len(sessions) == 3 and all(s.blocks for s in sessions)
    assert [w for s in sessions for w in s.warnings] == [] and context.warned == []
