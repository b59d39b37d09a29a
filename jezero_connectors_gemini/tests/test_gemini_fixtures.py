"""Hand-written Gemini recordings for what the sample does not show: bad lines, unknown records,
a growing session, rewinds, snapshots, the older .json format, sub-agents, and the options."""

from __future__ import annotations

import json
import os

import pytest

from jezero import plugins
from jezero.plugin import ACTIONS, ConnectorContext
from jezero_connectors_gemini import GeminiOptions, build, discover, store, write_demo

SID = "5e551011-0000-4000-8000-000000000001"


def texts(session):
    return [(b.role, b.kind, b.text) for b in session.blocks]


def test_a_simple_session(gemini, rec):
    gemini.write([rec.header(), rec.user("u1", "make the build faster", 1), rec.gemini_msg("g1", "Use a cache.", 2)])
    [s] = gemini.read()
    assert texts(s) == [("user", "text", "make the build faster"), ("assistant", "text", "Use a cache.")]
    assert (s.id, s.cwd, s.model, s.title) == (SID, rec.CWD, "gemini-2.5-pro", "make the build faster")
    assert s.started_at.tzinfo is not None and s.ended_at.isoformat() == "2026-03-01T10:00:02+00:00"
    assert gemini.warnings == [] and s.warnings == []


def test_malformed_lines_and_unknown_records_are_skipped_and_reported(gemini, rec):
    gemini.write([
        rec.header(),
        "{not json",
        rec.user("u1", "first prompt", 1),
        '["a list, not an object"]',
        {"$futureOp": {"x": 1}},
        {"id": "w1", "timestamp": rec.stamp(2), "type": "hologram", "content": "??"},
        rec.gemini_msg("g1", "an answer", 3),
    ])
    [s] = gemini.read()
    assert texts(s) == [("user", "text", "first prompt"), ("assistant", "text", "an answer")]
    joined = "\n".join(s.warnings)
    assert ":2: not a JSON object" in joined and ":4: not a JSON object" in joined
    assert "unknown record without id, $set or $rewindTo" in joined and "unknown message type 'hologram'" in joined
    assert gemini.warnings == []  # problems inside one session travel with it, not the whole run


def test_growing_session_moves_the_cursor(gemini, rec):
    lines = [rec.header(), rec.user("u1", "step one", 1), rec.gemini_msg("g1", "done one", 2)]
    path = gemini.write(lines, tail='{"id": "u2", "timestamp": "2026-03-01T10:00')  # a line still being written
    cursor: dict = {}
    [s] = gemini.read(cursor)
    assert len(s.blocks) == 2
    assert gemini.read(cursor) == []  # nothing new
    with open(path, "a") as f:
        f.write(':03.000Z", "type": ')  # the partial line grows, still incomplete
    assert gemini.read(cursor) == []
    with open(path, "a") as f:
        f.write('"user", "content": [{"text": "step two"}]}\n')
        f.write(json.dumps(rec.gemini_msg("g2", "done two", 4)) + "\n")
    [s] = gemini.read(cursor)
    assert [b.text for b in s.blocks] == ["step one", "done one", "step two", "done two"]
    assert s.ended_at.isoformat() == "2026-03-01T10:00:04+00:00"
    assert gemini.read(cursor) == []
    os.utime(path, ns=(0, 10**18))  # touched, same bytes
    assert gemini.read(cursor) == []


def test_a_deferred_session_comes_back(gemini, rec):
    gemini.write([rec.header(), rec.user("u1", "hello", 1)])
    cursor: dict = {}
    assert len(list(gemini.connector().read(cursor))) == 1  # not stored: the cursor does not move
    assert len(gemini.read(cursor)) == 1
    assert gemini.read(cursor) == []


def test_rewritten_turn_rewind_and_snapshot(gemini, rec):
    first = rec.gemini_msg("g1", "", 2)
    gemini.write([
        rec.header(),
        {"$set": {"messages": [rec.user("ctx", "<session_context>\n- **Workspace Directories:**\n  - /elsewhere\n</session_context>", 0)]}},
        rec.user("u1", "<hook_context>injected by a hook</hook_context>\n\nrun the tests", 1),
        first,
        first | {"toolCalls": [rec.call("c1", "run_shell_command", {"command": "pytest -q"}, "3 failed", 2, status="error")]},
        rec.user("u2", "never mind that", 3),
        rec.gemini_msg("g2", "ok", 4),
        {"$rewindTo": "u2"},
        rec.gemini_msg("g3", "The tests fail in test_api.py.", 5),
    ])
    [s] = gemini.read()
    assert texts(s) == [
        ("user", "text", "run the tests"),
        ("assistant", "tool_call", "pytest -q"),
        ("tool", "tool_result", "3 failed"),
        ("assistant", "text", "The tests fail in test_api.py."),
    ]
    call, result = s.blocks[1], s.blocks[2]
    assert (call.action, call.command, call.tool) == ("shell", "pytest -q", "run_shell_command")
    assert result.is_error and result.action == "shell"
    assert s.cwd == rec.CWD  # projects.json and the hash agree; the context's folder does not


