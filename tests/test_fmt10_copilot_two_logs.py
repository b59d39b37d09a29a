"""A Copilot session's folder (`session-state/<id>/events.jsonl`, since 1.0.11) beside a flat
`session-state/<id>.jsonl` of the same id (the layout before; a store copied over another).

Before: the folder won and the flat file was never read, without a word; and a folder arriving
after its flat file was stored replaced what the library held (test_both_event_logs_are_kept
failed both ways). Now the longer is read when one is the start of the other; else both, the
one the cursor was read from (else the folder) under the id and the other as `<id>@flat` or
`<id>@folder`, for good."""

from __future__ import annotations

import json

import pytest

from jezero import plugins
from jezero.plugin.testing import Library
from jz_support import stored_texts

SID = "c0c0c0c0-1111-4222-8333-944455556666"


@pytest.fixture(autouse=True)
def _copilot_installed():
    types = plugins.connector_types()
    if "copilot" not in types or types["copilot"].build is None:
        pytest.skip("connector type 'copilot' is not installed")


def events(words: list[str]) -> bytes:
    out = [{"type": "session.start", "id": "e0", "parentId": None, "timestamp": "2026-03-01T10:00:00.000Z",
            "data": {"sessionId": SID, "copilotVersion": "1.0.9", "context": {"cwd": "/srv/app"}}}]
    for i, word in enumerate(words):
        out.append({"type": "user.message", "id": f"u{i}", "parentId": f"e{i}", "timestamp": f"2026-03-01T10:{i:02d}:10.000Z",
                    "data": {"content": f"please look at {word}"}})
        out.append({"type": "assistant.message", "id": f"a{i}", "parentId": f"u{i}", "timestamp": f"2026-03-01T10:{i:02d}:20.000Z",
                    "data": {"content": f"done with {word}", "toolRequests": []}})
    return b"".join(json.dumps(e).encode() + b"\n" for e in out)


def stored(lib: Library) -> dict[str, str]:
    return stored_texts(lib.config.library_path())


@pytest.mark.parametrize("flat_first", [False, True], ids=["both-at-once", "flat-stored-first"])
def test_both_event_logs_are_kept(tmp_path, flat_first):
    state = tmp_path / ".copilot" / "session-state"
    folder, flat = state / SID / "events.jsonl", state / f"{SID}.jsonl"
    state.mkdir(parents=True)
    flat.write_bytes(events(["alpha", "bravo"]))
    with Library(tmp_path / "lib", "copilot", {"path": str(tmp_path / ".copilot")}) as lib:
        before = {}
        if flat_first:
            assert lib.run()["error"] is None and "bravo" in stored(lib)[SID]
            before = stored(lib)
        folder.parent.mkdir()
        folder.write_bytes(events(["zulu"]))
        report = lib.run()
        assert report["error"] is None
        held = stored(lib)
        other = f"{SID}@folder" if flat_first else f"{SID}@flat"
        assert set(held) == {SID, other}, held
        assert "bravo" in (held[SID] + held[other]) and "zulu" in (held[SID] + held[other])
        if flat_first:
            assert held[SID] == before[SID]  # what the library held is not touched
        assert any("kept as session" in w for w in report["warnings"]), report["warnings"]
        assert lib.run()["sessions_seen"] == 0
        flat.unlink()  # one gone: both stay
        assert lib.run()["error"] is None and stored(lib) == held


def test_a_copy_of_the_start_is_one_session(tmp_path):
    state = tmp_path / ".copilot" / "session-state"
    (state / SID).mkdir(parents=True)
    full = events(["alpha", "bravo"])
    (state / SID / "events.jsonl").write_bytes(full[: full.index(b"\n") + 1])  # the folder: only its start
    (state / f"{SID}.jsonl").write_bytes(full)
    with Library(tmp_path / "lib", "copilot", {"path": str(tmp_path / ".copilot")}) as lib:
        report = lib.run()
        assert report["error"] is None
        assert list(stored(lib)) == [SID] and "bravo" in stored(lib)[SID]
        assert any("the longer is read" in w for w in report["warnings"]), report["warnings"]
