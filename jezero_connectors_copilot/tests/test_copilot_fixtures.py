"""Hand-written Copilot event logs for what the sample does not show: bad lines, unknown events,
a growing session, sub-agent runs, the flat layout, tool actions, and the options."""

from __future__ import annotations

import json
import os

import pytest

from jezero import plugins
from jezero.plugin import ConnectorContext
from jezero_connectors_copilot import CopilotOptions, build, connector, demo, discover, normalize

SID = "c0b11071-0000-4000-8000-000000000001"


def texts(session):
    return [(b.role, b.kind, b.text) for b in session.blocks]


def test_malformed_lines_and_unknown_events_are_skipped_and_reported(copilot, rec):
    copilot.write([
        rec.start(), "{oops", rec.prompt("fix the login bug", 1),
        rec.event("session.teleported", 2, {"to": "mars"}), rec.event("session.teleported", 3),
        "42", rec.answer("Fixed the token check.", 4),
        rec.prompt("<system_notification>Shell 3 completed</system_notification>", 5),
    ])
    [s] = copilot.read()
    assert texts(s) == [("user", "text", "fix the login bug"), ("assistant", "text", "Fixed the token check.")]
    joined = "\n".join(s.warnings)
    assert ":2: not a JSON object" in joined and ":6: not a JSON object" in joined
    assert ":4: unknown event type 'session.teleported' (2 events)" in joined
    assert copilot.warnings == []


def test_growing_session_moves_the_cursor(copilot, rec):
    path = copilot.write([rec.start(), rec.prompt("step one", 1)], tail='{"type": "assistant.mess')
    cursor: dict = {}
    [s] = copilot.read(cursor)
    assert texts(s) == [("user", "text", "step one")]
    assert copilot.read(cursor) == []
    with open(path, "a") as f:
        f.write('age", "data": {"content": "half')  # still not a whole line
    assert copilot.read(cursor) == []
    with open(path, "a") as f:
        f.write(' done"}, "id": "e2", "timestamp": "2026-03-01T10:00:02.000Z", "parentId": "e1"}\n')
        f.write(json.dumps(rec.prompt("step two", 3)) + "\n")
    [s] = copilot.read(cursor)
    assert [b.text for b in s.blocks] == ["step one", "half done", "step two"]
    assert s.ended_at.isoformat() == "2026-03-01T10:00:03+00:00"
    assert copilot.read(cursor) == []
    os.utime(path, ns=(0, 10**18))
    assert copilot.read(cursor) == []


def test_tool_calls_actions_commands_paths_and_failures(copilot, rec):
    copilot.write([
        rec.start(), rec.prompt("go", 1),
        rec.answer("", 2, [rec.request("c1", "bash", {"command": "npm test", "description": "run tests"}),
                           rec.request("c2", "view", {"path": "/p/src/app.ts"}),
                           rec.request("c3", "edit", {"path": "/p/src/app.ts", "old_str": "a", "new_str": "b"}),
                           rec.request("c4", "create", json.dumps({"path": "/p/NOTES.md", "file_text": "x"})),
                           rec.request("c5", "grep", {"pattern": "TODO", "path": "/p/src"}),
                           rec.request("c6", "web_fetch", {"url": "https://example.com"}),
                           rec.request("c7", "task", {"agent_type": "explore", "prompt": "map the repo"}),
                           rec.request("c8", "str_replace_editor", {"command": "view", "path": "/p/a"}),
                           rec.request("c9", "apply_patch", "*** Begin Patch\n*** Update File: /p/b.py\n@@\n-x\n+y\n*** End Patch")]),
        rec.done("c1", 3, "2 failing", success=False),
        rec.done("c2", 4, "export const app = 1"),
        rec.event("tool.execution_start", 5, {"toolCallId": "c10", "toolName": "glob", "arguments": {"pattern": "**/*.ts"}}),
        rec.done("c10", 6, "src/app.ts"),
    ])
    [s] = copilot.read()
    calls = [(b.tool, b.action, b.command, b.paths) for b in s.blocks if b.kind == "tool_call"]
    assert calls == [
        ("bash", "shell", "npm test", []), ("view", "read", None, ["/p/src/app.ts"]),
        ("edit", "edit", None, ["/p/src/app.ts"]), ("create", "write", None, ["/p/NOTES.md"]),
        ("grep", "search", None, ["/p/src"]), ("web_fetch", "fetch", None, []), ("task", "subagent", None, []),
        ("str_replace_editor", "read", None, ["/p/a"]), ("apply_patch", "edit", None, ["/p/b.py"]),
        ("glob", "search", None, []),  # announced only by tool.execution_start
    ]
    assert s.blocks[1].text == "npm test"
    results = [(b.tool, b.is_error, b.text) for b in s.blocks if b.kind == "tool_result"]
    assert results == [("bash", True, "2 failing"), ("view", False, "export const app = 1"), ("glob", False, "src/app.ts")]
    assert [b.command for b in s.blocks if b.kind == "tool_result"][0] == "npm test"


