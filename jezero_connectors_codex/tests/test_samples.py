"""The real Codex rollouts in shared/samples (X1: 0.77 exec, X2: 0.125 TUI), read in place."""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

import pytest

from jezero import plugins
from jezero.models import ConnectorContext

SAMPLES = Path(__file__).resolve().parents[2].parent / "shared" / "samples"
CODEX_HOME = SAMPLES / "codex"

pytestmark = pytest.mark.skipif(not CODEX_HOME.is_dir(), reason=f"real transcript samples not found at {CODEX_HOME}")

X1 = "019b7f94-51b4-7593-922e-ba12b5b73b52"
X2 = "019e1625-789d-76c0-80ab-3724b5ddb799"


@pytest.fixture(scope="module")
def sessions():
    warnings: list[str] = []
    connector = plugins.connector_types()["codex"].build({"path": str(CODEX_HOME)}, ConnectorContext("samples", warnings.append))
    found = {s.id: s for s in connector.read({})}
    assert warnings == []
    return found


def texts(session, role, kind="text"):
    return [b.text for b in session.blocks if b.role == role and b.kind == kind]


def test_both_samples_are_read(sessions):
    assert set(sessions) == {X1, X2}
    for s in sessions.values():
        assert s.agent == "codex"
        assert s.cursor_key == s.id  # the id in the file name
        assert s.warnings == []
        assert s.parent_id is None


def test_x1_exec_session(sessions):
    s = sessions[X1]
    assert s.cwd == "/Users/Nikita_Levyankov/repos/EPMCDME/codemie-ai/codemie-code"
    assert s.git_branch == "codex"
    assert s.model == "gpt-5-1-codex-2025-11-13"
    # The file name says 18-39-45 (local time); the records are UTC.
    assert s.started_at == datetime(2026, 1, 2, 16, 39, 45, 332000, tzinfo=timezone.utc)
    assert s.ended_at == datetime(2026, 1, 2, 16, 39, 58, 808000, tzinfo=timezone.utc)
    prompt = "what is current repository about? summarize purpuse and explain goals"
    # Three response_item user messages (AGENTS.md, environment_context, the prompt) plus the
    # user_message event: one block.
    assert texts(s, "user") == [prompt]
    assert s.title == prompt
    calls = [b for b in s.blocks if b.kind == "tool_call"]
    assert [b.text for b in calls] == ["ls", "rg --files -g 'AGENTS.md'", "sed -n '1,160p' README.md"]
    assert {b.tool for b in calls} == {"shell"}
    results = [b for b in s.blocks if b.kind == "tool_result"]
    assert len(results) == 3 and not any(b.is_error for b in results)
    assert "CLAUDE.md" in results[0].text and results[1].text == "docs/AGENTS.md\n"
    assert results[2].text.startswith("# AI/Run CodeMie CLI")
    # agent_reasoning (line 21) and the reasoning item (line 22) fold; empty summaries give nothing.
    thinking = texts(s, "assistant", "thinking")
    assert len(thinking) == 1 and thinking[0].startswith("**Clarifying documentation instructions**")
    # The run stops mid-turn: no answer yet.
    assert texts(s, "assistant") == []
    assert len(s.blocks) == 8


def test_x2_tui_session(sessions):
    s = sessions[X2]
    assert s.cwd == "/Users/Sample_User/repos/codemie-ai/codemie-code"
    assert s.git_branch == "feat/codex-agent-plugin"
    assert s.model == "gpt-5.5"
    assert s.started_at == datetime(2026, 5, 11, 8, 26, 55, 42000, tzinfo=timezone.utc)
    assert s.ended_at == datetime(2026, 5, 11, 8, 44, 58, 544000, tzinfo=timezone.utc)
    assert texts(s, "user") == ["show tools", "let's update the defailt context compart to 90 in env var"]
    assert s.title == "show tools"
    answers = texts(s, "assistant")
    # 13 agent_message events mirror 13 assistant messages: 13 blocks, none repeated.
    assert len(answers) == 13 and len(set(answers)) == 13
    assert answers[0].startswith("Available tool groups in this session:")
    assert answers[-1].startswith("Implemented the default context compaction setting as `threshold: 0.9`")
    kinds = Counter((b.role, b.kind) for b in s.blocks)
    # 99 function calls + 3 apply_patch custom calls + 3 web searches (each call/end pair folded)
    assert kinds[("assistant", "tool_call")] == 105
    # 99 + 3 outputs; the 43 exec_command_end and 3 patch_apply_end events fold into them
    assert kinds[("tool", "tool_result")] == 102
    assert kinds[("assistant", "thinking")] == 0  # every reasoning item is encrypted only


def test_x2_tool_calls(sessions):
    s = sessions[X2]
    calls = [b for b in s.blocks if b.kind == "tool_call"]
    assert Counter(b.tool for b in calls) == {"write_stdin": 54, "exec_command": 43, "apply_patch": 3, "update_plan": 2, "web_search": 3}
    commands = [b.text for b in calls if b.tool == "exec_command"]
    assert "git status --short" in commands
    assert "sed -n '1,240p' src/utils/config.ts" in commands
    patches = [b.text for b in calls if b.tool == "apply_patch"]
    assert all(p.startswith("*** Begin Patch\n*** Update File: ") for p in patches)
    searches = [b.text for b in calls if b.tool == "web_search"]
    assert searches[1].startswith("site:opencode.ai/docs compaction threshold opencode 90 reserved")
    # exit codes come from exec_command_end and from unified exec's "Process exited with code N"
    failed = [b for b in s.blocks if b.kind == "tool_result" and b.is_error]
    assert any("rg: node_modules/opencode-ai: No such file or directory" in b.text for b in failed)
    assert {b.tool for b in failed} == {"exec_command", "write_stdin"}
    ok = next(b for b in s.blocks if b.kind == "tool_result" and b.tool == "write_stdin" and not b.is_error)
    assert not ok.text.startswith("Chunk ID")  # unified exec's bookkeeping header is dropped


def test_scaffolding_and_binary_never_become_blocks(sessions):
    for s in sessions.values():
        everything = "\n".join(b.text for b in s.blocks)
        for needle in ("<permissions instructions>", "# AGENTS.md instructions", "<environment_context>", "gAAAAA", "data:image"):
            assert needle not in everything, (s.id, needle)
        for b in s.blocks:
            assert b.time is not None and b.time.tzinfo is not None


def test_unchanged_samples_are_not_yielded_again(sessions):
    connector = plugins.connector_types()["codex"].build({"path": str(CODEX_HOME)}, ConnectorContext("samples", print))
    cursor = {s.cursor_key: json.loads(json.dumps(s.cursor_value)) for s in sessions.values()}
    assert list(connector.read(cursor)) == []


def test_newest_0_171_rollouts_warn_about_nothing():
    """X3 + X4 (Codex 0.171): the event thread_settings_applied is known, not warned (issue 10)."""
    from jezero.models import ConnectorContext
    from jezero_connectors_codex import build

    newest = SAMPLES / "newest" / "codex"
    if not newest.is_dir():
        pytest.skip(f"newest samples not found at {newest}")
    warned: list[str] = []
    sessions = list(build({"path": str(newest)}, ConnectorContext("codex-test", warned.append)).read({}))
    assert len(sessions) == 2 and all(s.blocks for s in sessions)
    assert [w for s in sessions for w in s.warnings] == [] and warned == []
