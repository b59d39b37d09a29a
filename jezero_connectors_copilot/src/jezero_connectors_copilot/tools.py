"""What a GitHub Copilot CLI tool call did, in the project's words (`jezero.plugin.ACTIONS`).

The one place that knows Copilot's built-in tool names (its system prompt and tool list:
bash, view, edit, create, grep, glob, web_fetch, task, ...). MCP tools (`<server>-<tool>`,
with `mcpServerName` on the request) are "other"."""

from __future__ import annotations

import json
import re
from typing import Any

from jezero.plugin import Block, read_json

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
# The shell tools end their output with how the command exited; the call itself succeeded.
_EXITED = re.compile(r"<exited with exit code (-?\d+)>")


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


def arguments(value: Any) -> Any:
    """Arguments as the model sent them: a JSON text is read, anything else kept as it is."""
    if isinstance(value, str) and value.strip().startswith(("{", "[")):
        try:
            return read_json(value)
        except ValueError:
            return value
    return value


def call_text(name: str | None, args: Any) -> str:
    """What a tool call block says: a shell call's command, a patch as it is, else the arguments
    as compact JSON."""
    shell = command(name, args)
    if shell is not None:
        return shell
    if isinstance(args, str):
        return args
    return json.dumps(args, ensure_ascii=False, separators=(",", ":")) if args not in (None, {}) else ""


def call_args(name: str | None, text: str) -> Any:
    """The arguments back from a call block's text (the inverse of `call_text`)."""
    if name in ("bash", "powershell"):
        return {"command": text} if text else {}
    return arguments(text)


def shell_failed(name: str | None, output: str) -> bool:
    """A shell call whose output says its command exited non-zero."""
    if action(name) != "shell":
        return False
    codes = _EXITED.findall(output[-400:])
    return bool(codes) and codes[-1] != "0"


def normalize(blocks: list[Block]) -> list[Block]:
    """Set `action`, `command` and `paths` on blocks read back from a stored original (for `jezero
    resummarize`), as the reader set them: from the tool name and the call's text. A result says
    what its call said: the oldest unanswered call of the same tool (a new prompt drops the calls
    left unanswered before it)."""
    waiting: dict[str | None, list[Block]] = {}
    for block in blocks:
        if block.kind == "tool_call":
            args = call_args(block.tool, block.text)
            block.action, block.command = action(block.tool, args), command(block.tool, args)
            block.paths = paths(block.tool, args)
            waiting.setdefault(block.tool, []).append(block)
        elif block.kind == "tool_result":
            calls = waiting.get(block.tool)
            if calls:
                call = calls.pop(0)
                block.action, block.command, block.paths = call.action, call.command, list(call.paths)
            else:
                block.action = action(block.tool)
        elif block.role == "user" and block.kind == "text":
            waiting.clear()
    return blocks