def test_snapshot_replaces_the_messages_before_it(gemini, rec):
    gemini.write([
        rec.header(), rec.user("u1", "old wording", 1),
        {"$set": {"messages": [rec.user("u1", "new wording", 1)], "summary": "Rename the config keys"}},
        rec.gemini_msg("g1", "renamed", 2),
    ])
    [s] = gemini.read()
    assert [b.text for b in s.blocks] == ["new wording", "renamed"]
    assert s.title == "Rename the config keys"  # Gemini's own summary of the chat


def test_tool_actions_commands_and_paths(gemini, rec):
    calls = [
        rec.call("c1", "read_file", {"file_path": "/p/a.py"}, "x = 1", 2),
        rec.call("c2", "read_many_files", {"paths": ["/p/b.py", "/p/c.py"]}, "...", 2),
        rec.call("c3", "replace", {"file_path": "/p/a.py", "old_string": "1", "new_string": "2"}, "ok", 2),
        rec.call("c4", "write_file", {"file_path": "/p/new.py", "content": "y"}, "ok", 2),
        rec.call("c5", "grep_search", {"pattern": "TODO", "dir_path": "/p"}, "a.py:1", 2),
        rec.call("c6", "google_web_search", {"query": "python 3.14 release"}, "...", 2),
        rec.call("c7", "write_todos", {"todos": []}, "ok", 2),
        rec.call("c8", "mcp_jira_create_issue", {"title": "x"}, "JIRA-1", 2, status="cancelled"),
    ]
    gemini.write([rec.header(), rec.user("u1", "go", 1), rec.gemini_msg("g1", "", 2, toolCalls=calls)])
    [s] = gemini.read()
    got = [(b.tool, b.action, b.paths) for b in s.blocks if b.kind == "tool_call"]
    assert got == [
        ("read_file", "read", ["/p/a.py"]), ("read_many_files", "read", ["/p/b.py", "/p/c.py"]),
        ("replace", "edit", ["/p/a.py"]), ("write_file", "write", ["/p/new.py"]), ("grep_search", "search", ["/p"]),
        ("google_web_search", "fetch", []), ("write_todos", "plan", []), ("mcp_jira_create_issue", "other", []),
    ]
    assert all(b.action in ACTIONS for b in s.blocks if b.kind.startswith("tool"))
    assert [b.is_error for b in s.blocks if b.kind == "tool_result"] == [False] * 7 + [True]


def test_legacy_json_and_its_migrated_twin(gemini, rec):
    doc = rec.header(sid="0ld00000-0000-4000-8000-000000000000") | {
        "messages": [rec.user("u1", "an old chat", 1), rec.gemini_msg("g1", "old answer", 2)]}
    path = gemini.write([], name="session-2025-12-01T21-45-0ld00000.json")
    path.write_text(json.dumps(doc, indent=2))
    gemini.write([], name="session-2025-12-01T21-45-broken00.json").write_text('{"sessionId": "x", "messa')
    [s] = gemini.read()
    assert [b.text for b in s.blocks] == ["an old chat", "old answer"] and s.cursor_key == "session-2025-12-01T21-45-0ld00000"
    assert any("broken00.json: not valid JSON" in w for w in gemini.warnings)
    # Resuming the chat migrates it to .jsonl beside the .json: only the .jsonl is read, same key.
    gemini.write([rec.header(sid="0ld00000-0000-4000-8000-000000000000"), rec.user("u1", "an old chat", 1),
                  rec.gemini_msg("g1", "old answer", 2), rec.user("u2", "resumed", 3)],
                 name="session-2025-12-01T21-45-0ld00000.jsonl")
    [s] = [x for x in gemini.read() if x.cursor_key.endswith("0ld00000")]
    assert [b.text for b in s.blocks][-1] == "resumed"


