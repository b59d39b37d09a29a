"""Which upload paths the inbox accepts: exactly the session files of each agent's store.

An upload names its agent and a path inside that agent's store (`projects/<dir>/<id>.jsonl`
for Claude Code, `sessions/2026/01/02/rollout-....jsonl` for Codex, `tmp/<project>/chats/...`
for Gemini CLI, `session-state/<id>/events.jsonl` for Copilot CLI, `opencode.db` for OpenCode). A path is accepted only when
every segment is a plain name and the whole path matches one of the agent's layouts, so a key can
never name a folder of its own choosing: no `..`, no hidden files, no other device's folder, no
file the connectors would not read anyway.

clients/core/jezero_client.py holds the same rules (the device only sends what the server takes);
tests/test_client_core.py checks that the two agree.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# A plain file or folder name as agents write them: letters, digits, '-', '_' and '.', not
# starting with '.' (no '.', '..' or hidden names). Claude Code's project folders start with '-'.
_NAME = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$")
# Longer than any real store path (a Claude Code project folder is the escaped working folder).
MAX_PATH_CHARS = 1024

_CLAUDE_SESSION = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9._-]*\.jsonl$")
_CLAUDE_AGENT = re.compile(r"^agent-[A-Za-z0-9._-]+\.jsonl$")
_CLAUDE_AGENT_META = re.compile(r"^agent-[A-Za-z0-9._-]+\.meta\.json$")
_CODEX_ROLLOUT = re.compile(r"^rollout-[A-Za-z0-9._-]+\.jsonl(\.zst)?$")
_YEAR, _MONTH, _DAY = re.compile(r"^\d{4}$"), re.compile(r"^(0[1-9]|1[0-2])$"), re.compile(r"^(0[1-9]|[12]\d|3[01])$")


class Refused(Exception):
    """An upload the inbox will not store: an HTTP status and a one-line reason."""

    def __init__(self, status: int, reason: str):
        super().__init__(reason)
        self.status = status
        self.reason = reason


def _claude(parts: list[str]) -> bool:
    """projects/<dir>/<session>.jsonl, its sub-agents (flat or in subagents/, with their
    .meta.json) and workflow runs' agents."""
    if len(parts) < 3 or parts[0] != "projects":
        return False
    rest = parts[2:]
    if len(rest) == 1:
        return bool(_CLAUDE_SESSION.match(rest[0]))
    if len(rest) == 3 and rest[1] == "subagents":
        return bool(_CLAUDE_AGENT.match(rest[2]) or _CLAUDE_AGENT_META.match(rest[2]))
    if len(rest) == 5 and rest[1] == "subagents" and rest[2] == "workflows":
        return bool(_CLAUDE_AGENT.match(rest[4]))
    return False


def _dated(parts: list[str]) -> bool:
    return len(parts) == 4 and bool(_YEAR.match(parts[0]) and _MONTH.match(parts[1]) and _DAY.match(parts[2])
                                    and _CODEX_ROLLOUT.match(parts[3]))


def _codex(parts: list[str]) -> bool:
    """sessions/YYYY/MM/DD/rollout-*.jsonl[.zst], archived_sessions/ (flat or dated), and the
    thread names in session_index.jsonl."""
    if parts == ["session_index.jsonl"]:
        return True
    if parts[0] == "sessions":
        return _dated(parts[1:])
    if parts[0] == "archived_sessions":
        return (len(parts) == 2 and bool(_CODEX_ROLLOUT.match(parts[1]))) or _dated(parts[1:])
    return False


_GEMINI_CHAT = re.compile(r"^session-[A-Za-z0-9._-]+\.jsonl?$")
_GEMINI_SUB_CHAT = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9._-]*\.jsonl?$")
_COPILOT_FLAT = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9._-]*\.jsonl$")
_OPENCODE_DB = re.compile(r"^opencode(-[A-Za-z0-9_-]+)?\.db$")
_OPENCODE_JSON = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9._-]*\.json$")


def _gemini(parts: list[str]) -> bool:
    """tmp/<project>/chats/session-*.jsonl (.json before 0.40), sub-agent chats in
    tmp/<project>/chats/<parent id>/<id>.jsonl, and projects.json (project folder -> name)."""
    if parts == ["projects.json"]:
        return True
    if len(parts) == 4 and parts[0] == "tmp" and parts[2] == "chats":
        return bool(_GEMINI_CHAT.match(parts[3]))
    if len(parts) == 5 and parts[0] == "tmp" and parts[2] == "chats":
        return bool(_GEMINI_SUB_CHAT.match(parts[4]))
    return False


def _copilot(parts: list[str]) -> bool:
    """session-state/<id>/events.jsonl with its workspace.yaml, or a flat session-state/<id>.jsonl."""
    if len(parts) == 3 and parts[0] == "session-state":
        return parts[2] in ("events.jsonl", "workspace.yaml")
    return len(parts) == 2 and parts[0] == "session-state" and bool(_COPILOT_FLAT.match(parts[1]))


def _opencode(parts: list[str]) -> bool:
    """The SQLite store (opencode.db, opencode-<channel>.db: a consistent snapshot made on the
    device) or the older JSON files: storage/{session/<project>,message/<session>,part/<message>}/<id>.json."""
    if len(parts) == 1:
        return bool(_OPENCODE_DB.match(parts[0]))
    if len(parts) == 4 and parts[0] == "storage" and parts[1] in ("session", "message", "part"):
        return bool(_OPENCODE_JSON.match(parts[3]))
    return False


# The agent names of the upload URL, as the device's client core sends them.
AGENTS: dict[str, Callable[[list[str]], bool]] = {"claude": _claude, "codex": _codex, "gemini": _gemini,
                                                  "copilot": _copilot, "opencode": _opencode}


def check_path(agent: str, path: str) -> list[str]:
    """The segments of an upload path (decoded, relative to the agent's store), or Refused."""
    if agent not in AGENTS:
        raise Refused(404, f"unknown agent {agent!r} (known: {', '.join(sorted(AGENTS))})")
    if "\x00" in path:
        raise Refused(400, "NUL in path")
    if "\\" in path:
        raise Refused(400, "backslash in path: use '/' between names")
    if path.startswith("/"):
        raise Refused(400, "absolute path: give the path inside the agent's store")
    if len(path) > MAX_PATH_CHARS:
        raise Refused(414, f"path longer than {MAX_PATH_CHARS} characters")
    parts = path.split("/")
    if any(p == ".." for p in parts):
        raise Refused(400, "'..' in path")
    if any(p == "." for p in parts):
        raise Refused(400, "'.' in path")
    if any(p == "" for p in parts):
        raise Refused(400, "empty name in path (a '//' or a trailing '/')")
    for p in parts:
        if not _NAME.match(p):
            raise Refused(400, f"{p[:60]!r} is not a plain name (letters, digits, '-', '_', '.'; no leading '.')")
    if not AGENTS[agent](parts):
        raise Refused(400, f"{path[:200]!r} is not a session file of a {agent} store")
    return parts
