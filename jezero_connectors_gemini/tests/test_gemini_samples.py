"""The real Gemini CLI 0.61 recording in shared/samples/newest (G1), read in place."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from jezero import plugins
from jezero.plugin import ConnectorContext

GEMINI = Path(__file__).resolve().parents[3] / "shared" / "samples" / "newest" / "gemini"
pytestmark = pytest.mark.skipif(not GEMINI.is_dir(), reason=f"real transcript samples not found at {GEMINI} "
                                "(shared/samples lives beside the repository, never in it)")
G1 = "5debda9c-4844-41b8-84d8-47864f90bffc"


def read(cursor=None):
    warnings: list[str] = []
    connector = plugins.connector_types()["gemini"].build({"path": str(GEMINI)}, ConnectorContext("samples", warnings.append))
    return list(connector.read(cursor or {})), warnings


def test_g1_is_read_as_gemini_wrote_it():
    [s], warnings = read()
    assert warnings == [] and s.warnings == []
    assert (s.id, s.agent, s.parent_id) == (G1, "gemini-cli", None)
    assert s.cursor_key == "session-2026-11-30T17-33-5debda9c"
    # No projects.json in the sample: the folder comes from the <session_context> message, checked
    # against the recording's projectHash.
    assert s.cwd == "/home/dev/src/demo"
    assert s.model == "gemini-3.8-flash"
    assert s.started_at == datetime(2026, 11, 30, 17, 33, 17, 378000, tzinfo=timezone.utc)
    assert s.ended_at == datetime(2026, 11, 30, 17, 33, 20, 383000, tzinfo=timezone.utc)
    assert s.title == "call the jezero tool"
    # The model turn written twice (the second copy with its tool call) is one turn; the
    # functionResponse sent back as a "user" message is the call's result, told once.
    assert [(b.role, b.kind, b.text) for b in s.blocks] == [
        ("user", "text", "call the jezero tool"),
        ("assistant", "tool_call", ""),
        ("tool", "tool_result", "JEZERO-PONG"),
        ("assistant", "text", "MOCK-REPLY marker=SEEN"),
    ]
    assert {b.tool for b in s.blocks if b.kind.startswith("tool")} == {"mcp_jezero-ext_jezero_ping"}
    assert {b.action for b in s.blocks if b.kind.startswith("tool")} == {"other"}
    # Hook output and the session context are not what anyone said.
    assert not any("JEZERO-MARKER" in b.text or "session_context" in b.text for b in s.blocks)


def test_g1_cursor_is_json_and_stops_rereading():
    [s], _ = read()
    cursor = {s.cursor_key: json.loads(json.dumps(s.cursor_value))}
    assert set(cursor[s.cursor_key]) == {"sig", "bytes", "sha256"}
    assert read(cursor) == ([], [])
