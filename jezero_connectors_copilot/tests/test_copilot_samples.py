"""The real Copilot CLI 1.0.102 session in shared/samples/newest (P1 events.jsonl + P2
workspace.yaml), read in place."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from jezero import plugins
from jezero.plugin import ConnectorContext

COPILOT = Path(__file__).resolve().parents[3] / "shared" / "samples" / "newest" / "copilot"
pytestmark = pytest.mark.skipif(not COPILOT.is_dir(), reason=f"real transcript samples not found at {COPILOT} "
                                "(shared/samples lives beside the repository, never in it)")
P1 = "ca1301bb-00ad-43ea-bf85-ea7400d58aef"


def read(cursor=None):
    warnings: list[str] = []
    connector = plugins.connector_types()["copilot"].build({"path": str(COPILOT)}, ConnectorContext("samples", warnings.append))
    return list(connector.read(cursor or {})), warnings


def test_p1_is_read_as_copilot_wrote_it():
    [s], warnings = read()
    assert warnings == [] and s.warnings == []  # every event type of 1.0.102 is known
    assert (s.id, s.agent, s.parent_id, s.cursor_key) == (P1, "copilot-cli", None, P1)
    assert (s.cwd, s.git_branch, s.model) == ("/home/dev/src/demo", "master", "gpt-4.1")
    assert s.title == "call the jezero tool"  # workspace.yaml's name
    assert s.started_at == datetime(2026, 11, 30, 17, 34, 42, 859000, tzinfo=timezone.utc)
    assert s.ended_at == datetime(2026, 11, 30, 17, 34, 46, 875000, tzinfo=timezone.utc)
    assert [(b.role, b.kind, b.text) for b in s.blocks] == [
        ("user", "text", "call the jezero tool"),  # as typed: no hook reminder, no date
        ("assistant", "tool_call", ""),
        ("tool", "tool_result", "JEZERO-PONG"),
        ("assistant", "text", "MOCK-REPLY marker=SEEN"),
    ]
    call = s.blocks[1]
    assert (call.tool, call.action, call.command, call.paths) == ("jezero-jezero_ping", "other", None, [])
    assert not any("JEZERO-MARKER" in b.text or "GitHub Copilot CLI" in b.text for b in s.blocks)


def test_p1_cursor_is_json_and_stops_rereading():
    [s], _ = read()
    cursor = {s.cursor_key: json.loads(json.dumps(s.cursor_value))}
    assert set(cursor[P1]) == {"sig", "bytes", "sha256"}
    assert read(cursor) == ([], [])