def test_subagent_chat_links_to_its_parent(gemini, rec):
    gemini.write([rec.header(), rec.user("u1", "investigate", 1)])
    child = "c41d0000-0000-4000-8000-000000000002"
    gemini.write([rec.header(sid=child, kind="subagent", directories=[rec.CWD]), rec.user("s1", "look at src/", 1)],
                 name=f"{SID}/{child}.jsonl")
    sessions = {s.id: s for s in gemini.read()}
    assert sessions[child].parent_id == SID and sessions[child].cursor_key == f"{SID}/{child}"
    assert sessions[SID].parent_id is None and sessions[child].cwd == rec.CWD


def test_project_folder_named_by_hash_or_marker(gemini, rec):
    import hashlib

    hashed = hashlib.sha256(b"/srv/legacy").hexdigest()
    gemini.write([rec.header(cwd="/srv/legacy"), rec.user("u1", "old layout", 1)], project=hashed, register=False)
    (gemini.root / "projects.json").write_text(json.dumps({"projects": {"/srv/legacy": "legacy"}}))
    [s] = gemini.read()
    assert s.cwd == "/srv/legacy"
    marker_only = gemini.root / "tmp" / hashed / ".project_root"
    marker_only.write_text("/srv/legacy\n")
    (gemini.root / "projects.json").unlink()
    assert gemini.read()[0].cwd == "/srv/legacy"


def test_a_file_vanishing_mid_read_warns(gemini, rec, monkeypatch):
    path = gemini.write([rec.header(), rec.user("u1", "soon gone", 1)])
    walk = store.walk

    def walk_then_delete(root, warn):
        found = walk(root, warn)
        path.unlink()  # Gemini deleted the chat between the listing and the read
        return found

    monkeypatch.setattr(store, "walk", walk_then_delete)
    assert gemini.read() == []
    assert len(gemini.warnings) == 1 and "vanished" in gemini.warnings[0] and str(path) in gemini.warnings[0]


def test_missing_folder_warns(tmp_path):
    warnings: list[str] = []
    assert list(build({"path": str(tmp_path / "nope")}, ConnectorContext("t", warnings.append)).read({})) == []
    assert warnings and "no Gemini CLI chats" in warnings[0]


def test_options_env_discover_and_demo(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="unknown option 'colour'"):
        build({"colour": "blue"}, ConnectorContext("t", print))
    with pytest.raises(ValueError, match="'path'"):
        build({"path": 3}, ConnectorContext("t", print))
    assert GeminiOptions.model_config["extra"] == "forbid"
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # never the real home
    monkeypatch.delenv("GEMINI_CLI_HOME", raising=False)
    assert build({}, ConnectorContext("t", print)).root == tmp_path / "home" / ".gemini"
    assert discover() == []
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "alt"))
    options = write_demo(tmp_path / "demo")
    assert options == {"path": str(tmp_path / "demo" / "gemini")}
    (tmp_path / "alt").mkdir()
    (tmp_path / "demo" / "gemini").rename(tmp_path / "alt" / ".gemini")  # the demo's folder as a real home
    assert discover() == [{"path": str(tmp_path / "alt" / ".gemini")}]
    assert build({}, ConnectorContext("t", print)).root == tmp_path / "alt" / ".gemini"
    warnings: list[str] = []
    sessions = list(build({"path": str(tmp_path / "alt")}, ConnectorContext("t", warnings.append)).read({}))
    assert len(sessions) == 2 and warnings == [] and all(s.cwd == "/home/demo/src/weather-app" for s in sessions)
    assert any(b.action == "edit" and b.paths for s in sessions for b in s.blocks)


def test_registered_through_the_plugin_host(gemini, rec, tmp_path):
    gemini.write([rec.header(), rec.user("u1", "via the host", 1)])
    kind = plugins.connector_types()["gemini"]  # the core's planned "gemini" gives way to the plugin
    assert kind.plugin == "jezero_connectors_gemini" and not kind.description.startswith("planned")
    assert kind.options is GeminiOptions and kind.discover is discover and kind.demo is write_demo
    [s] = kind.build({"path": str(gemini.root)}, ConnectorContext("gemini", gemini.warnings.append)).read({})
    assert s.agent == "gemini-cli" and s.blocks[0].text == "via the host"
    demo = kind.demo(tmp_path / "d")
    assert len(list(kind.build(demo, ConnectorContext("d", print)).read({}))) == 2
