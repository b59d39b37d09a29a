"""What each Claude Code tool call did, said by the connector: the summarizers never see a tool name."""

from jezero.plugin import Block

from jezero_connectors_claude.actions import annotate


def test_tool_calls_and_results_say_what_they_did():
    blocks = annotate([
        Block("assistant", "tool_call", "pytest -x tests/test_cache.py", tool="Bash"),
        Block("tool", "tool_result", "1 failed", tool="Bash", is_error=True),
        Block("assistant", "tool_call", "/home/ana/src/app/cache.py (3 edits)", tool="MultiEdit"),
        Block("assistant", "tool_call", "/home/ana/src/app/README.md", tool="Read"),
        Block("assistant", "tool_call", "def load in src (*.py)", tool="Grep"),
        Block("assistant", "tool_call", "[pending] fix the cache", tool="TodoWrite"),
        Block("assistant", "tool_call", "server: github\nq: cache", tool="mcp__github__search"),
        Block("user", "text", "thanks"),
    ])
    assert [b.action for b in blocks] == ["shell", "shell", "edit", "read", "search", "plan", "other", None]
    assert blocks[0].command == "pytest -x tests/test_cache.py" and blocks[1].command is None
    assert blocks[2].paths == ["/home/ana/src/app/cache.py"] and blocks[3].paths == ["/home/ana/src/app/README.md"]
    assert blocks[4].paths == []  # a pattern is not a file
