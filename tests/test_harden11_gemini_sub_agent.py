"""A Gemini sub-agent chat (`tmp/<folder>/chats/<parent id>/<id>.jsonl`) under a main chat kept
apart (one chat name in two project folders holding different conversations: stored as
`<parent id>@<folder>`, fmt10).

Before: the sub-agent's parent link was the plain parent id, the conversation of the other
folder (test_a_sub_agent_of_a_chat_kept_apart_points_at_its_id failed). Now it points at the id
its parent is stored under; a sub-agent under the folder that keeps the plain id is unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jezero import plugins
from jezero.plugin.testing import Library
from jezero.store import open_readonly

from test_fmt10_gemini_one_name import NAME, SID, chat, put

CHILD = "7b7b7b7b-2222-4333-8444-955566667777"


@pytest.fixture(autouse=True)
def _gemini_installed():
    types = plugins.connector_types()
    if "gemini" not in types or types["gemini"].build is None:
        pytest.skip("connector type 'gemini' is not installed")


def sub_agent(root: Path, project: str, word: str) -> None:
    lines = [{"sessionId": CHILD, "kind": "subagent", "startTime": "2026-03-01T10:05:00.000Z"},
             {"id": "s1", "timestamp": "2026-03-01T10:05:10.000Z", "type": "user", "content": [{"text": f"find {word}"}]},
             {"id": "s2", "timestamp": "2026-03-01T10:05:20.000Z", "type": "gemini", "content": f"found {word}",
              "model": "gemini-2.5-pro"}]
    path = root / "tmp" / project / "chats" / SID / f"{CHILD}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))


def parents(lib: Library) -> dict[str, str | None]:
    conn = open_readonly(lib.config.library_path())
    try:
        return dict(conn.execute("SELECT DISTINCT session_id, parent_session_id FROM items").fetchall())
    finally:
        conn.close()


def test_a_sub_agent_of_a_chat_kept_apart_points_at_its_id(tmp_path):
    root = tmp_path / ".gemini"
    assert NAME.endswith(f"{SID[:8]}.jsonl")
    put(root, "aaa", chat(["alpha", "bravo"]))
    put(root, "bbb", chat(["zulu"]))  # another conversation under the same name: kept as SID@bbb
    sub_agent(root, "bbb", "yankee")
    with Library(tmp_path / "lib", "gemini", {"path": str(root)}) as lib:
        assert lib.run()["error"] is None
        held = parents(lib)
    assert held[SID] is None and held[f"{SID}@bbb"] is None
    [child] = [k for k in held if k not in (SID, f"{SID}@bbb")]
    assert held[child] == f"{SID}@bbb", held


def test_a_sub_agent_under_the_plain_id_keeps_its_link(tmp_path):
    root = tmp_path / ".gemini"
    put(root, "aaa", chat(["alpha", "bravo"]))
    put(root, "bbb", chat(["zulu"]))
    sub_agent(root, "aaa", "yankee")
    with Library(tmp_path / "lib", "gemini", {"path": str(root)}) as lib:
        assert lib.run()["error"] is None
        held = parents(lib)
    [child] = [k for k in held if k not in (SID, f"{SID}@bbb")]
    assert held[child] == SID, held
