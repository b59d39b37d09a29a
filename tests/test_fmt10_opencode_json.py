"""OpenCode's JSON file store (before 1.2, and what an upgrade leaves behind): a file of a session
rewritten to the same size with its mtime kept (a copy or restore that keeps times, two writes in
one coarse tick) is read again. The cursor entry carries, beside the hash of the files' names,
sizes and mtimes, a hash of their `file_signature` checks (ctime and first and last 4 KB).

Before: the fingerprint hashed names, sizes and mtimes only, so the library kept the old text
forever and no run said anything (test_a_same_size_rewrite_is_read_again failed). An entry kept
before the check ({"fp": ...}) is trusted as it was then: no session is read again after the
upgrade."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from jezero import plugins
from jezero.plugin import ConnectorContext
from jezero.plugin.testing import Library
from jezero.store import open_readonly

SID = "ses_fmt10"


@pytest.fixture(autouse=True)
def _opencode_installed():
    types = plugins.connector_types()
    if "opencode" not in types or types["opencode"].build is None:
        pytest.skip("connector type 'opencode' is not installed")


def write_store(storage: Path, text: str) -> Path:
    def put(rel: str, obj: dict) -> Path:
        path = storage / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(obj))
        return path

    put(f"session/proj1/{SID}.json", {"id": SID, "projectID": "proj1", "directory": "/srv/old", "title": "Old times",
                                      "version": "0.15.8", "time": {"created": 1760000000000, "updated": 1760000060000}})
    put(f"message/{SID}/msg_001.json", {"id": "msg_001", "sessionID": SID, "role": "user", "time": {"created": 1760000000000}})
    part = put("part/msg_001/prt_001.json", {"id": "prt_001", "messageID": "msg_001", "sessionID": SID, "type": "text",
                                             "text": text})
    put(f"message/{SID}/msg_002.json", {"id": "msg_002", "sessionID": SID, "role": "assistant", "modelID": "gpt-5",
                                        "time": {"created": 1760000030000, "completed": 1760000060000}})
    put("part/msg_002/prt_002.json", {"id": "prt_002", "messageID": "msg_002", "sessionID": SID, "type": "text",
                                       "text": "the answer"})
    return part


def originals(lib: Library) -> str:
    conn = open_readonly(lib.config.library_path())
    try:
        return "".join(t for (t,) in conn.execute("SELECT original FROM items ORDER BY uid"))
    finally:
        conn.close()


def rewrite_same_size_and_mtime(path: Path, old: str, new: str) -> None:
    assert len(old) == len(new)
    st = path.stat()
    path.write_text(path.read_text().replace(old, new))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)


def test_a_same_size_rewrite_is_read_again(tmp_path):
    part = write_store(tmp_path / "data" / "storage", "deploy the green build")
    with Library(tmp_path / "lib", "opencode", {"path": str(tmp_path / "data")}) as lib:
        assert lib.run()["error"] is None and "deploy the green build" in originals(lib)
        rewrite_same_size_and_mtime(part, "green", "GREEN")
        report = lib.run()
        assert report["error"] is None
        assert "deploy the GREEN build" in originals(lib), "a same-size rewrite was never read"
        assert lib.run()["sessions_seen"] == 0  # and once read, not again


def legacy_fp(storage: Path) -> str:
    """The fingerprint as the connector wrote it before the check (names, sizes, mtimes)."""
    digest = hashlib.sha256()
    files = [storage / "session" / "proj1" / f"{SID}.json"]
    for message in sorted((storage / "message" / SID).glob("*.json")):
        files.append(message)
        files += sorted((storage / "part" / message.stem).glob("*.json"))
    for path in files:
        st = path.stat()
        digest.update(f"{path.relative_to(storage)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def test_a_cursor_written_before_the_check_is_trusted(tmp_path):
    storage = tmp_path / "data" / "storage"
    write_store(storage, "deploy the green build")
    connector = plugins.connector_types()["opencode"].build({"path": str(tmp_path / "data")},
                                                           ConnectorContext("t", lambda w: None))
    assert list(connector.read({SID: {"fp": legacy_fp(storage)}})) == []  # no re-read after the upgrade
    [session] = connector.read({SID: {"fp": "something else"}})
    assert session.cursor_value["fp"] == legacy_fp(storage) and "check" in session.cursor_value
    assert list(connector.read({SID: session.cursor_value})) == []
