"""OpenCode's JSON file store (before 1.2): one session id with a session file in two project
folders (`storage/session/<projectID>/<id>.json`: a project id that changed between versions,
stores copied together). Its messages and parts are kept under the session id alone, so both
files describe one set of messages: one session.

Before: the last project folder's file was read whatever its age: the live file's title and
folder were hidden behind an older one (test_the_newest_file_is_read failed: "Old title"), and
a change to the other file was never seen, the fingerprint covering one file
(test_a_change_to_either_file_is_seen failed). Now the file OpenCode updated last is read, and
the fingerprint covers every file of the id; a session with one file keeps its cursor entry
(nothing read again after the upgrade)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jezero import plugins
from test_harden11_opencode_two_dbs import read

SID = "ses_h11json"


@pytest.fixture(autouse=True)
def _opencode_installed():
    types = plugins.connector_types()
    if "opencode" not in types or types["opencode"].build is None:
        pytest.skip("connector type 'opencode' is not installed")


def put(storage: Path, rel: str, obj: dict) -> Path:
    path = storage / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj))
    return path


def session_file(storage: Path, project: str, title: str, directory: str, updated: int) -> Path:
    return put(storage, f"session/{project}/{SID}.json", {"id": SID, "projectID": project, "directory": directory, "title": title,
                                                          "time": {"created": 1760000000000, "updated": updated}})


def store(storage: Path) -> None:
    put(storage, f"message/{SID}/msg_001.json", {"id": "msg_001", "sessionID": SID, "role": "user", "time": {"created": 1760000000000}})
    put(storage, "part/msg_001/prt_001.json", {"id": "prt_001", "messageID": "msg_001", "sessionID": SID, "type": "text",
                                               "text": "deploy the green build"})


def test_the_newest_file_is_read(tmp_path):
    storage = tmp_path / "data" / "storage"
    store(storage)
    session_file(storage, "global", "Green build deploy", "/srv/app", 1760000090000)  # the live one
    session_file(storage, "zz-old-project-id", "Old title", "/srv/old", 1760000010000)
    [session], warnings = read(tmp_path / "data", {})
    assert (session.id, session.title, session.cwd) == (SID, "Green build deploy", "/srv/app")
    assert any("2 project folders" in w for w in warnings), warnings


def test_a_change_to_either_file_is_seen(tmp_path):
    storage = tmp_path / "data" / "storage"
    store(storage)
    session_file(storage, "global", "Old title", "/srv/app", 1760000010000)
    session_file(storage, "zz", "Deploy", "/srv/app", 1760000020000)
    cursor: dict = {}
    assert [s.title for s in read(tmp_path / "data", cursor)[0]] == ["Deploy"]
    assert read(tmp_path / "data", cursor)[0] == []
    session_file(storage, "global", "Deploy the green build", "/srv/app", 1760000090000)  # OpenCode renamed it there
    [session], _ = read(tmp_path / "data", cursor)
    assert session.title == "Deploy the green build"


def test_a_session_with_one_file_keeps_its_cursor_entry(tmp_path):
    storage = tmp_path / "data" / "storage"
    store(storage)
    path = session_file(storage, "global", "Deploy", "/srv/app", 1760000020000)
    from jezero_connectors_opencode.jsonfiles import JsonStore

    value = JsonStore(storage, lambda w: None).fingerprint(SID, path)
    assert read(tmp_path / "data", {SID: value})[0] == []
