"""Hand-made OpenCode stores for what the sample does not show: a live database with a WAL,
malformed rows, unknown parts, a growing session, sub-agent sessions, the JSON file store, and
the options."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import apsw
import pytest

from jezero import plugins
from jezero.plugin import ConnectorContext
from jezero_connectors_opencode import OpenCodeOptions, build, discover, jsonfiles, write_demo
from jezero_connectors_opencode.demo import Step, write_session

T0 = datetime(2026, 3, 1, 10, 0, tzinfo=timezone.utc)
CWD = "/home/me/proj"


def read(path: Path, cursor: dict | None = None):
    warnings: list[str] = []
    sessions = list(build({"path": str(path)}, ConnectorContext("t", warnings.append)).read(cursor if cursor is not None else {}))
    if cursor is not None:
        for s in sessions:
            cursor[s.cursor_key] = json.loads(json.dumps(s.cursor_value))
    return sessions, warnings


def add_part(db: Path, sid: str, data: dict | str, when_ms: int, part_id: str) -> None:
    conn = apsw.Connection(str(db))
    mid = conn.execute("SELECT id FROM message WHERE session_id = ? ORDER BY id DESC LIMIT 1", (sid,)).fetchone()[0]
    conn.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
                 (part_id, mid, sid, when_ms, when_ms, data if isinstance(data, str) else json.dumps(data)))
    conn.execute("UPDATE session SET time_updated = ? WHERE id = ?", (when_ms, sid))
    conn.close()


def test_steps_actions_and_subagents(tmp_path):
    db = tmp_path / "opencode.db"
    parent = write_session(db, CWD, T0, [
        Step("user", "rename the settings module"),
        Step("tool", tool="grep", args={"pattern": "settings", "path": "/p/src"}, output="src/a.py:1"),
        Step("tool", tool="bash", args={"command": "git mv settings.py config.py"}, output="fatal: not under version control", failed=True),
        Step("tool", tool="write", args={"filePath": "/p/config.py", "content": "x"}, output="ok"),
        Step("tool", tool="apply_patch", args={"patchText": "*** Begin Patch\n*** Update File: /p/a.py\n*** End Patch"}, output="ok"),
        Step("tool", tool="task", args={"description": "find usages", "prompt": "...", "subagent_type": "general"}, output="3 usages"),
        Step("assistant", "Renamed settings to config."),
    ], title="Rename settings")
    child = write_session(db, CWD, T0, [Step("user", "find usages"), Step("assistant", "3 usages")],
                          title="Child session - 2026-03-01T10:00:00.000Z", parent_id=parent)
    sessions, warnings = read(tmp_path)
    assert warnings == []
    by_id = {s.id: s for s in sessions}
    s = by_id[parent]
    calls = [(b.tool, b.action, b.command, b.paths) for b in s.blocks if b.kind == "tool_call"]
    assert calls == [("grep", "search", None, ["/p/src"]), ("bash", "shell", "git mv settings.py config.py", []),
                     ("write", "write", None, ["/p/config.py"]), ("apply_patch", "edit", None, ["/p/a.py"]),
                     ("task", "subagent", None, [])]
    failed = [b for b in s.blocks if b.kind == "tool_result" and b.is_error]
    assert [b.text for b in failed] == ["fatal: not under version control"] and failed[0].action == "shell"
    assert (s.title, s.model, s.cwd) == ("Rename settings", "claude-sonnet-4-5", CWD)
    assert by_id[child].parent_id == parent and by_id[child].title == "find usages"  # the default title is no title


def test_malformed_rows_and_unknown_parts_are_skipped_and_reported(tmp_path):
    db = tmp_path / "opencode.db"
    sid = write_session(db, CWD, T0, [Step("user", "hello"), Step("assistant", "hi")], title="Greeting")
    add_part(db, sid, "{not json", 1772359300000, "prt_zz1")
    add_part(db, sid, {"type": "hologram", "text": "?"}, 1772359300001, "prt_zz2")
    add_part(db, sid, {"type": "text", "text": "(file contents)", "synthetic": True}, 1772359300002, "prt_zz3")
    [s], warnings = read(tmp_path)
    assert [b.text for b in s.blocks] == ["hello", "hi"] and warnings == []
    assert any("part prt_zz1: not valid JSON" in w for w in s.warnings)
    assert any("unknown part type 'hologram'" in w for w in s.warnings)


def test_growing_session_moves_the_cursor(tmp_path):
    db = tmp_path / "opencode.db"
    sid = write_session(db, CWD, T0, [Step("user", "step one"), Step("assistant", "done one")], title="Steps")
    cursor: dict = {}
    [s], _ = read(tmp_path, cursor)
    assert [b.text for b in s.blocks] == ["step one", "done one"]
    assert read(tmp_path, cursor) == ([], [])
    add_part(db, sid, {"type": "text", "text": "and done two"}, 1772359400000, "prt_zz9")
    [s], _ = read(tmp_path, cursor)
    assert [b.text for b in s.blocks][-1] == "and done two"
    assert s.ended_at == datetime.fromtimestamp(1772359400, tz=timezone.utc)
    assert read(tmp_path, cursor) == ([], [])
    assert len(read(tmp_path, {})[0]) == 1  # a deferred session (cursor not moved) comes back


def test_a_live_database_is_read_with_its_wal(tmp_path):
    """While OpenCode runs, new rows sit in the -wal file; they are read, and nothing is written."""
    db = tmp_path / "opencode.db"
    sid = write_session(db, CWD, T0, [Step("user", "first")], title="Live")
    writer = apsw.Connection(str(db))
    writer.execute("PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0")
    mid = writer.execute("SELECT id FROM message WHERE session_id = ?", (sid,)).fetchone()[0]
    writer.execute("INSERT INTO part VALUES ('prt_live', ?, ?, 1, 1, ?)", (mid, sid, json.dumps({"type": "text", "text": "second"})))
    assert (tmp_path / "opencode.db-wal").stat().st_size > 0
    before = (db.stat().st_mtime_ns, db.stat().st_size)
    [s], warnings = read(tmp_path)
    assert [b.text for b in s.blocks] == ["first", "second"] and warnings == []
    assert (db.stat().st_mtime_ns, db.stat().st_size) == before
    writer.close()


def test_not_a_database_warns(tmp_path):
    (tmp_path / "opencode.db").write_bytes(b"this is not SQLite" * 100)
    sessions, warnings = read(tmp_path)
    assert sessions == [] and len(warnings) == 1 and "cannot read the database" in warnings[0]


def write_json_store(storage: Path, sid: str, text: str) -> None:
    def put(rel: str, obj: dict) -> None:
        path = storage / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(obj))

    put(f"session/proj1/{sid}.json", {"id": sid, "projectID": "proj1", "directory": "/srv/old", "title": "Old times",
                                      "version": "0.15.8", "time": {"created": 1760000000000, "updated": 1760000060000}})
    put(f"message/{sid}/msg_001.json", {"id": "msg_001", "sessionID": sid, "role": "user", "time": {"created": 1760000000000}})
    put("part/msg_001/prt_001.json", {"id": "prt_001", "messageID": "msg_001", "sessionID": sid, "type": "text", "text": text})
    put(f"message/{sid}/msg_002.json", {"id": "msg_002", "sessionID": sid, "role": "assistant", "modelID": "gpt-5",
                                        "time": {"created": 1760000030000, "completed": 1760000060000}})
    put("part/msg_002/prt_002.json", {"id": "prt_002", "messageID": "msg_002", "sessionID": sid, "type": "tool", "tool": "read",
                                       "callID": "c1", "state": {"status": "completed", "input": {"filePath": "/srv/old/a.txt"},
                                                                 "output": "contents"}})


def test_json_file_store_and_precedence(tmp_path):
    write_json_store(tmp_path / "storage", "ses_old", "an old question")
    cursor: dict = {}
    [s], warnings = read(tmp_path, cursor)
    assert warnings == [] and (s.id, s.cwd, s.title, s.model) == ("ses_old", "/srv/old", "Old times", "gpt-5")
    assert [(b.kind, b.action, b.paths) for b in s.blocks] == [("text", None, []), ("tool_call", "read", ["/srv/old/a.txt"]),
                                                               ("tool_result", "read", ["/srv/old/a.txt"])]
    assert read(tmp_path, cursor) == ([], [])
    (tmp_path / "storage" / "part" / "msg_001" / "prt_001.json").write_text(json.dumps(
        {"id": "prt_001", "type": "text", "text": "an old question, edited"}))
    assert [s.blocks[0].text for s in read(tmp_path, cursor)[0]] == ["an old question, edited"]
    # Migrated into the database: the database's copy is the one read.
    db = tmp_path / "opencode.db"
    write_session(db, CWD, T0, [Step("user", "from the database")], title="db")
    conn = apsw.Connection(str(db))
    conn.execute("UPDATE session SET id = 'ses_old'; UPDATE message SET session_id = 'ses_old'; UPDATE part SET session_id = 'ses_old'")
    conn.close()
    [s], _ = read(tmp_path)
    assert s.blocks[0].text == "from the database"


def test_a_json_file_vanishing_mid_read_warns(tmp_path, monkeypatch):
    write_json_store(tmp_path / "storage", "ses_old", "soon gone")
    real = jsonfiles.JsonStore._files
    listings: list[str] = []

    def files_then_delete(self, folder):
        found = real(self, folder)
        listings.append(folder.name)
        if folder.name == "msg_001" and listings.count("msg_001") == 2:  # the listing made to load the session, not to fingerprint it
            for path in found:
                path.unlink()  # OpenCode removed it between the listing and the read
        return found

    monkeypatch.setattr(jsonfiles.JsonStore, "_files", files_then_delete)
    [s], _ = read(tmp_path)
    assert any("vanished" in w for w in s.warnings) and [b.kind for b in s.blocks] == ["tool_call", "tool_result"]


def test_options_env_discover_and_demo(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="unknown option 'db'"):
        build({"db": "x"}, ConnectorContext("t", print))
    assert OpenCodeOptions.model_config["extra"] == "forbid"
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.delenv("OPENCODE_DB", raising=False)
    assert build({}, ConnectorContext("t", print)).path == tmp_path / "home" / ".local" / "share" / "opencode"
    assert discover() == []
    options = write_demo(tmp_path / "xdg")
    assert options == {"path": str(tmp_path / "xdg" / "opencode")}
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert discover() == [options]
    warnings: list[str] = []
    sessions = list(build({}, ConnectorContext("t", warnings.append)).read({}))
    assert len(sessions) == 2 and warnings == [] and all(s.cwd == "/home/demo/src/newsletter" for s in sessions)
    # $OPENCODE_DB names another database file, relative to the data folder.
    (tmp_path / "xdg" / "opencode" / "opencode.db").rename(tmp_path / "xdg" / "opencode" / "mine.sqlite")
    assert discover() == []
    monkeypatch.setenv("OPENCODE_DB", "mine.sqlite")
    assert discover() == [options] and len(list(build({}, ConnectorContext("t", print)).read({}))) == 2
    # A single database file as the path.
    assert len(read(tmp_path / "xdg" / "opencode" / "mine.sqlite")[0]) == 2


def test_missing_store_warns(tmp_path):
    assert read(tmp_path / "nope") == ([], [f"opencode: {tmp_path / 'nope'}: no such folder or file"])
    (tmp_path / "empty").mkdir()
    sessions, warnings = read(tmp_path / "empty")
    assert sessions == [] and "no OpenCode store here" in warnings[0]


def test_registered_through_the_plugin_host(tmp_path):
    kind = plugins.connector_types()["opencode"]
    assert kind.plugin == "jezero_connectors_opencode" and not kind.description.startswith("planned")
    assert kind.options is OpenCodeOptions and kind.discover is discover and kind.demo is write_demo
    sessions = list(kind.build(kind.demo(tmp_path), ConnectorContext("o", print)).read({}))
    assert [s.agent for s in sessions] == ["opencode", "opencode"]
