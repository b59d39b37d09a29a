"""What a Gemini CLI tool call did, in the project's words (`jezero.plugin.ACTIONS`).

This is the one place that knows Gemini's tool names and argument keys (gemini-cli
`packages/core/src/tools/definitions/base-declarations.ts`); the core and the summarizers see
only the action, the shell command and the paths."""

from __future__ import annotations

from typing import Any

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
