"""Which upload paths the inbox accepts: exactly the session files of each agent's store.

An upload names its agent and a path inside that agent's store (`projects/<dir>/<id>.jsonl`
for Claude Code, `sessions/2026/01/02/rollout-....jsonl` for Codex, `tmp/<project>/chats/...`
for Gemini CLI, `session-state/<id>/events.jsonl` for Copilot CLI, `opencode.db` for OpenCode). A path is accepted only when
every segment is a plain name and the whole path matches one of the agent's layouts, so a key can
never name a folder of its own choosing: no `..`, no hidden files, no other device's folder, no
file the connectors would not read anyway.

The layouts themselves are the client core's (clients/core/jezero_client.py, shipped in this
package as jezero/client_core.py), so the device sends exactly what the server takes; this module
adds the reasons a refused path gets. tests/test_client_core.py checks that the two agree.
"""

from __future__ import annotations

from jezero.client_core import _NAME, LAYOUTS, MAX_PATH_CHARS


class Refused(Exception):
    """An upload the inbox will not store: an HTTP status and a one-line reason."""

    def __init__(self, status: int, reason: str):
        super().__init__(reason)
        self.status = status
        self.reason = reason


def check_path(agent: str, path: str) -> list[str]:
    """The segments of an upload path (decoded, relative to the agent's store), or Refused."""
    if agent not in LAYOUTS:
        raise Refused(404, f"unknown agent {agent!r} (known: {', '.join(sorted(LAYOUTS))})")
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
    if not LAYOUTS[agent](parts):
        raise Refused(400, f"{path[:200]!r} is not a session file of a {agent} store")
    return parts
