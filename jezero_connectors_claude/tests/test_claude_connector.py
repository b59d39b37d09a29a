"""Options, the default store location, and the connector type as the plugin host offers it."""

from __future__ import annotations

import json

import pytest

import jezero.plugins
from jezero_connectors_claude import ClaudeConnector, build

SID = "44444444-2222-4333-8444-555555555555"


def write_session(projects, cwd="/srv/app"):
    path = projects / "-srv-app" / f"{SID}.jsonl"
    path.parent.mkdir(parents=True)
    rec = {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": SID, "cwd": cwd,
           "timestamp": "2026-02-01T08:00:00.000Z", "message": {"role": "user", "content": "deploy the app"}}
    path.write_text(json.dumps(rec) + "\n")
    return path


def test_unknown_option_is_rejected_by_name(tmp_path, context):
    with pytest.raises(ValueError, match="unknown option 'colour'"):
        build({"path": str(tmp_path), "colour": "blue"}, context)
    with pytest.raises(ValueError, match="'path' must be a folder path"):
        build({"path": 42}, context)


def test_claude_config_dir_is_respected(tmp_path, context, monkeypatch):
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cfg"))
    write_session(tmp_path / "cfg" / "projects")
    connector = build({}, context)
    assert connector.root == tmp_path / "cfg" / "projects"
    assert [s.id for s in connector.read({})] == [SID]


def test_default_is_home_dot_claude_projects(tmp_path, context, monkeypatch):
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # never the real home
    write_session(tmp_path / ".claude" / "projects")
    connector = build({}, context)
    assert connector.root == tmp_path / ".claude" / "projects"
    assert [s.cwd for s in connector.read({})] == ["/srv/app"]


def test_path_expands_user_and_accepts_store_root_or_projects(tmp_path, context, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    write_session(tmp_path / "store" / "projects")
    for path in ("~/store", "~/store/projects", str(tmp_path / "store")):
        assert [s.id for s in build({"path": path}, context).read({})] == [SID]


def test_missing_store_is_a_warning_not_an_error(tmp_path, context):
    assert list(build({"path": str(tmp_path / "nope")}, context).read({})) == []
    assert context.warned == [f"Claude Code store not found: {tmp_path / 'nope'}"]


def test_store_created_after_build_is_found(tmp_path, context):
    connector = build({"path": str(tmp_path)}, context)
    write_session(tmp_path / "projects")
    assert [s.cursor_key for s in connector.read({})] == [f"-srv-app/{SID}.jsonl"]


def test_connector_type_through_the_plugin_host(tmp_path, context, monkeypatch):
    monkeypatch.delenv("JEZERO_PLUGINS", raising=False)
    jezero.plugins.reset()
    try:
        claude = jezero.plugins.connector_types()["claude"]
        assert claude.plugin == "jezero_connectors_claude"
        assert claude.build is not None and "Claude Code" in claude.description
        write_session(tmp_path / "projects")
        connector = claude.build({"path": str(tmp_path)}, context)
        assert isinstance(connector, ClaudeConnector)
        (session,) = connector.read({})
        assert (session.agent, session.id, session.blocks[0].text) == ("claude-code", SID, "deploy the app")
        with pytest.raises(ValueError, match="unknown option 'since'"):
            claude.build({"since": "yesterday"}, context)
        assert not any(e.name == "jezero_connectors_claude" for e in jezero.plugins.load_errors())
    finally:
        jezero.plugins.reset()


def test_one_file_name_in_two_project_folders_is_said(tmp_path, context):
    """Stores copied together can hold one file name (one session id) in two project folders.
    Two different conversations are both kept: the second under an id of its own, said once,
    naming both files; a session id used once says nothing. (Before: one session id, the
    library kept only one of the two.)"""
    first = write_session(tmp_path / "projects")
    second = tmp_path / "projects" / "-srv-copy" / first.name
    second.parent.mkdir()
    second.write_text(first.read_text().replace("deploy the app", "a different conversation"))
    connector = build({"path": str(tmp_path / "projects")}, context)
    assert [s.id for s in connector.read({})] == [SID, f"{SID}@-srv-copy"]
    assert len(context.warned) == 1, context.warned
    assert "-srv-app/" + first.name in context.warned[0] and "-srv-copy/" + first.name in context.warned[0]
    second.unlink()
    context.warned.clear()
    assert [s.id for s in connector.read({})] == [SID] and context.warned == []
