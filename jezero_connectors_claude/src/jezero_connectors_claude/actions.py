"""What each Claude Code tool call did, in Jezero's words: the one place that knows Claude Code's
tool names. Every tool call and tool result leaves the connector with `action` set, a shell
call with its `command`, and a file tool's call with the `paths` it named; the summarizers read
those fields and never a tool's name."""

from __future__ import annotations

import re

from jezero.plugin import Block

# Claude Code's tools by what they do. Anything else (MCP tools, skills, plan mode, a tool added
# by a newer version) is "other": its output still counts, its name says nothing to us.
TOOL_ACTIONS = {
    "Bash": "shell",
    "Read": "read", "NotebookRead": "read",
    "Edit": "edit", "MultiEdit": "edit", "NotebookEdit": "edit",
    "Write": "write",
    "LS": "search", "Glob": "search", "Grep": "search",
    "WebFetch": "fetch", "WebSearch": "fetch",
    "TodoWrite": "plan", "TodoRead": "plan",
    "Task": "subagent", "Agent": "subagent",
}
# Tools whose call text (see render.tool_input_text) is the one path they act on. A Grep's or a
# Glob's text is a pattern, not a file.
_PATH_TOOLS = {"Read", "NotebookRead", "Edit", "MultiEdit", "NotebookEdit", "Write", "LS"}
_EDITS_SUFFIX = re.compile(r"\s+\(\d+ edits?\)$")


def annotate(blocks: list[Block]) -> list[Block]:
    """Set `action`, `command` and `paths` on the tool calls and results of a session."""
    for block in blocks:
        if block.kind not in ("tool_call", "tool_result"):
            continue
        block.action = TOOL_ACTIONS.get(block.tool or "", "other")
        if block.kind != "tool_call":
            continue
        if block.action == "shell":
            block.command = block.text.strip() or None
        elif block.tool in _PATH_TOOLS:
            block.paths = _path(block.text)
    return blocks


def _path(text: str) -> list[str]:
    """The path a file tool's call text names: `path`, or `path (3 edits)` for MultiEdit."""
    t = text.strip()
    first = _EDITS_SUFFIX.sub("", t.splitlines()[0]) if t else ""
    return [first] if first and len(first) < 500 and any(c in first for c in "/\\.") else []