def test_subagent_runs_become_child_sessions(copilot, rec):
    path = copilot.write([
        rec.start(), rec.prompt("explore the repo", 1),
        rec.answer("", 2, [rec.request("t1", "task", {"agent_type": "explore", "prompt": "list the modules"})]),
        rec.event("subagent.started", 3, {"toolCallId": "t1", "agentDisplayName": "Explore", "agentDescription": "list the modules"}, agentId="ag1"),
        rec.answer("", 4, [rec.request("s1", "glob", {"pattern": "src/*"})], agentId="ag1", model="claude-haiku-4.5"),
        rec.done("s1", 5, "src/a.py\nsrc/b.py", agentId="ag1"),
        rec.answer("Two modules: a and b.", 6, agentId="ag1", model="claude-haiku-4.5"),
        rec.event("subagent.completed", 7, {"toolCallId": "t1"}, agentId="ag1"),
        rec.done("t1", 8, "Two modules: a and b."),
        rec.answer("The repo has two modules.", 9),
    ])
    cursor: dict = {}
    sessions = {s.id: s for s in copilot.read(cursor)}
    parent, child = sessions[SID], sessions[f"{SID}/ag1"]
    assert [b.text for b in parent.blocks] == ["explore the repo", '{"agent_type":"explore","prompt":"list the modules"}',
                                               "Two modules: a and b.", "The repo has two modules."]
    assert [b.text for b in child.blocks] == ['{"pattern":"src/*"}', "src/a.py\nsrc/b.py", "Two modules: a and b."]
    assert (child.parent_id, child.title, child.model, child.cursor_key) == (SID, "Explore: list the modules", "claude-haiku-4.5", f"{SID}#ag1")
    assert parent.cursor_value["children"] == [f"{SID}#ag1"] and parent.model == "gpt-4.1"
    assert parent.ended_at == child.ended_at or parent.ended_at > child.ended_at
    assert copilot.read(cursor) == []
    del cursor[f"{SID}#ag1"]  # the child was deferred: the file is read again, only the child comes back
    assert [s.id for s in copilot.read(cursor)] == [f"{SID}/ag1"]
    assert path.exists()


def test_flat_layout_workspace_yaml_and_precedence(copilot, rec):
    other = "0ld00000-0000-4000-8000-000000000000"
    copilot.write([rec.event("session.start", 0, {"sessionId": other}), rec.prompt("flat file session", 1)], sid=other, flat=True)
    copilot.write([rec.event("session.start", 0, {"sessionId": SID}), rec.prompt("hello", 1)],
                  workspace=f"id: {SID}\ncwd: /srv/app\nbranch: 'feature/x'\nname: \"Tidy the config\"\nsummary: |\n  more\n")
    copilot.write([rec.prompt("a stale flat copy", 1)], flat=True)  # the folder keeps the id
    sessions = {s.id: s for s in copilot.read()}
    # The flat file holds other events: kept too, under an id of its own (before: never read).
    assert set(sessions) == {SID, other, f"{SID}@flat"}
    assert (sessions[SID].cwd, sessions[SID].git_branch, sessions[SID].title) == ("/srv/app", "feature/x", "Tidy the config")
    assert sessions[other].title == "flat file session" and sessions[other].cwd is None
    assert "a stale flat copy" in sessions[f"{SID}@flat"].blocks[0].text
    assert any("kept as session" in w for w in copilot.warnings), copilot.warnings


