"""`jezero resummarize` reads blocks back from the stored original, where only the role, kind,
tool name, error flag and text survive: `normalize` must say again what each call did, as the
reader said it."""

from __future__ import annotations

from jezero.ingest.segments import parse_rendered, render_block
from jezero_connectors_gemini import normalize


def said(blocks):
    return [(b.kind, b.tool, b.action, b.command, b.paths, b.is_error) for b in blocks if b.text.strip()]


def stored(blocks):
    """The blocks as resummarize gets them: rendered into the original, parsed back."""
    return parse_rendered("".join(render_block(b) for b in blocks if b.text.strip()))


def test_normalize_says_what_the_reader_said(gemini, rec):
    calls = [
        rec.call("c1", "run_shell_command", {"command": "pytest -x tests/test_cache.py"}, "1 failed\nExit Code: 1", 2),
        rec.call("c2", "read_many_files", {"paths": ["/p/b.py", "/p/c.py"]}, "...", 2),
        rec.call("c3", "replace", {"file_path": "/p/a.py", "old_string": "1", "new_string": "2"}, "ok", 2),
        rec.call("c4", "write_file", {"file_path": "/p/new.py", "content": "y"}, "ok", 2),
        rec.call("c5", "grep_search", {"pattern": "TODO", "dir_path": "/p"}, "a.py:1", 2),
        rec.call("c6", "run_shell_command", {"command": "git status"}, "nothing to commit", 2),
        rec.call("c7", "write_todos", {"todos": [{"description": "fix", "status": "pending"}]}, "ok", 2),
        rec.call("c8", "mcp_jira_create_issue", {"title": "x"}, "JIRA-1", 2, status="error"),
    ]
    gemini.write([rec.header(), rec.user("u1", "fix the cache", 1), rec.gemini_msg("g1", "", 2, toolCalls=calls),
                  rec.gemini_msg("g2", "Done.", 3)])
    [s] = gemini.read()
    again = normalize(stored(s.blocks))
    assert said(again) == said(s.blocks)
    shell = [(b.kind, b.command, b.is_error) for b in again if b.action == "shell"]
    assert shell == [("tool_call", "pytest -x tests/test_cache.py", False), ("tool_result", "pytest -x tests/test_cache.py", True),
                     ("tool_call", "git status", False), ("tool_result", "git status", False)]
    assert [b.paths for b in again if b.kind == "tool_call" and b.action == "edit"] == [["/p/a.py"]]


def test_a_result_without_its_call_keeps_only_its_action():
    blocks = normalize(parse_rendered("[tool tool_result run_shell_command]\n3 passed\n"))
    assert [(b.action, b.command) for b in blocks] == [("shell", None)]
