"""The inbox connector types: the claude and codex connectors over a device folder (the very
same readers, so the same sessions come out), plus the project each file's device sent."""

from __future__ import annotations

import shutil
from dataclasses import asdict

import jezero_connectors_inbox
from jezero import plugins
from jezero.inbox.folder import DeviceFolder
from jezero.ingest.runner import run_connectors
from jezero.config import Config, ConnectorConfig
from jezero.store import Store
from jezero_connectors_claude import build as build_claude
from jezero_connectors_claude.connector import ClaudeConnector
from jezero_connectors_codex import build as build_codex
from jezero_connectors_codex.connector import CodexConnector
from jezero_connectors_inbox.connectors import build_claude as inbox_claude, build_codex as inbox_codex

C3 = "projects/-src-experiments-claude_p/29ccd257-68b1-427f-ae5f-6524b7cb6f20.jsonl"
X1 = "sessions/2026/01/02/rollout-2026-01-02T18-39-45-019b7f94-51b4-7593-922e-ba12b5b73b52.jsonl"


def device_folder(tmp_path, samples):
    """A device folder as the inbox lays it out, from the shared samples."""
    device = tmp_path / "inbox" / "laptop"
    shutil.copytree(samples / "claude" / "projects", device / "claude" / "projects")
    shutil.copytree(samples / "codex" / "sessions", device / "codex" / "sessions")
    return device


def comparable(sessions):
    return sorted((asdict(s) | {"project_hint": None} for s in sessions), key=lambda s: s["id"])


def test_the_types_are_registered_with_their_options():
    types = plugins.connector_types()
    for name in ("inbox-claude", "inbox-codex", "inbox-gemini", "inbox-copilot", "inbox-opencode"):
        assert types[name].plugin == "jezero_connectors_inbox" and types[name].build is not None
        assert types[name].options is jezero_connectors_inbox.InboxOptions
    assert "inbox" not in types  # the planned placeholder is gone


def test_they_wrap_the_agents_own_connectors(tmp_path, context):
    assert isinstance(inbox_claude({"path": str(tmp_path)}, context).inner, ClaudeConnector)
    assert isinstance(inbox_codex({"path": str(tmp_path)}, context).inner, CodexConnector)


def test_a_device_folder_reads_like_the_agents_own_store(tmp_path, samples, context):
    device = device_folder(tmp_path, samples)
    claude = list(inbox_claude({"path": str(device / "claude")}, context).read({}))
    codex = list(inbox_codex({"path": str(device / "codex")}, context).read({}))
    assert len(claude) >= 3 and len(codex) == 2
    assert comparable(claude) == comparable(build_claude({"path": str(device / "claude")}, context).read({}))
    assert comparable(codex) == comparable(build_codex({"path": str(device / "codex")}, context).read({}))
    assert all(s.project_hint is None for s in claude + codex)  # no hint sent
    assert context.warned == []


def test_the_project_a_device_sent_rides_on_each_session(tmp_path, samples, context):
    device = device_folder(tmp_path, samples)
    folder = DeviceFolder(device.parent, "laptop")
    folder.write_hint("claude", C3.split("/"), "claude-p")
    folder.write_hint("codex", X1.split("/"), "web-shop")
    claude = {s.id: s for s in inbox_claude({"path": str(device / "claude")}, context).read({})}
    main = claude["29ccd257-68b1-427f-ae5f-6524b7cb6f20"]
    assert main.project_hint == "claude-p"
    # The sub-agent file has no hint of its own: it works in its session's project.
    assert claude["29ccd257-68b1-427f-ae5f-6524b7cb6f20/agent-a2271d1"].project_hint == "claude-p"
    assert {s.project_hint for i, s in claude.items() if not i.startswith("29ccd257")} == {None}
    codex = {s.cursor_key: s for s in inbox_codex({"path": str(device / "codex")}, context).read({})}
    assert {s.project_hint for s in codex.values()} == {"web-shop", None}


def test_nothing_uploaded_yet_is_quiet(tmp_path, context):
    assert list(inbox_claude({"path": str(tmp_path / "none" / "claude")}, context).read({})) == []
    assert list(inbox_codex({"path": str(tmp_path / "none" / "codex")}, context).read({})) == []
    assert context.warned == []


def test_the_device_project_beats_the_summarizers_guess_and_the_folder_name(tmp_path, samples):
    device = device_folder(tmp_path, samples)
    DeviceFolder(device.parent, "laptop").write_hint("claude", C3.split("/"), "experiments-hub")
    config = Config(storage={"path": str(tmp_path / "library.sqlite3")},
                    connectors=[ConnectorConfig(name="inbox-laptop-claude", type="inbox-claude",
                                                options={"path": str(device / "claude")})])
    (report,) = run_connectors(config)
    assert report.error is None and report.items_written
    with Store(tmp_path / "library.sqlite3") as store:
        rows = store.db.execute("SELECT session_id, project, device_project FROM items").fetchall()
    by_session = {}
    for session_id, project, device_project in rows:
        by_session.setdefault(session_id.split("/")[0], set()).add((project, device_project))
    # cwd /src/experiments/claude_p: the common root "src" alone would say "experiments".
    assert by_session["29ccd257-68b1-427f-ae5f-6524b7cb6f20"] == {("experiments-hub", "experiments-hub")}


def test_bad_options_are_one_line_errors(context):
    import pytest

    for options, message in (({}, "required"), ({"path": ""}, "required"), ({"path": "/x", "root": 1}, "unknown option")):
        with pytest.raises(ValueError, match=message):
            inbox_claude(options, context)
        with pytest.raises(ValueError, match=message):
            inbox_codex(options, context)
