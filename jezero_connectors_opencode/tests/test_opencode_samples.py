"""The real OpenCode 1.18.33 store in shared/samples/newest (O1 opencode.db), read in place and as a
writable copy (to show that reading leaves nothing beside it)."""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest

from jezero import plugins
from jezero.plugin import ConnectorContext

OPENCODE = Path(__file__).resolve().parents[3] / "shared" / "samples" / "newest" / "opencode"
pytestmark = pytest.mark.skipif(not (OPENCODE / "opencode.db").is_file(), reason=f"real OpenCode store not found at "
                                f"{OPENCODE} (shared/samples lives beside the repository, never in it)")
HELLO, HELLO_MARKED, MCP = "ses_dd276b692ffenxs1nXxRq1K2hA", "ses_dd274b055ffeAxC1hrzkF8b03x", "ses_dd27331c2ffe3Q7Yl8TNFtrsSD"


def read(path: Path, cursor=None):
    warnings: list[str] = []
    connector = plugins.connector_types()["opencode"].build({"path": str(path)}, ConnectorContext("samples", warnings.append))
    return {s.id: s for s in connector.read(cursor or {})}, warnings


def test_o1_sessions():
    sessions, warnings = read(OPENCODE)
    assert warnings == [] and list(sessions) == [HELLO, HELLO_MARKED, MCP]  # oldest first; the export file is no store
    s = sessions[MCP]
    assert s.warnings == [] and (s.agent, s.parent_id, s.cursor_key) == ("opencode", None, MCP)
    assert (s.cwd, s.model, s.title) == ("/home/dev/src/demo", "mock-model", "MOCK-REPLY marker=SEEN")
    assert s.started_at == datetime(2026, 11, 30, 17, 42, 12, 286000, tzinfo=timezone.utc)
    assert s.ended_at == datetime(2026, 11, 30, 17, 42, 38, 897000, tzinfo=timezone.utc)
    assert [(b.role, b.kind, b.text) for b in s.blocks] == [
        ("user", "text", '"call the jezero tool"\n\nJEZERO-MARKER-123 (from chat.message)'),
        ("assistant", "tool_call", ""),
        ("tool", "tool_result", "JEZERO-PONG"),
        ("assistant", "text", "MOCK-REPLY marker=SEEN"),
    ]
    assert (s.blocks[1].tool, s.blocks[1].action) == ("jezero_jezero_ping", "other")
    assert [b.text for b in sessions[HELLO].blocks] == ["hello", "MOCK-REPLY marker=NOT-SEEN"]


def test_o1_cursor_is_json_and_stops_rereading():
    sessions, _ = read(OPENCODE)
    cursor = {s.cursor_key: json.loads(json.dumps(s.cursor_value)) for s in sessions.values()}
    assert read(OPENCODE, cursor) == ({}, [])


def test_reading_leaves_nothing_beside_the_database(tmp_path):
    shutil.copy(OPENCODE / "opencode.db", tmp_path / "opencode.db")  # writable, in WAL mode, no -wal file
    sessions, warnings = read(tmp_path)
    assert len(sessions) == 3 and warnings == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["opencode.db"]
