"""What a GitHub Copilot CLI tool call did, in the project's words (`jezero.plugin.ACTIONS`).

The one place that knows Copilot's built-in tool names (its system prompt and tool list:
bash, view, edit, create, grep, glob, web_fetch, task, ...). MCP tools (`<server>-<tool>`,
with `mcpServerName` on the request) are "other"."""

from __future__ import annotations

import re
from typing import Any

ACTION_OF = {
    "bash": "shell",
    "powershell": "shell",
    "read_bash": "shell",
    "write_bash": "shell",
    "stop_bash": "shell",
    "list_bash": "shell",
    "read_powershell": "shell",
    "write_powershell": "shell",
    "stop_powershell": "shell",
    "view": "read",
    "show_file": "read",
    "edit": "edit",
    "str_replace": "edit",
    "apply_patch": "edit",
    "create": "write",
    "grep": "search",
    "glob": "search",
    "rg": "search",
    "web_fetch": "fetch",
    "web_search": "fetch",
    "fetch_copilot_cli_documentation": "fetch",
    "update_todo": "plan",
    "report_intent": "plan",
    "exit_plan_mode": "plan",
    "task": "subagent",
    "read_agent": "subagent",
    "write_agent": "subagent",
    "list_agents": "subagent",
}
# The older single file tool: what it did depends on its `command` argument.
EDITOR_ACTION = {"view": "read", "create": "write", "str_replace": "edit", "insert": "edit", "undo_edit": "edit"}
_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", re.MULTILINE)


def action(name: str | None, args: Any = None) -> str:
    if name == "str_replace_editor":
        return EDITOR_ACTION.get(args.get("command") if isinstance(args, dict) else None, "edit")
    return ACTION_OF.get(name or "", "other")


def command(name: str | None, args: Any) -> str | None:
    if name in ("bash", "powershell") and isinstance(args, dict) and isinstance(args.get("command"), str):
        return args["command"]
    return None


def paths(name: str | None, args: Any) -> list[str]:
    if action(name, args) not in ("read", "edit", "write", "search"):
        return []
    if isinstance(args, str) and name == "apply_patch":
        return list(dict.fromkeys(m.strip() for m in _PATCH_FILE.findall(args)))
    if not isinstance(args, dict):
        return []
    found = [args[k].strip() for k in ("path", "file_path", "filePath") if isinstance(args.get(k), str) and args[k].strip()]
    patch = args.get("input") or args.get("patch")
    if name == "apply_patch" and isinstance(patch, str):
        found += [m.strip() for m in _PATCH_FILE.findall(patch)]
    return list(dict.fromkeys(found))
