"""What an OpenCode tool call did, in the project's words (`jezero.plugin.ACTIONS`).

The one place that knows OpenCode's built-in tool names and their argument keys (bash,
read, edit, write, grep, glob, webfetch, task, todowrite, ...). MCP tools are named
`<server>_<tool>` and are "other"."""

from __future__ import annotations

import re
from typing import Any

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
