"""`jezero resummarize` reads blocks back from the stored original, where only the role, kind,
tool name, error flag and text survive: `normalize` must say again what each call did, as the
reader said it."""

from __future__ import annotations

from datetime import datetime, timezone

from jezero.ingest.segments import parse_rendered, render_block
from jezero.plugin import ConnectorContext
from jezero_connectors_opencode import build, normalize
from jezero_connectors_opencode.demo import Step, write_session

T0 = datetime(2026, 3, 1, 10, 0, tzinfo=timezone.utc)


def said(blocks):
    return [(b.kind, b.tool, b.action, b.command, b.paths, b.is_error) for b in blocks if b.text.strip()]


def stored(blocks):
    """The blocks as resummarize gets them: rendered into the original, parsed back."""
    return parse_rendered("".join(render_block(b) for b in blocks if b.text.strip()))


def test_normalize_says_what_the_reader_said(tmp_path):
    write_session(tmp_path / "opencode.db", "/p", T0, [
        Step("user", "rename the settings module"),
        Step("tool", tool="grep", args={"pattern": "settings", "path": "/p/src"}, output="src/a.py:1"),
        Step("tool", tool="bash", args={"command": "pytest -q"}, output="1 failed", metadata={"exit": 1}),
        Step("tool", tool="bash", args={"command": "git mv settings.py config.py"}, output="fatal: not a git repository",
             failed=True),
        Step("tool", tool="edit", args={"filePath": "/p/a.py", "oldString": "settings", "newString": "config"}, output="ok"),
        Step("tool", tool="multiedit", args={"filePath": "/p/b.py", "edits": [{"filePath": "/p/b.py"}]}, output="ok"),
        Step("tool", tool="apply_patch", args={"patchText": "*** Begin Patch\n*** Update File: /p/c.py\n*** End Patch"}, output="ok"),
        Step("tool", tool="task", args={"description": "find usages", "prompt": "..."}, output="3 usages"),
        Step("assistant", "Renamed settings to config."),
    ], title="Rename settings")
    [s] = build({"path": str(tmp_path)}, ConnectorContext("t", print)).read({})
    again = normalize(stored(s.blocks))
    assert said(again) == said(s.blocks)
    shell = [(b.kind, b.command, b.is_error) for b in again if b.action == "shell"]
    moved = "git mv settings.py config.py"
    assert shell == [("tool_call", "pytest -q", False), ("tool_result", "pytest -q", True),
                     ("tool_call", moved, False), ("tool_result", moved, True)]


def test_a_subtask_is_a_subagent_call():
    [block] = normalize(parse_rendered("[assistant tool_call subtask]\nfind usages\n"))
    assert block.action == "subagent" and block.command is None
