"""What a Gemini CLI tool call did, in the project's words (`jezero.plugin.ACTIONS`).

This is the one place that knows Gemini's tool names and argument keys (gemini-cli
`packages/core/src/tools/definitions/base-declarations.ts`); the core and the summarizers see
only the action, the shell command and the paths."""

from __future__ import annotations

import json
import re
from typing import Any

from jezero.plugin import Block, read_json

ACTION_OF = {
    "run_shell_command": "shell",
    "read_file": "read",
    "read_many_files": "read",
    "replace": "edit",
    "edit": "edit",
    "write_file": "write",
    "glob": "search",
    "grep_search": "search",
    "search_file_content": "search",  # the name before grep_search
    "list_directory": "search",
    "web_fetch": "fetch",
    "google_web_search": "fetch",
    "get_internal_docs": "fetch",
    "write_todos": "plan",
    "enter_plan_mode": "plan",
    "exit_plan_mode": "plan",
    "delegate_to_agent": "subagent",
    "codebase_investigator": "subagent",
}

# Argument keys that name one file or folder, across Gemini versions (absolute_path and path
# were renamed file_path and dir_path).
PATH_KEYS = ("file_path", "absolute_path", "dir_path", "path", "directory", "plan_path")
LIST_KEYS = ("paths", "include", "file_paths")
# run_shell_command reports a command that ran and failed in its output, not as a failed call.
_EXIT_CODE = re.compile(r"^Exit Code: (-?\d+)\s*$", re.MULTILINE)


def action(name: str | None) -> str:
    return ACTION_OF.get(name or "", "other")


def command(name: str | None, args: Any) -> str | None:
    if action(name) == "shell" and isinstance(args, dict) and isinstance(args.get("command"), str):
        return args["command"]
    return None


def paths(name: str | None, args: Any) -> list[str]:
    """Files (or folders) a read, edit, write or search call named."""
    if action(name) not in ("read", "edit", "write", "search") or not isinstance(args, dict):
        return []
    found: list[str] = []
    for key in PATH_KEYS:
        if isinstance(args.get(key), str) and args[key].strip():
            found.append(args[key].strip())
    for key in LIST_KEYS:
        if isinstance(args.get(key), list):
            found += [p.strip() for p in args[key] if isinstance(p, str) and p.strip()]
    return list(dict.fromkeys(found))


def shell_failed(name: str | None, output: str) -> bool:
    """A shell call whose output says its command exited non-zero (`Exit Code: 1`)."""
    if action(name) != "shell":
        return False
    codes = _EXIT_CODE.findall(output[-2000:])
    return bool(codes) and codes[-1] != "0"


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
    right after its call names the same command and paths."""
    previous: Block | None = None
    for block in blocks:
        if block.kind == "tool_call":
            args = call_args(block.tool, block.text)
            block.action, block.command, block.paths = action(block.tool), command(block.tool, args), paths(block.tool, args)
        elif block.kind == "tool_result":
            block.action = action(block.tool)
            if previous is not None and previous.kind == "tool_call" and previous.tool == block.tool:
                block.command, block.paths = previous.command, list(previous.paths)
        previous = block
    return blocks