def test_a_file_vanishing_mid_read_warns(copilot, rec, monkeypatch):
    path = copilot.write([rec.start(), rec.prompt("soon gone", 1)])
    walk = connector.walk

    def walk_then_delete(state, warn):
        found = walk(state, warn)
        path.unlink()
        return found

    monkeypatch.setattr(connector, "walk", walk_then_delete)
    assert copilot.read() == []
    assert len(copilot.warnings) == 1 and "vanished" in copilot.warnings[0]


def test_options_env_discover_and_demo(tmp_path, monkeypatch, sessions):
    with pytest.raises(ValueError, match="unknown option 'since'"):
        build({"since": "today"}, ConnectorContext("t", print))
    with pytest.raises(ValueError, match="option 'path' must be a folder path"):
        build({"path": ["a"]}, ConnectorContext("t", print))
    assert CopilotOptions.model_config["extra"] == "forbid"
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("COPILOT_HOME", raising=False)
    assert build({}, ConnectorContext("t", print)).home == tmp_path / "home" / ".copilot"
    assert build({"path": "~/cp"}, ConnectorContext("t", print)).home == tmp_path / "home" / "cp"
    assert discover() == []
    options = demo(tmp_path / "demo", sessions)
    monkeypatch.setenv("COPILOT_HOME", options["path"])
    assert discover() == [options]
    warnings: list[str] = []
    read = list(build({}, ConnectorContext("t", warnings.append)).read({}))
    assert len(read) == 2 and warnings == [] and all(s.cwd == "/home/demo/src/mobile-app" for s in read)
    assert {s.id for s in read} == {s.id for s in sessions} and {s.git_branch for s in read} == {"main"}


def test_the_demo_writes_prompts_answers_and_commands_with_their_failure(tmp_path, sessions):
    warnings: list[str] = []
    read = build(demo(tmp_path, sessions), ConnectorContext("t", warnings.append)).read({})
    first = next(s for s in read if s.id == sessions[0].id)
    assert [(b.role, b.kind) for b in first.blocks] == [("user", "text"), *[("assistant", "tool_call"), ("tool", "tool_result")] * 2,
                                                       ("assistant", "text")]
    results = [b for b in first.blocks if b.kind == "tool_result"]
    assert [(b.action, b.command) for b in results] == [("shell", "./gradlew assembleDebug")] * 2
    assert [b.is_error for b in results] == [True, False]  # "<exited with exit code 1>": the command failed
    assert "Namespace not specified" in results[0].text and warnings == []


def test_missing_home_warns(tmp_path):
    warnings: list[str] = []
    assert list(build({"path": str(tmp_path / "nope")}, ConnectorContext("t", warnings.append)).read({})) == []
    assert warnings and "nope" in warnings[0]


def test_registered_through_the_plugin_host(copilot, rec, tmp_path):
    copilot.write([rec.start(), rec.prompt("via the host", 1)])
    kind = plugins.connector_types()["copilot"]
    assert kind.plugin == "jezero_connectors_copilot" and not kind.description.startswith("planned")
    assert kind.options is CopilotOptions and kind.discover is discover and kind.demo is demo
    assert kind.normalize is normalize
    [s] = kind.build({"path": str(copilot.root)}, ConnectorContext("c", copilot.warnings.append)).read({})
    assert s.agent == "copilot-cli" and s.blocks[0].text == "via the host"
