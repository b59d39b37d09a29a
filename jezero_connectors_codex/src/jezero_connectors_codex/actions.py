"""What each Codex tool call did, in Jezero's words: the one place that knows Codex's tool names
(every generation of them). Every tool call and tool result leaves the connector with `action`
set, a shell call with its `command`, a file tool's call with the `paths` it named, and the
result of a `write_stdin` poll with the command still running in that unified-exec session."""

from __future__ import annotations

import re

from jezero.plugin import Block, read_json

TOOL_ACTIONS = {
    "shell": "shell", "container.exec": "shell", "local_shell": "shell", "shell_command": "shell",
    "exec_command": "shell", "write_stdin": "shell",
    "apply_patch": "edit",
    "read_file": "read", "view_image": "read",
    "list_dir": "search", "grep_files": "search",
    "web_search": "fetch",
    "update_plan": "plan",
}
# Search tools whose call names one folder worth keeping as a path (a grep's pattern is not one).
_LISTING_TOOLS = {"list_dir"}
_SHELLS = {"bash", "sh", "zsh", "dash", "fish", "pwsh", "powershell", "cmd", "cmd.exe"}
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$|^\*\*\* Move to: (.+)$", re.M)
_PATH_KEYS = ("file_path", "path", "dir_path", "notebook_path", "filename", "target_file")
_POLL = re.compile(r"session(?:_id| ID)?\"?\s*[:=]?\s*(\d+)")
_RUNNING = re.compile(r"Process running with session ID (\d+)")


def annotate(blocks: list[Block]) -> list[Block]:
    """Set `action`, `command` and `paths` on the tool calls and results of a session, in order.

    Unified exec runs a long command in a session that later `write_stdin` calls poll: their
    results are that command's output, so they carry its `command` (a plain result carries none:
    it answers the call before it)."""
    pending: list[str | None] = []  # shell commands waiting for their result
    running: dict[str, str | None] = {}  # unified-exec session id -> the command running in it
    polled: list[str | None] = []  # the command each write_stdin call reads from
    for block in blocks:
        if block.kind not in ("tool_call", "tool_result"):
            continue
        tool = block.tool or ""
        block.action = TOOL_ACTIONS.get(tool, "other")
        if block.kind == "tool_call":
            if tool == "write_stdin":
                m = _POLL.search(block.text)
                polled.append(running.get(m.group(1)) if m else None)
            elif block.action == "shell":
                block.command = shell_command(block.text)
                if block.command:
                    pending.append(block.command)
            elif block.action in ("read", "edit", "write") or tool in _LISTING_TOOLS:
                block.paths = tool_paths(block.text)
        elif tool == "write_stdin":
            block.command = polled.pop(0) if polled else None
        elif block.action == "shell" or not tool:
            command = pending.pop(0) if pending else None
            m = _RUNNING.search(block.text[:400])
            if m:
                running[m.group(1)] = command
    return blocks


def shell_command(text: str) -> str | None:
    """The command of a shell call: its text (render.tool_call_text unwraps it), or `command` /
    `cmd` of arguments that were left as JSON (an argv `bash -lc "<script>"` unwrapped)."""
    t = text.strip()
    if t.startswith("{"):
        try:
            data = read_json(t)
        except ValueError:
            data = None
        if isinstance(data, dict):
            value = data.get("command", data.get("cmd"))
            if isinstance(value, list):
                argv = [str(a) for a in value]
                shell = argv[0].replace("\\", "/").rsplit("/", 1)[-1] if argv else ""
                value = argv[-1] if len(argv) == 3 and shell in _SHELLS else " ".join(argv)
            if not isinstance(value, str):
                return None
            t = value.strip()
    return t or None


def tool_paths(text: str) -> list[str]:
    """The files a call names: those of an apply_patch, or the path of JSON arguments."""
    t = text.strip()
    found = [a or b for a, b in _PATCH_FILE.findall(t)]
    if found:
        return [p.strip() for p in found]
    if t.startswith("{"):
        try:
            data = read_json(t)
        except ValueError:
            return []
        if isinstance(data, dict):
            for key in _PATH_KEYS:
                if isinstance(data.get(key), str):
                    return [data[key]]
        return []
    first = t.splitlines()[0] if t else ""
    return [first] if first and len(first) < 500 and any(c in first for c in "/\\.") else []
