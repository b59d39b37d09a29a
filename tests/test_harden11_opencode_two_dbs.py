"""One OpenCode session id in two databases of one data folder (`opencode.db` and
`opencode-<channel>.db`: a channel started from a copy of the data folder, folders copied
together).

Before: only the first database's copy was read; the other was never read, silently: a
conversation continued under the other channel lost what it added (test_the_longer_copy_is_read
failed), and another conversation under the same id was never stored
(test_two_conversations_are_both_kept, test_a_library_written_before_keeps_its_items failed).
Now, as the file connectors do since fmt10: a copy that is the start of the other (the same
message and part ids, fewer) is left for the longer; a different conversation is kept as
session `<id>@<database stem>` (its own cursor entry), for good; the plain id stays with the
database it was read from; a sub-agent session of a session kept apart points at that id."""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timezone
from pathlib import Path

import apsw
import pytest

from jezero import plugins
from jezero.plugin import ConnectorContext
from jezero.plugin.testing import Library
from jz_support import stored_texts

T0 = datetime(2026, 3, 1, 10, 0, tzinfo=timezone.utc)


@pytest.fixture(autouse=True)
def _opencode_installed():
    types = plugins.connector_types()
    if "opencode" not in types or types["opencode"].build is None:
        pytest.skip("connector type 'opencode' is not installed")


def first_session(folder: Path, text: str = "rename the settings module", parent: str | None = None) -> str:
    from jezero_connectors_opencode.demo import Step, write_session

    return write_session(folder / "opencode.db", "/home/me/proj", T0,
                         [Step("user", text), Step("assistant", "Renamed it.")], title="Rename settings", parent_id=parent)


def go_on(db: Path, sid: str, n: int, text: str) -> None:
    """The conversation goes on in `db`: a user message with one text part (ids unique to `n`)."""
    conn = apsw.Connection(str(db))
    when = 1772360000000 + n * 1000
    mid, pid = f"msg_z{n:04d}", f"prt_z{n:04d}"
    conn.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)",
                 (mid, sid, when, when, json.dumps({"role": "user", "time": {"created": when}})))
    conn.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)", (pid, mid, sid, when, when, json.dumps({"type": "text", "text": text})))
    conn.execute("UPDATE session SET time_updated = ? WHERE id = ?", (when, sid))
    conn.close()


def read(folder: Path, cursor: dict) -> tuple[list, list[str]]:
    """The sessions the opencode connector reads from `folder` past `cursor` (moved on), and its warnings."""
    warnings: list[str] = []
    connector = plugins.connector_types()["opencode"].build({"path": str(folder)}, ConnectorContext("t", warnings.append))
    sessions = list(connector.read(cursor))
    for s in sessions:
        cursor[s.cursor_key] = json.loads(json.dumps(s.cursor_value))
    return sessions, warnings


def test_the_longer_copy_is_read(tmp_path):
    data = tmp_path / "data"
    sid = first_session(data)
    shutil.copy(data / "opencode.db", data / "opencode-beta.db")
    go_on(data / "opencode-beta.db", sid, 1, "now also the tests folder")  # went on under the beta channel
    with Library(tmp_path / "lib", "opencode", {"path": str(data)}) as lib:
        report = lib.run()
        assert report["error"] is None
        held = stored_texts(lib.config.library_path())
        assert list(held) == [sid] and "tests folder" in held[sid], held
        assert any("the longer is read" in w for w in report["warnings"]), report["warnings"]
        assert lib.run()["sessions_seen"] == 0  # and not again
        go_on(data / "opencode-beta.db", sid, 2, "and the docs")
        assert lib.run()["error"] is None
        held = stored_texts(lib.config.library_path())
        assert list(held) == [sid] and "the docs" in held[sid]


def test_two_conversations_are_both_kept(tmp_path):
    data = tmp_path / "data"
    sid = first_session(data)
    shutil.copy(data / "opencode.db", data / "opencode-beta.db")
    go_on(data / "opencode.db", sid, 1, "the stable channel question")
    go_on(data / "opencode-beta.db", sid, 2, "the beta channel question")
    with Library(tmp_path / "lib", "opencode", {"path": str(data)}) as lib:
        report = lib.run()
        assert report["error"] is None
        held = stored_texts(lib.config.library_path())
        assert set(held) == {sid, f"{sid}@opencode-beta"}, held
        assert "stable channel" in held[sid] and "beta channel" not in held[sid]
        assert "beta channel" in held[f"{sid}@opencode-beta"]
        assert any("different conversations" in w for w in report["warnings"]), report["warnings"]
        assert lib.run()["sessions_seen"] == 0
        go_on(data / "opencode-beta.db", sid, 3, "more beta work")
        go_on(data / "opencode.db", sid, 4, "more stable work")
        assert lib.run()["error"] is None
        held = stored_texts(lib.config.library_path())
        assert set(held) == {sid, f"{sid}@opencode-beta"}
        assert "more stable work" in held[sid] and "more beta work" in held[f"{sid}@opencode-beta"]


def test_a_library_written_before_keeps_its_items(tmp_path):
    data = tmp_path / "data"
    sid = first_session(data)
    with Library(tmp_path / "lib", "opencode", {"path": str(data)}) as lib:
        assert lib.run()["error"] is None
        before = stored_texts(lib.config.library_path())
        shutil.copy(data / "opencode.db", data / "opencode-beta.db")
        go_on(data / "opencode-beta.db", sid, 1, "the beta channel question")
        # The stable copy changes too: it no longer is the start of the beta one.
        go_on(data / "opencode.db", sid, 2, "the stable channel question")
        assert lib.run()["error"] is None
        held = stored_texts(lib.config.library_path())
        assert held[sid].startswith(before[sid]) and "stable channel" in held[sid] and "beta" not in held[sid]
        assert "beta channel" in held[f"{sid}@opencode-beta"], held


def test_an_identical_copy_is_one_session(tmp_path):
    data = tmp_path / "data"
    sid = first_session(data)
    cursor: dict = {}
    read(data, cursor)
    assert list(cursor) == [sid]
    shutil.copy(data / "opencode.db", data / "opencode-beta.db")  # the same bytes: one session
    sessions, warnings = read(data, cursor)
    assert [s.id for s in sessions] == [sid] and any("the longer is read" in w for w in warnings)
    assert read(data, cursor)[0] == []


def test_a_sub_agent_of_a_session_kept_apart_points_at_its_id(tmp_path):
    data = tmp_path / "data"
    parent = first_session(data)
    shutil.copy(data / "opencode.db", data / "opencode-beta.db")
    go_on(data / "opencode.db", parent, 1, "stable")
    go_on(data / "opencode-beta.db", parent, 2, "beta")
    from jezero_connectors_opencode.demo import Step, write_session

    child = write_session(data / "opencode-beta.db", "/home/me/proj", T0, [Step("user", "find usages"), Step("assistant", "3")],
                          title="Child session - x", parent_id=parent)
    sessions, _ = read(data, {})
    by_id = {s.id: s for s in sessions}
    assert set(by_id) == {parent, f"{parent}@opencode-beta", child}
    assert by_id[child].parent_id == f"{parent}@opencode-beta"
