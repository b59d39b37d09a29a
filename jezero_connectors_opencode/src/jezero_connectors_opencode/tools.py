"""What an OpenCode tool call did, in the project's words (`jezero.plugin.ACTIONS`).

The one place that knows OpenCode's built-in tool names and their argument keys (bash,
read, edit, write, grep, glob, webfetch, task, todowrite, ...). MCP tools are named
`<server>_<tool>` and are "other"."""

from __future__ import annotations

import json
import re
from typing import Any

from jezero.plugin import Block, read_json

ACTION_OF = {
    "bash": "shell",
    "read": "read",
    "edit": "edit",
    "multiedit": "edit",
    "patch": "edit",
    "apply_patch": "edit",
    "write": "write",
    "grep": "search",
    "glob": "search",
    "list": "search",
    "codesearch": "search",
    "webfetch": "fetch",
    "websearch": "fetch",
    "todowrite": "plan",
    "todoread": "plan",
    "plan_enter": "plan",
    "plan_exit": "plan",
    "task": "subagent",
}
# A `subtask` part (a sub-agent started from a prompt) becomes a call of this name.
SUBTASK = "subtask"
PATH_KEYS = ("filePath", "path", "file_path")
_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", re.MULTILINE)


def action(name: str | None) -> str:
    return ACTION_OF.get(name or "", "other")


def command(name: str | None, args: Any) -> str | None:
    if action(name) == "shell" and isinstance(args, dict) and isinstance(args.get("command"), str):
        return args["command"]
    return None


def paths(name: str | None, args: Any) -> list[str]:
    if action(name) not in ("read", "edit", "write", "search") or not isinstance(args, dict):
        return []
    found = [args[k].strip() for k in PATH_KEYS if isinstance(args.get(k), str) and args[k].strip()]
    for key in ("patchText", "patch", "input"):
        if isinstance(args.get(key), str):
            found += [m.strip() for m in _PATCH_FILE.findall(args[key])]
    for edit in args.get("edits") or []:
        if isinstance(edit, dict) and isinstance(edit.get("filePath"), str):
            found.append(edit["filePath"])
    return list(dict.fromkeys(found))


def shell_failed(name: str | None, metadata: Any) -> bool:
    """A bash call whose command exited non-zero: OpenCode keeps the code in the part's
    `state.metadata.exit` and still marks the call completed."""
    if action(name) != "shell" or not isinstance(metadata, dict):
        return False
    code = metadata.get("exit")
    return isinstance(code, int) and not isinstance(code, bool) and code != 0


def call_text(name: str | None, args: Any) -> str:
    """What a tool call block says: a shell call's command, else its arguments as compact JSON."""
    shell = command(name, args)
    if shell is not None:
        return shell
    return json.dumps(args, ensure_ascii=False, separators=(",", ":")) if args not in (None, {}) else ""


def call_args(name: str | None, text: str) -> Any:
    """The arguments back from a call block's text (the inverse of `call_text`); {} when they
    cannot be read (a clipped JSON text)."""
    if action(name) == "shell":
        return {"command": text} if text else {}
    try:
        return read_json(text)
    except ValueError:
        return {}


def normalize(blocks: list[Block]) -> list[Block]:
    """Set `action`, `command` and `paths` on blocks read back from a stored original (for `jezero
    resummarize`), as the reader set them: from the tool name and the call's text. A result
    comes right after its call (both are one part) and names the same command and paths."""
    previous: Block | None = None
    for block in blocks:
        if block.kind == "tool_call":
            if block.tool == SUBTASK:
                block.action, block.command, block.paths = "subagent", None, []
            else:
                args = call_args(block.tool, block.text)
                block.action, block.command = action(block.tool), command(block.tool, args)
                block.paths = paths(block.tool, args)
        elif block.kind == "tool_result":
            block.action = action(block.tool)
            if previous is not None and previous.kind == "tool_call" and previous.tool == block.tool:
                block.command, block.paths = previous.command, list(previous.paths)
        previous = block
    return blocks
