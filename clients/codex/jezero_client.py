#!/usr/bin/env python3
"""Jezero's client core: everything a device does, in one file.

It runs inside coding agents on computers Jezero does not control, with whatever python3 is
there (the one that ships with macOS is 3.9), so it uses the standard library only and nothing
newer than Python 3.9. Each agent plugin carries a copy (scripts/build_clients.py makes them;
edit this file, never a copy).

    jezero_client.py init --server URL --device NAME
        Make this device's key (kept in this computer's config folder, readable by you only)
        and print the one line the server's admin runs to approve it. The key never leaves
        this computer: the line holds only its SHA-256 digest.
    jezero_client.py status [--json]
        Server, device, key digest, whether the server knows the key, the last upload.
    jezero_client.py upload [--wait] [--claude DIR] [--codex DIR] [--gemini DIR] [--copilot DIR] [--opencode DIR]
        Send the agents' session files that changed since the last upload into the server's
        inbox. Without --wait it starts a detached process and returns at once, so an agent's
        hook never waits for the network.
    jezero_client.py bridge
        A local MCP server on stdin/stdout that forwards every message to the server's /mcp
        with this device's key, so no agent's configuration holds the key.
    jezero_client.py hook session-start|prompt|end --agent claude|codex|gemini|copilot|opencode
        What the agent plugins run on their agent's events: the agent's hook payload on stdin,
        the context it adds on stdout (Jezero's protocol and the project's newest items at
        session start, related past work on the first prompt), a detached upload at the end.
        Never more than 2.5 seconds, always exit 0, nothing on stderr.

The files it keeps live in one folder: $JEZERO_CLIENT_HOME, else the platform config folder
(~/.config/jezero, ~/Library/Application Support/jezero, %APPDATA%\\jezero).
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
import threading
import time
from pathlib import Path, PurePosixPath, PureWindowsPath
from types import SimpleNamespace
from urllib.parse import urlsplit

# A hook is a fresh process on every agent event, so what this file imports at the top is paid on
# each one: only what every command needs is imported here. argparse, hashlib, http.client (26 ms,
# most of it the email package it parses headers with), queue, secrets, socket, ssl and subprocess
# are imported by the functions that use them (benchmarks/hooks/README.md has the figures). The typing names are
# for type checkers only (importing typing costs a hook ~3 ms); annotations are never evaluated.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    import http.client
    import queue
    from typing import Any, Dict, Iterator, List, Optional, Tuple

# The version of this core, sent with every upload (CLIENT_HEADER) so the server's app can flag a
# device whose plugins carry an older core than the server ships (jezero/client_core.py). Bump it
# in the commit that changes what a device does: the last number for a fix, the middle one for
# anything new a device should pick up (a store, a header, a hook), the first one for a change the
# server and older cores cannot both speak. Never edit it in a copy.
CORE_VERSION = "0.4.2"
VERSION = CORE_VERSION
KEY_PREFIX = "jz_"  # the server's own keys look the same (jezero new-token)
KEY_BYTES = 32
# The device name becomes a client name and a source name prefix on the server
# (inbox-<device>-claude), which must stay within 64 characters.
DEVICE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,47}$")
PROJECT_HEADER = "X-Jezero-Project"
CLIENT_HEADER = "X-Jezero-Client"  # this core's version
PLUGIN_HEADER = "X-Jezero-Plugin"  # "<agent>/<version>" of the agent plugin this copy belongs to
# A slow network must not hold an upload forever; a search on the server is bounded far below.
HTTP_TIMEOUT = 60.0
STATE_SAVE_EVERY = 20  # files between two saves of the upload state (a crash re-sends at most these)
LOG_MAX_BYTES = 256 * 1024

CONFIG_FILE = "client.json"
KEY_FILE = "device.key"
STATE_FILE = "upload-state.json"
LOG_FILE = "upload.log"
LOCK_FILE = "upload.lock"
AGAIN_FILE = "upload.again"  # an upload asked for while another ran: the running one goes again


class ClientError(Exception):
    """A problem the user must fix, said in one line."""


# ------------------------------------------------------------------------------------------------
# Where things are


def client_home() -> Path:
    explicit = os.environ.get("JEZERO_CLIENT_HOME", "").strip()
    if explicit:
        return Path(explicit).expanduser()
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "jezero"
    if os.name == "nt":
        return Path(os.environ.get("APPDATA") or (Path.home() / "AppData" / "Roaming")) / "jezero"
    return Path(os.environ.get("XDG_CONFIG_HOME") or (Path.home() / ".config")) / "jezero"


def key_digest(key: str) -> str:
    import hashlib

    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def _write_private(path: Path, text: str) -> None:
    """Write a file only its owner can read, replacing any old one in one step."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name("." + path.name + ".tmp")
    fd = os.open(str(tmp), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, text.encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)
    os.chmod(str(tmp), 0o600)
    os.replace(str(tmp), str(path))


class Client:
    """This device's settings and key, from the client folder."""

    def __init__(self, home: Path):
        self.home = home
        try:
            self.settings = json.loads((home / CONFIG_FILE).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ClientError(f"no device set up in {home}: run `jezero_client.py init --server URL --device NAME`")
        except (OSError, ValueError, RecursionError) as e:
            raise ClientError(f"cannot read {home / CONFIG_FILE}: {e}")
        if not isinstance(self.settings, dict) or not isinstance(self.settings.get("server"), str):
            raise ClientError(f"{home / CONFIG_FILE} has no server URL: run init again")

    @property
    def server(self) -> str:
        return self.settings["server"].rstrip("/")

    @property
    def device(self) -> str:
        return str(self.settings.get("device") or "")

    def key(self) -> str:
        return read_key(self.home)


def read_key(home: Path) -> str:
    try:
        key = (home / KEY_FILE).read_text(encoding="utf-8").strip()
    except OSError as e:
        raise ClientError(f"cannot read the device key {home / KEY_FILE}: {e.strerror or e}")
    except ValueError:  # not UTF-8: not a key this client wrote
        raise ClientError(f"{home / KEY_FILE} does not hold a Jezero key: run init with --new-key") from None
    if not key.startswith(KEY_PREFIX):
        raise ClientError(f"{home / KEY_FILE} does not hold a Jezero key: run init with --new-key")
    return key


# ------------------------------------------------------------------------------------------------
# HTTP, standard library only


class Connection:
    """One keep-alive HTTP(S) connection to the server, reopened when the server closed it."""

    def __init__(self, server: str, timeout: float = HTTP_TIMEOUT, headers: Optional[Dict[str, str]] = None):
        parts = urlsplit(server)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ClientError(f"server must be an http:// or https:// URL, got {server!r}")
        try:
            port = parts.port
        except ValueError:  # a port out of range, or not a number: a traceback at every upload before
            raise ClientError(f"server URL {server!r} has no valid port (1-65535)") from None
        self.scheme, self.host, self.port = parts.scheme, parts.hostname, port
        self.netloc = parts.netloc.rpartition("@")[2]  # host[:port] as the Host header says it
        self.base = parts.path.rstrip("/")
        self.timeout = timeout
        self.headers = dict(headers or {})  # sent with every request
        self._conn = None  # type: Optional[http.client.HTTPConnection]

    def _open(self) -> http.client.HTTPConnection:
        import http.client

        if self._conn is None:
            cls = http.client.HTTPSConnection if self.scheme == "https" else http.client.HTTPConnection
            self._conn = cls(self.host, self.port, timeout=self.timeout)
        return self._conn

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def request(self, method: str, path: str, body: Any = None,
                headers: Optional[Dict[str, str]] = None) -> Tuple[int, Dict[str, str], bytes]:
        """(status, lower-cased headers, body). Raises OSError when the server cannot be reached."""
        import http.client

        for attempt in (1, 2):
            conn = self._open()
            try:
                if hasattr(body, "seek"):
                    body.seek(0)
                conn.request(method, self.base + path, body=body, headers={**self.headers, **(headers or {})})
                resp = conn.getresponse()
                data = resp.read()
                found = {k.lower(): v for k, v in resp.getheaders()}
                if found.get("connection", "").lower() == "close":
                    self.close()
                return resp.status, found, data
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                # A kept-alive connection the server had closed: one fresh try (PUT and MCP
                # requests are safe to send again).
                self.close()
                if attempt == 2:
                    raise
            except (OSError, http.client.HTTPException) as e:
                self.close()
                raise OSError(str(e) or type(e).__name__)
        raise OSError("unreachable")

    def post(self, path: str, body: bytes, headers: Optional[Dict[str, str]] = None) -> Tuple[int, Dict[str, str], bytes]:
        """A small POST, as the hooks send them: to a plain http:// server without http.client
        (see http10_post), to https:// through request()."""
        if self.scheme == "https":
            return self.request("POST", path, body=body, headers=headers)
        return http10_post(self.host, self.port or 80, self.netloc, self.base + path, body,
                           {**self.headers, **(headers or {})}, self.timeout)


# A hook's request is one small POST, nearly always to a server on this computer, and importing
# http.client costs a hook more than the request itself (26 ms, for the email package it parses
# headers with). So to a plain http:// server the hooks speak HTTP/1.0 over a socket, which keeps
# the answer trivial to read: the server closes the connection after it and may not use chunked
# encoding (that is HTTP/1.1 only, RFC 9112 section 7.1), so an answer is a status line, header
# lines and the body, up to its Content-Length or to the end of the stream. Anything else is an
# OSError, like a server that cannot be reached. https:// keeps to http.client and ssl.
MAX_ANSWER_BYTES = 16 * 1024 * 1024  # a tool's answer is capped far below by the server (shape.fit)
_HEADER_END = b"\r\n\r\n"


def http10_post(host: str, port: int, host_header: str, target: str, body: bytes, headers: Dict[str, str],
                timeout: float) -> Tuple[int, Dict[str, str], bytes]:
    """(status, lower-cased headers, body) of one HTTP/1.0 POST. OSError when there is no answer
    or it is not one; ValueError for a header that would break the request (as http.client)."""
    import socket

    lines = ["POST {} HTTP/1.0".format(target), "Host: " + host_header]
    for name, value in list(headers.items()) + [("Content-Length", str(len(body)))]:
        if any(c in str(name) + str(value) for c in "\r\n\0") or ":" in str(name):
            raise ValueError("invalid header {!r}".format(name))
        lines.append("{}: {}".format(name, value))
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    received = bytearray()
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall(head + body)
        length = None  # type: Optional[int]
        found = None  # type: Optional[Tuple[int, Dict[str, str], int]]
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            received += chunk
            if len(received) > MAX_ANSWER_BYTES:
                raise OSError("answer larger than {} bytes".format(MAX_ANSWER_BYTES))
            if found is None and _HEADER_END in received:
                found = _answer_head(bytes(received[:received.index(_HEADER_END)]))
                length = found[2] if found[2] >= 0 else None
                received = received[received.index(_HEADER_END) + len(_HEADER_END):]
            if found is not None and length is not None and len(received) >= length:
                break
    if found is None:
        raise OSError("the server closed the connection without an answer")
    if length is not None and len(received) < length:
        raise OSError("the answer ended after {} of its {} bytes".format(len(received), length))
    return found[0], found[1], bytes(received[:length] if length is not None else received)


def _answer_head(raw: bytes) -> Tuple[int, Dict[str, str], int]:
    """(status, lower-cased headers, Content-Length or -1) of an answer's status and header lines."""
    lines = raw.decode("latin-1").split("\r\n")
    status_line = lines[0].split(None, 2)
    if len(status_line) < 2 or not status_line[0].startswith("HTTP/1.") or not status_line[1].isdigit():
        raise OSError("not an HTTP answer: {!r}".format(lines[0][:80]))
    headers = {}  # type: Dict[str, str]
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if not colon or not name.strip():
            raise OSError("bad header line in the answer: {!r}".format(line[:80]))
        headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding", "identity").lower() != "identity":
        raise OSError("a {} answer to an HTTP/1.0 request".format(headers["transfer-encoding"]))
    length = headers.get("content-length", "")
    if length and not length.isdigit():
        raise OSError("bad Content-Length {!r}".format(length))
    return int(status_line[1]), headers, int(length) if length else -1


def _inbox_refusal(data: bytes) -> bool:
    """Whether a refusal's body is the inbox's own ({"error": "..."}, jezero/server/inbox.py)."""
    try:
        found = json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError, UnicodeDecodeError):
        return False
    return isinstance(found, dict) and isinstance(found.get("error"), str)


def _error_text(data: bytes) -> str:
    try:
        found = json.loads(data.decode("utf-8"))
        return str(found.get("error_description") or found.get("error") or found)[:300]
    except (ValueError, RecursionError, UnicodeDecodeError, AttributeError):
        return data[:200].decode("utf-8", "replace").strip()


# ------------------------------------------------------------------------------------------------
# The agents' stores and the paths the inbox accepts (the server checks uploads with these same functions: jezero/inbox/layouts.py imports them)

_NAME = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$")
_CLAUDE_SESSION = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9._-]*\.jsonl$")
_CLAUDE_AGENT = re.compile(r"^agent-[A-Za-z0-9._-]+\.jsonl$")
_CLAUDE_AGENT_META = re.compile(r"^agent-[A-Za-z0-9._-]+\.meta\.json$")
_CODEX_ROLLOUT = re.compile(r"^rollout-[A-Za-z0-9._-]+\.jsonl(\.zst)?$")
_YEAR, _MONTH, _DAY = re.compile(r"^\d{4}$"), re.compile(r"^(0[1-9]|1[0-2])$"), re.compile(r"^(0[1-9]|[12]\d|3[01])$")
MAX_PATH_CHARS = 1024
SKIP_FOLDERS = {"tool-results", "memory"}  # big folders of a Claude Code store with no transcripts


def _claude_layout(parts: List[str]) -> bool:
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


def _dated(parts: List[str]) -> bool:
    return len(parts) == 4 and bool(_YEAR.match(parts[0]) and _MONTH.match(parts[1]) and _DAY.match(parts[2])
                                    and _CODEX_ROLLOUT.match(parts[3]))


def _codex_layout(parts: List[str]) -> bool:
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


def _gemini_layout(parts: List[str]) -> bool:
    if parts == ["projects.json"]:
        return True
    if len(parts) == 4 and parts[0] == "tmp" and parts[2] == "chats":
        return bool(_GEMINI_CHAT.match(parts[3]))
    if len(parts) == 5 and parts[0] == "tmp" and parts[2] == "chats":
        return bool(_GEMINI_SUB_CHAT.match(parts[4]))
    return False


def _copilot_layout(parts: List[str]) -> bool:
    if len(parts) == 3 and parts[0] == "session-state":
        return parts[2] in ("events.jsonl", "workspace.yaml")
    return len(parts) == 2 and parts[0] == "session-state" and bool(_COPILOT_FLAT.match(parts[1]))


def _opencode_layout(parts: List[str]) -> bool:
    if len(parts) == 1:
        return bool(_OPENCODE_DB.match(parts[0]))
    if len(parts) == 4 and parts[0] == "storage" and parts[1] in ("session", "message", "part"):
        return bool(_OPENCODE_JSON.match(parts[3]))
    return False


LAYOUTS = {"claude": _claude_layout, "codex": _codex_layout, "gemini": _gemini_layout, "copilot": _copilot_layout,
           "opencode": _opencode_layout}
# The top folders (or files) of each store that hold what the layouts accept.
TOPS = {"claude": ["projects"], "codex": ["sessions", "archived_sessions", "session_index.jsonl"],
        "gemini": ["projects.json", "tmp"], "copilot": ["session-state"], "opencode": ["storage"]}


def accepted(agent: str, relative: str) -> bool:
    """True when the server's inbox takes this path of this agent's store."""
    if agent not in LAYOUTS or not relative or len(relative) > MAX_PATH_CHARS:
        return False
    parts = relative.split("/")
    return all(_NAME.match(p) for p in parts) and LAYOUTS[agent](parts)


def _env_path(name: str) -> Optional[Path]:
    value = os.environ.get(name, "").strip()
    return Path(value).expanduser() if value else None


def default_stores() -> Dict[str, Path]:
    """Each agent's store on this computer, where the agent itself looks for it."""
    home = Path.home()
    gemini_home = _env_path("GEMINI_CLI_HOME")
    data = _env_path("XDG_DATA_HOME") or home / ".local" / "share"
    return {
        "claude": _env_path("CLAUDE_CONFIG_DIR") or home / ".claude",
        "codex": _env_path("CODEX_HOME") or home / ".codex",
        "gemini": (gemini_home or home) / ".gemini",
        "copilot": _env_path("COPILOT_HOME") or home / ".copilot",
        "opencode": data / "opencode",
    }


def store_files(agent: str, root: Path) -> Iterator[Tuple[str, Path]]:
    """(path inside the store, file) for every file of the store the inbox accepts."""
    if agent == "opencode":  # its SQLite stores sit at the top of its data folder
        try:
            for db in sorted(root.glob("opencode*.db")):
                if db.is_file() and accepted(agent, db.name):
                    yield db.name, db
        except OSError:
            pass
    for top in TOPS[agent]:
        start = root / top
        if start.is_file():
            if accepted(agent, top):
                yield top, start
            continue
        if not start.is_dir():
            continue
        for folder, dirs, files in os.walk(str(start)):  # symlinked folders are not followed
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP_FOLDERS)
            rel_folder = Path(folder).relative_to(root).as_posix()
            if rel_folder.count("/") > 6:
                dirs[:] = []
            for name in sorted(files):
                relative = rel_folder + "/" + name
                if accepted(agent, relative):
                    yield relative, Path(folder) / name


# ------------------------------------------------------------------------------------------------
# Project rules (the same as the server's built-in ones in jezero/ingest/projects.py): the git
# repository of the session's folder (the main one for a worktree), else a common root folder.

DEFAULT_ROOTS = ["src", "code", "projects", "workspace", "work", "dev", "repos", "git", "github"]
_CWD_SCAN_BYTES = 256 * 1024  # the working folder is on the first lines of a session


def slug(name: str) -> Optional[str]:
    s = re.sub(r"[^a-z0-9._-]+", "-", name.strip().lower()).strip("-.")
    return s[:63] or None


def _parts(cwd: str) -> List[str]:
    path = PureWindowsPath(cwd) if re.match(r"^[A-Za-z]:\\", cwd) else PurePosixPath(cwd)
    return [p for p in path.parts if p not in ("/", "\\") and not p.endswith(":\\")]


def project_from_git(cwd: Optional[str]) -> Optional[str]:
    if not cwd:
        return None
    try:
        here = Path(cwd)
        if not here.is_absolute() or not here.exists():
            return None
        for folder in (here,) + tuple(here.parents):
            dot_git = folder / ".git"
            if dot_git.is_dir():
                return slug(folder.name)
            if dot_git.is_file():  # a worktree or submodule: "gitdir: /main/.git/worktrees/x"
                text = dot_git.read_text(errors="replace").strip()
                if text.startswith("gitdir:"):
                    gitdir = Path(text[7:].strip())
                    if not gitdir.is_absolute():
                        gitdir = (folder / gitdir).resolve()
                    if "worktrees" in gitdir.parts:
                        return slug(gitdir.parents[1].parent.name)
                return slug(folder.name)
    except OSError:
        return None
    return None


def project_from_roots(cwd: Optional[str], roots: List[str]) -> Optional[str]:
    if not cwd:
        return None
    parts = _parts(cwd)
    for root in roots:
        if "/" in root or "\\" in root or root.startswith("~"):
            root_parts = _parts(os.path.expanduser(root))
            n = len(root_parts)
            if n and parts[:n] == root_parts and len(parts) > n:
                return slug(parts[n])
        else:
            for i, part in enumerate(parts[:-1]):
                if part == root:
                    return slug(parts[i + 1])
    return None


def resolve_project(cwd: Optional[str], roots: Optional[List[str]] = None) -> Optional[str]:
    return project_from_git(cwd) or project_from_roots(cwd, DEFAULT_ROOTS if roots is None else roots)


def session_cwd(path: Path) -> Optional[str]:
    """The working folder a session file records on its first lines (Claude Code: `cwd` on each
    line; Codex: `payload.cwd` of session_meta / turn_context). None for compressed files."""
    if path.name.endswith(".zst"):
        return None
    try:
        with open(str(path), "rb") as f:
            head = f.read(_CWD_SCAN_BYTES)
    except OSError:
        return None
    for line in head.split(b"\n"):
        if b'"cwd"' not in line:
            continue
        try:
            obj = json.loads(line.decode("utf-8", "replace"))
        except (ValueError, RecursionError):  # nested too deep for the decoder: not a line to read
            continue
        if not isinstance(obj, dict):
            continue
        data = obj.get("data")
        context = data.get("context") if isinstance(data, dict) else None  # Copilot's session.start
        for holder in (obj, obj.get("payload"), context):
            if isinstance(holder, dict) and isinstance(holder.get("cwd"), str) and holder["cwd"].strip():
                return holder["cwd"]
    return None


def _gemini_cwd(root: Path, relative: str) -> Optional[str]:
    """Gemini's chats do not record their folder: tmp/<name>/ is the project folder that
    projects.json ({"projects": {folder: name}}) or tmp/<name>/.project_root names."""
    parts = relative.split("/")
    if len(parts) < 3 or parts[0] != "tmp":
        return None
    try:
        marker = (root / "tmp" / parts[1] / ".project_root").read_text(encoding="utf-8").strip()
        if marker:
            return marker
    except (OSError, UnicodeDecodeError):
        pass
    try:
        known = json.loads((root / "projects.json").read_text(encoding="utf-8")).get("projects") or {}
        for folder, name in known.items():
            if name == parts[1]:
                return folder
    except (OSError, ValueError, AttributeError):
        pass
    return None


def upload_cwd(agent: str, root: Path, relative: str, path: Path) -> Optional[str]:
    """The working folder of the session in an uploaded file (None when the file has none:
    OpenCode's database holds every session, each with its own folder)."""
    if agent == "gemini":
        return _gemini_cwd(root, relative)
    if agent == "opencode" or not path.name.endswith(".jsonl"):
        return None
    return session_cwd(path)


def sqlite_snapshot(db: Path, target: Path) -> None:
    """A consistent copy of a live SQLite database (WAL included) through SQLite's online
    backup: the file alone may miss transactions still in its -wal, or be torn by a checkpoint."""
    import sqlite3

    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():
        target.unlink()
    source = sqlite3.connect("file:" + str(db) + "?mode=ro", uri=True, timeout=5)
    try:
        copy = sqlite3.connect(str(target))
        try:
            source.backup(copy)
        finally:
            copy.close()
    finally:
        source.close()
    os.chmod(str(target), 0o600)


# A file rewritten to the same size whose mtime stays (set back by a tool, or two writes in one
# tick of a coarse clock) was never sent again: the signature ends with a hash of what neither
# hides, the status-change time (set by the system on every write) and the first and last
# SIGNATURE_EDGE bytes (jezero.ingest.files.file_signature does the same for the server's reads).
SIGNATURE_EDGE = 4096


def _signature(path: Path) -> List[int]:
    """Size and modification time (a SQLite store adds its -wal's: new writes land there
    first), then the check described above. OSError for what is not a regular file (opened
    without waiting: a named pipe in a store would hold the upload, and its lock, forever)."""
    import hashlib  # (here: the hooks import this module and never upload)

    fd = os.open(str(path), os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(f"{path}: not a regular file")
        check = hashlib.blake2b(st.st_ctime_ns.to_bytes(16, "big", signed=True), digest_size=6)
        check.update(os.read(fd, SIGNATURE_EDGE))
        if st.st_size > SIGNATURE_EDGE:
            os.lseek(fd, max(SIGNATURE_EDGE, st.st_size - SIGNATURE_EDGE), os.SEEK_SET)
            check.update(os.read(fd, SIGNATURE_EDGE))
    finally:
        os.close(fd)
    sig = [st.st_size, st.st_mtime_ns]
    if path.name.endswith(".db"):
        try:
            wal = os.stat(str(path) + "-wal")
            sig += [wal.st_size, wal.st_mtime_ns]
        except OSError:
            pass
    return sig + [int.from_bytes(check.digest(), "big")]


def _unchanged(sent, sig: List[int]) -> bool:
    """Whether a file was sent as it is now. A signature kept before the check was ([size,
    mtime], with the -wal's for a store) is trusted on those, as it was then: sending every file
    again after an upgrade would cost each device its whole store once."""
    return sent == sig or sent == sig[:-1]


# ------------------------------------------------------------------------------------------------
# init and status


def cmd_init(args: argparse.Namespace) -> int:
    home = client_home()
    if not DEVICE_NAME.match(args.device):
        raise ClientError(f"invalid device name {args.device!r}: letters, digits, '.', '_' or '-' (at most 48)")
    Connection(args.server)  # checks the URL
    key_path = home / KEY_FILE
    had_key = key_path.exists()
    if had_key and not args.new_key:
        current = read_key(home)
        note = "this device already has a key; --new-key makes another (then the admin rotates it)"
    else:
        import secrets

        current = KEY_PREFIX + secrets.token_urlsafe(KEY_BYTES)
        _write_private(key_path, current + "\n")
        note = f"key written to {key_path} (readable by you only; it never leaves this computer)"
    settings = {"server": args.server.rstrip("/"), "device": args.device}
    _write_private(home / CONFIG_FILE, json.dumps(settings, indent=2) + "\n")
    verb = "rotate" if had_key and args.new_key else "approve"
    sys.stderr.write(note + "\nask the server's admin to run:\n")
    sys.stdout.write(f"jezero device {verb} {args.device} {key_digest(current)}\n")
    return 0


def _load_state(home: Path) -> Dict[str, Any]:
    """What was sent, or a fresh start where the file is missing, damaged or of another shape
    (every file is then sent again once; the inbox answers "changed": false for what it has).
    Nested past the parser's depth (RecursionError) or with a `last` that is not a summary, it
    was a traceback for every upload and status until the file was removed by hand."""
    try:
        state = json.loads((home / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {"files": {}, "last": None}
    if not isinstance(state, dict) or not isinstance(state.get("files"), dict):
        return {"files": {}, "last": None}
    if not isinstance(state.get("last"), dict):
        state["last"] = None
    return state


def _save_state(home: Path, state: Dict[str, Any]) -> None:
    _write_private(home / STATE_FILE, json.dumps(state, sort_keys=True) + "\n")


def cmd_status(args: argparse.Namespace) -> int:
    client = Client(client_home())
    key = client.key()
    report = {"server": client.server, "device": client.device, "key_file": str(client.home / KEY_FILE),
              "key_sha256": key_digest(key), "core_version": VERSION, "approved": None, "reachable": False,
              "error": None, "last_upload": _load_state(client.home).get("last")}
    conn = Connection(client.server, timeout=10)
    try:
        status, _, data = conn.request("GET", "/api/v1/overview?days=1", headers={"Authorization": "Bearer " + key})
        report["reachable"] = True
        if status == 200 or status == 503:  # 503: the key was accepted, the library is not built yet
            report["approved"] = True
        elif status == 401:
            report["approved"] = False
            report["error"] = "the server does not know this key (not approved yet, or revoked)"
        else:
            report["error"] = f"server answered {status}: {_error_text(data)}"
    except OSError as e:
        report["error"] = f"cannot reach {client.server}: {e}"
    finally:
        conn.close()
    if args.json:
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
    else:
        approved = {True: "approved", False: "NOT approved", None: "unknown"}[report["approved"]]
        lines = [f"server:  {report['server']} ({'reachable' if report['reachable'] else 'unreachable'})",
                 f"device:  {report['device']} (key {approved})",
                 f"key:     {report['key_file']} (sha256 {report['key_sha256']})"]
        last = report["last_upload"]
        if last:
            lines.append(f"upload:  {last.get('at')}: {last.get('sent', 0)} sent, {last.get('unchanged', 0)} unchanged, "
                         f"{last.get('refused', 0)} refused" + (f"; {last['error']}" if last.get("error") else ""))
        else:
            lines.append("upload:  none yet")
        if report["error"]:
            lines.append(f"problem: {report['error']}")
        sys.stdout.write("\n".join(lines) + "\n")
    return 0 if report["approved"] else 1


# ------------------------------------------------------------------------------------------------
# upload


class _Log:
    def __init__(self, path: Path, echo: bool):
        self.path, self.echo = path, echo

    def __call__(self, message: str) -> None:
        line = time.strftime("%Y-%m-%dT%H:%M:%S") + " " + message + "\n"
        if self.echo:
            sys.stderr.write(line)
        try:
            if self.path.exists() and self.path.stat().st_size > LOG_MAX_BYTES:
                keep = self.path.read_bytes()[-LOG_MAX_BYTES // 2:]
                self.path.write_bytes(keep)
            with open(str(self.path), "a", encoding="utf-8") as f:
                f.write(line)
        except OSError:
            pass


class _Lock:
    """Held by the one upload running on this device; a second one leaves a note and goes."""

    def __init__(self, path: Path):
        self.path = path
        self.fd = None  # type: Optional[int]

    def acquire(self) -> bool:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(str(self.path), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            if os.name == "nt":
                import msvcrt

                msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
            else:
                import fcntl

                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False
        self.fd = fd
        return True

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)  # closing drops the lock on every platform
            self.fd = None


class _Exactly:
    """A file read up to the size it had when it was looked at (an agent may be appending)."""

    def __init__(self, f, size: int):
        self.f, self.size, self.left = f, size, size

    def seek(self, _offset: int) -> None:  # from the start again, for a retried request
        self.f.seek(0)
        self.left = self.size

    def read(self, n: int = -1) -> bytes:
        if self.left <= 0:
            return b""
        n = self.left if n is None or n < 0 else min(n, self.left)
        data = self.f.read(n)
        self.left -= len(data)
        return data


STORE_OPTIONS = ("claude", "codex", "gemini", "copilot", "opencode")


def _content_type(name: str) -> str:
    if name.endswith(".zst"):
        return "application/zstd"
    if name.endswith(".db"):
        return "application/vnd.sqlite3"
    return "application/octet-stream"


def _stores_from(args: argparse.Namespace) -> Dict[str, Path]:
    stores = default_stores()
    for agent in STORE_OPTIONS:
        if getattr(args, agent, None):
            stores[agent] = Path(getattr(args, agent)).expanduser()
    return stores


# Where each agent's plugin keeps its manifest, beside its copy of this file. OpenCode's plugin is
# one JavaScript file with no manifest: its version is a line of that file (PLUGIN_VERSION_LINE).
PLUGIN_MANIFESTS = (("claude", ".claude-plugin/plugin.json"), ("codex", ".codex-plugin/plugin.json"),
                    ("gemini", "gemini-extension.json"), ("copilot", ".plugin/plugin.json"),
                    ("opencode", "jezero.js"))
PLUGIN_VERSION_LINE = re.compile(r'^const PLUGIN_VERSION = "([^"]+)";', re.M)
PLUGIN_ENV = "JEZERO_PLUGIN"  # "<agent>/<version>", for a plugin whose agent has no manifest file
_PLUGIN = re.compile(r"^[a-z0-9][a-z0-9._-]{0,31}/[0-9A-Za-z][0-9A-Za-z.+-]{0,31}$")


def _manifest_version(path: Path) -> Optional[str]:
    try:
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".js":
            found = PLUGIN_VERSION_LINE.search(text)
            return found.group(1) if found else None
        version = json.loads(text).get("version")
    except (OSError, ValueError, AttributeError):
        return None
    return version if isinstance(version, str) else None


def plugin_label() -> Optional[str]:
    """The "<agent>/<version>" of the agent plugin running this copy of the core (from its
    manifest beside this file, or $JEZERO_PLUGIN), None when the core runs on its own."""
    label = os.environ.get(PLUGIN_ENV, "").strip()
    if not label:
        here = Path(os.path.abspath(__file__)).parent
        for agent, manifest in PLUGIN_MANIFESTS:
            version = _manifest_version(here / manifest)
            if version is not None:
                label = "{}/{}".format(agent, version)
                break
    return label if _PLUGIN.match(label) else None


# Answers to an upload that say nothing of the file, only of this attempt: 408 (the server gave up
# waiting for the body: a stalled link, [inbox] upload_idle_seconds) and 429 (busy). Like a 5xx,
# the run stops and the file is sent on the next one; any other 4xx refuses the file for good.
UPLOAD_TRY_AGAIN = (408, 429)


def upload_once(client: Client, stores: Dict[str, Path], log) -> Dict[str, Any]:
    """Send every accepted file whose size or modification time changed since it was last sent."""
    key = client.key()
    state = _load_state(client.home)
    files = state["files"]
    summary = {"at": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "sent": 0, "unchanged": 0, "refused": 0, "bytes": 0,
               "error": None}
    versions = {CLIENT_HEADER: CORE_VERSION}  # on every upload: the server records them per device
    plugin = plugin_label()
    if plugin:
        versions[PLUGIN_HEADER] = plugin
    conn = Connection(client.server, headers=versions)
    pending = 0
    try:
        for agent, root in sorted(stores.items()):
            for relative, path in store_files(agent, root):
                try:
                    sig = _signature(path)
                except OSError:
                    continue
                entry = agent + "/" + relative
                if _unchanged(files.get(entry), sig) or sig[0] == 0:
                    continue
                send = path
                if path.name.endswith(".db"):
                    send = client.home / "snapshots" / (agent + "-" + path.name)
                    try:
                        sqlite_snapshot(path, send)
                    except Exception as e:  # busy, locked, not a database: try again next time
                        log(f"cannot snapshot {path}: {e}")
                        continue
                size = send.stat().st_size
                headers = {"Authorization": "Bearer " + key, "Content-Type": _content_type(path.name),
                           "Content-Length": str(size)}
                project = resolve_project(upload_cwd(agent, root, relative, path), client.settings.get("roots"))
                if project:
                    headers[PROJECT_HEADER] = project
                try:
                    with open(str(send), "rb") as f:
                        status, _, data = conn.request("PUT", f"/inbox/v1/{agent}/{relative}",
                                                       body=_Exactly(f, size), headers=headers)
                except OSError as e:
                    summary["error"] = f"cannot reach {client.server}: {e}"
                    log(summary["error"])
                    return summary
                if status in (401, 403):
                    summary["error"] = f"the server refused this device's key ({status}: {_error_text(data)})"
                    log(summary["error"])
                    return summary
                if status >= 500 or status in UPLOAD_TRY_AGAIN:
                    summary["error"] = f"{entry} not stored ({status}: {_error_text(data)}): sent again next run"
                    log(summary["error"])
                    return summary
                if 200 <= status < 300:
                    changed = True
                    try:
                        changed = bool(json.loads(data.decode("utf-8")).get("changed", True))
                    except (ValueError, RecursionError, UnicodeDecodeError, AttributeError):
                        pass
                    summary["sent" if changed else "unchanged"] += 1
                    summary["bytes"] += size if changed else 0
                elif not _inbox_refusal(data):
                    # Not the inbox's own refusal: a proxy in front of it (nginx's 413 past its 1 MB
                    # default), a wrong server URL (404), a server without an inbox (405). Marked
                    # refused for good, each such file stayed off the library once the cause was fixed.
                    error = f"{entry} not stored: {status} {_error_text(data)!r} is not an answer of a Jezero inbox"
                    log(error + " (a proxy, or a wrong server URL?): sent again next run")
                    if status == 413:  # a proxy's cap on this file's size: the smaller ones go on
                        summary["error"] = error
                        continue
                    summary["error"] = error
                    return summary
                else:  # refused for good (layout, size, type): not sent again until it changes
                    summary["refused"] += 1
                    log(f"refused {entry}: {status} {_error_text(data)}")
                files[entry] = sig
                pending += 1
                if pending >= STATE_SAVE_EVERY:
                    _save_state(client.home, state)
                    pending = 0
    finally:
        conn.close()
        state["last"] = summary
        _save_state(client.home, state)
    return summary


def run_upload(args: argparse.Namespace) -> int:
    client = Client(client_home())
    log = _Log(client.home / LOG_FILE, echo=args.verbose)
    lock = _Lock(client.home / LOCK_FILE)
    again = client.home / AGAIN_FILE
    if not lock.acquire():
        again.touch()  # the running upload looks again before it stops
        return 0
    try:
        while True:
            try:
                again.unlink()
            except FileNotFoundError:
                pass
            summary = upload_once(client, _stores_from(args), log)
            if summary["sent"] or summary["refused"] or summary["error"]:
                log(f"upload: {summary['sent']} sent ({summary['bytes']} bytes), {summary['unchanged']} unchanged, "
                    f"{summary['refused']} refused" + (f"; stopped: {summary['error']}" if summary["error"] else ""))
            if summary["error"] or not again.exists():
                break
    finally:
        lock.release()
    if summary["error"]:
        return 2 if "refused this device's key" in summary["error"] else 1
    return 0


def cmd_upload(args: argparse.Namespace) -> int:
    if args.wait:
        return run_upload(args)
    Client(client_home())  # a device that is not set up says so now, not in a log
    stores = []  # type: List[str]
    for option in STORE_OPTIONS:
        if getattr(args, option, None):
            stores += [f"--{option}", getattr(args, option)]
    start_upload(stores)
    return 0


def start_upload(options: List[str]) -> None:
    """Start `upload --wait` in a detached process that outlives the agent's hook and its process
    group, and return at once."""
    import subprocess

    command = [sys.executable, os.path.abspath(__file__), "upload", "--wait"] + options
    detach = {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL,
              "close_fds": True}  # type: Dict[str, Any]
    if os.name == "nt":
        detach["creationflags"] = getattr(subprocess, "DETACHED_PROCESS", 0x8) | getattr(
            subprocess, "CREATE_NEW_PROCESS_GROUP", 0x200)
    else:
        detach["start_new_session"] = True
    subprocess.Popen(command, **detach)


# ------------------------------------------------------------------------------------------------
# bridge: stdio MCP <-> the server's streamable HTTP MCP


class Bridge:
    """Forwards each JSON-RPC message read from stdin to the server's /mcp and writes the
    answers to stdout, one JSON message per line. Messages are forwarded concurrently, so a slow
    search does not hold up the next call; a failure becomes a JSON-RPC error for that request."""

    def __init__(self, client: Client, out=None):
        self.client = client
        self.key = client.key()
        self.out = out or sys.stdout
        self._write_lock = threading.Lock()
        import queue

        self._pool = queue.LifoQueue()  # type: queue.LifoQueue
        self.protocol_version = None  # type: Optional[str]
        self.session_id = None  # type: Optional[str]

    def write(self, message: Any) -> None:
        line = json.dumps(message, separators=(",", ":"), ensure_ascii=False) + "\n"
        # MCP's stdio messages are UTF-8 whatever the locale: the bridge runs under -I, which
        # ignores PYTHONUTF8 and PYTHONIOENCODING, and a Windows pipe's text default is the ANSI
        # code page, which cannot hold every title.
        raw = getattr(self.out, "buffer", None)
        with self._write_lock:
            if raw is not None:
                raw.write(line.encode("utf-8"))
                raw.flush()
            else:
                self.out.write(line)
                self.out.flush()

    def _connection(self) -> Connection:
        import queue

        try:
            return self._pool.get_nowait()
        except queue.Empty:
            return Connection(self.client.server)

    def handle(self, message: Any) -> None:
        wants_answer = isinstance(message, dict) and "method" in message and "id" in message
        headers = {"Authorization": "Bearer " + self.key, "Content-Type": "application/json",
                   "Accept": "application/json, text/event-stream"}
        if self.protocol_version:
            headers["MCP-Protocol-Version"] = self.protocol_version
        if self.session_id:
            headers["Mcp-Session-Id"] = self.session_id
        conn = self._connection()
        try:
            status, found, data = conn.request("POST", "/mcp", body=json.dumps(message).encode("utf-8"),
                                               headers=headers)
        except OSError as e:
            conn.close()
            if wants_answer:
                self._error(message, f"Jezero server {self.client.server} unreachable: {e}")
            return
        self._pool.put(conn)
        if found.get("mcp-session-id"):
            self.session_id = found["mcp-session-id"]
        answers = self._answers(found.get("content-type", ""), data)
        if status >= 400 and not answers:
            if wants_answer:
                reason = ("the server does not know this device's key (run `jezero_client.py status`)"
                          if status == 401 else f"server answered {status}: {_error_text(data)}")
                self._error(message, "Jezero: " + reason)
            return
        for answer in answers:
            if isinstance(answer, dict) and isinstance(answer.get("result"), dict):
                version = answer["result"].get("protocolVersion")
                if isinstance(version, str) and isinstance(message, dict) and message.get("method") == "initialize":
                    self.protocol_version = version
            self.write(answer)

    @staticmethod
    def _answers(content_type: str, data: bytes) -> List[Any]:
        if not data.strip():
            return []
        if "text/event-stream" in content_type:
            found, event = [], []  # type: List[Any], List[str]
            for raw in data.decode("utf-8", "replace").splitlines() + [""]:
                if raw.startswith("data:"):
                    event.append(raw[5:].lstrip())
                elif not raw.strip() and event:
                    try:
                        found.append(json.loads("\n".join(event)))
                    except (ValueError, RecursionError):
                        pass
                    event = []
            return found
        try:
            answer = json.loads(data.decode("utf-8"))
        except (ValueError, RecursionError, UnicodeDecodeError):
            return []
        return answer if isinstance(answer, list) else [answer]

    def _error(self, message: Dict[str, Any], text: str) -> None:
        self.write({"jsonrpc": "2.0", "id": message.get("id"), "error": {"code": -32000, "message": text}})

    def run(self, stdin=None) -> int:
        stdin = stdin or getattr(sys.stdin, "buffer", sys.stdin)  # UTF-8 bytes, as write() sends
        threads = []  # type: List[threading.Thread]
        for line in stdin:
            if isinstance(line, bytes):
                line = line.decode("utf-8", "replace")
            line = line.strip()
            if not line:
                continue
            try:
                message = json.loads(line)
            except (ValueError, RecursionError):  # RecursionError: nested too deep to decode
                self.write({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}})
                continue
            thread = threading.Thread(target=self.handle, args=(message,), daemon=True)
            thread.start()
            threads = [t for t in threads if t.is_alive()] + [thread]
        for thread in threads:  # stdin closed: let the calls in flight answer, then go
            thread.join(HTTP_TIMEOUT)
        return 0


def cmd_bridge(args: argparse.Namespace) -> int:
    return Bridge(Client(client_home())).run()


# ------------------------------------------------------------------------------------------------
# hook: what the agent plugins run on their agent's events (session start, each prompt, the end)
#
# Every plugin maps its agent's events to `jezero_client.py hook EVENT --agent AGENT`, with the
# agent's own hook payload on stdin; this prints what that agent reads back. A hook must never
# block or break its agent: the work runs in a thread the hook waits for at most HOOK_BUDGET
# seconds, anything that goes wrong means "no context", nothing is written to stderr, and the
# exit status is always 0.

HOOK_BUDGET = 2.5
# JEZERO_HOOK_BUDGET (seconds) replaces it, within these bounds: for a slow link, and for tests
# that check what a hook adds, so a loaded test machine does not change their answer. An agent's
# own hook timeout (5 s in these plugins) still applies.
HOOK_BUDGET_RANGE = (0.5, 60.0)
HOOK_EVENTS = ("session-start", "prompt", "end")
HOOK_AGENTS = ("claude", "codex", "gemini", "copilot", "opencode")
HOOK_STATE_FOLDER = "hook-sessions"  # one marker per session whose first prompt was seen
HOOK_STATE_DAYS = 14  # markers older than this are swept
OFF_FILE = ".jezero-no-context"  # in the working folder or a folder above it: no context there
OFF_ENV = "JEZERO_CONTEXT"  # "off" (or 0/false/no) switches the context off for this user or run
NEWEST_ITEMS = 5

# The event name each agent expects back in hookSpecificOutput (Claude's schema, which Codex and
# Gemini follow); the payload's own hook_event_name wins when it has one.
_EVENT_NAMES = {
    "session-start": {"claude": "SessionStart", "codex": "SessionStart", "gemini": "SessionStart"},
    "prompt": {"claude": "UserPromptSubmit", "codex": "UserPromptSubmit", "gemini": "BeforeAgent"},
}

PROTOCOL = """\
Jezero holds the team's past work (sessions of coding agents, summarised), through the MCP tools
search, later, timeline, get_item and catalog. How to use it in this session:
- Before non-trivial work, search Jezero for what was already done or decided on the subject.
- Before you answer with a decision, a plan, a status or a number that comes from an item, call
  later on that item: newer work may have changed it.
- Cite the ids of the items you rely on, as [id].
- Never guess what past work said or did: if Jezero has nothing, say so.
- Nothing to save: this session reaches Jezero on its own when it ends."""

# The first-prompt rule (the same as jezero/query/first_prompt.py on the server side). BM25
# scores cannot be compared across queries, so no fixed score says "related": a hit counts only
# when two of the prompt's own words appear in its title or summary as whole words.
STOP_WORDS = frozenset("""
the and for are but not you your with this that these those from have has had was were will would
can could should what when where which who why how into onto over under about after before again
then than there here them they their our ours out off all any some more most other such only own
same very just also now too its it's let lets use using make made want need please help fix fixed
thanks thank hello could would get got see look check try new add added like able does did doing
done yes way one two
para por que con los las una unos unas del como pero mas más este esta estos estas ese esa eso
quiero queremos puedes podemos hacer hace haz favor gracias hola ayuda ayudame arreglar arregla
sobre entre cuando donde porque también tambien muy sin ser son fue hay todo toda todos todas
""".split())
MIN_WORD_CHARS = 3
MAX_PROMPT_WORDS = 20
FIRST_PROMPT_SEARCH = 8  # results looked at
# The search ranks the items' summaries and the sessions' transcripts apart and fuses the two. The
# rule keeps a hit only for words in its title or summary, which the items ranking is made of: so
# the hooks ask for that ranking alone, and the server never reads the transcripts for them (at
# 100,000 items with tantivy, 19 against 24 ms CPU p50: benchmarks/hooks/README.md). A server older
# than the lanes argument ignores it.
FIRST_PROMPT_LANES = ["items"]
MIN_SHARED_WORDS = 2
MAX_RELATED = 3
_WORD = re.compile(r"\w+")


def fold(text: str) -> str:
    """Lowercase without accents: "Migración" -> "migracion"."""
    import unicodedata

    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def prompt_words(prompt: str) -> List[str]:
    """The prompt's distinctive words: folded, >= 3 characters, no stop words, unique, at most 20."""
    words = []  # type: List[str]
    for word in _WORD.findall(fold(prompt)):
        if len(word) >= MIN_WORD_CHARS and word not in STOP_WORDS and word not in words:
            words.append(word)
            if len(words) == MAX_PROMPT_WORDS:
                break
    return words


def shared_words(words: List[str], hit: Dict[str, Any]) -> List[str]:
    """The words found as whole words (accent-insensitive) in the hit's title or summary."""
    present = set(_WORD.findall(fold("{} {}".format(hit.get("title") or "", hit.get("summary") or ""))))
    return [w for w in words if w in present]


def first_prompt_search(prompt: str) -> Optional[Dict[str, Any]]:
    """The arguments of the search tool call the rule makes for this prompt; None for no search."""
    words = prompt_words(prompt)
    if len(words) < MIN_SHARED_WORDS:
        return None
    return {"query": " ".join(words), "limit": FIRST_PROMPT_SEARCH, "lanes": FIRST_PROMPT_LANES}


def related_items(prompt: str, hits: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Of the search results for the prompt's words (best first), the ones the rule keeps."""
    words = prompt_words(prompt)
    if len(words) < MIN_SHARED_WORDS:
        return []
    kept = [h for h in hits[:FIRST_PROMPT_SEARCH] if len(shared_words(words, h)) >= MIN_SHARED_WORDS]
    return kept[:MAX_RELATED]


def item_line(hit: Dict[str, Any]) -> str:
    return "[{}] {} {}".format(hit.get("id"), str(hit.get("occurred_at") or "")[:10], hit.get("title") or "").rstrip()


def session_start_text(project: Optional[str], items: List[Dict[str, Any]]) -> str:
    text = PROTOCOL
    if project and items:
        text += "\n\nNewest items of project {} in Jezero:\n".format(project)
        text += "\n".join(item_line(h) for h in items[:NEWEST_ITEMS])
    return text


def first_prompt_text(items: List[Dict[str, Any]]) -> str:
    if not items:
        return ""
    return ("Possibly related past work in Jezero (check each with get_item before relying on it):\n"
            + "\n".join(item_line(h) for h in items))


def mcp_tool(client: Client, tool: str, arguments: Dict[str, Any], timeout: float) -> Dict[str, Any]:
    """Call one tool of the server's MCP over HTTP with this device's key (the bridge's route).
    The server answers each request on its own, so one tools/call needs no session; a server
    that wants one gets the initialize handshake first. Raises OSError/ValueError on failure."""
    conn = Connection(client.server, timeout=max(0.05, timeout))
    headers = {"Authorization": "Bearer " + client.key(), "Content-Type": "application/json",
               "Accept": "application/json, text/event-stream"}
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
    try:
        for attempt in (1, 2):
            status, found, data = conn.post("/mcp", json.dumps(call).encode("utf-8"), headers)
            answers = [a for a in Bridge._answers(found.get("content-type", ""), data)
                       if isinstance(a, dict) and a.get("id") == 2]
            if answers and isinstance(answers[0].get("result"), dict):
                found_result = answers[0]["result"]
                if found_result.get("isError"):
                    raise ValueError("tool error")
                structured = found_result.get("structuredContent")
                if isinstance(structured, dict):
                    return structured
                for part in found_result.get("content") or []:
                    if isinstance(part, dict) and part.get("type") == "text":
                        return json.loads(part["text"])
                raise ValueError("no content")
            if attempt == 2 or status in (401, 403):
                raise ValueError("server answered {}".format(status))
            hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                     "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                "clientInfo": {"name": "jezero-hook", "version": VERSION}}}
            status, found, data = conn.post("/mcp", json.dumps(hello).encode("utf-8"), headers)
            if found.get("mcp-session-id"):
                headers["Mcp-Session-Id"] = found["mcp-session-id"]
            done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            conn.post("/mcp", json.dumps(done).encode("utf-8"), headers)
    finally:
        conn.close()
    raise ValueError("no answer")


def _items(answer: Dict[str, Any]) -> List[Dict[str, Any]]:
    return [h for h in answer.get("items") or [] if isinstance(h, dict)]


def context_off(cwd: Optional[str], settings: Optional[Dict[str, Any]]) -> bool:
    """Switched off for this user (the env var, or "context": false in client.json) or for this
    project (a .jezero-no-context file in the working folder or a folder above it)."""
    if os.environ.get(OFF_ENV, "").strip().lower() in ("off", "0", "false", "no"):
        return True
    if settings and settings.get("context") is False:
        return True
    if cwd:
        try:
            here = Path(cwd)
            for folder in (here,) + tuple(here.parents):
                if (folder / OFF_FILE).exists():
                    return True
        except (OSError, ValueError):
            pass
    return False


# Context the agent already wrapped into the prompt it hands to the hook (Gemini puts the
# session-start hook's text in front of the first prompt): not the user's words.
_INJECTED = re.compile(r"<(hook_context|system[-_]reminder)>.*?</\1>", re.S)


def user_prompt(text: str) -> str:
    return _INJECTED.sub(" ", text)


def _payload_text(payload: Dict[str, Any], *names: str) -> Optional[str]:
    for name in names:
        value = payload.get(name)
        if isinstance(value, str) and value.strip():
            return value
    return None


_PLAIN_SESSION = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9._-]{0,79}$")  # the ids agents use (UUIDs, ses_...)


def _marker_name(agent: str, session: str) -> str:
    """The marker file of a session: its id as it is when that is a plain file name (importing
    hashlib costs a hook a few ms of loading OpenSSL), else a digest of it ("=" never occurs in
    a plain name, so the two kinds cannot meet)."""
    if _PLAIN_SESSION.match(session):
        return agent + "-" + session
    import hashlib

    return agent + "=" + hashlib.sha256(session.encode("utf-8")).hexdigest()[:32]


def _first_prompt(home: Path, agent: str, session: Optional[str]) -> bool:
    """True the first time a session's prompt is seen (a marker in the client folder says so
    afterwards). A payload without a session id counts as a first prompt every time."""
    if not session:
        return True
    folder = home / HOOK_STATE_FOLDER
    marker = folder / _marker_name(agent, session)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(str(marker), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.close(fd)
    except FileExistsError:
        return False
    except OSError:
        return True
    try:  # sweep old markers now and then (a session resumed after that is "new" again)
        if os.urandom(1)[0] < 13:  # about one first prompt in 20 (13/256)
            cutoff = time.time() - HOOK_STATE_DAYS * 86400
            for old in folder.iterdir():
                if old.stat().st_mtime < cutoff:
                    old.unlink()
    except OSError:
        pass
    return True


def hook_context(event: str, agent: str, payload: Dict[str, Any], deadline: float) -> str:
    """The text the hook adds to the session ("" for nothing)."""
    home = client_home()
    try:
        client = Client(home)  # type: Optional[Client]
    except ClientError:
        client = None  # no device here: the tools cannot answer, so no protocol either
    if client is None:
        return ""
    cwd = _payload_text(payload, "cwd", "directory") or os.getcwd()
    if context_off(cwd, client.settings):
        return ""
    if event == "session-start":
        project = resolve_project(cwd, client.settings.get("roots"))
        items = []  # type: List[Dict[str, Any]]
        if project:
            try:
                items = _items(mcp_tool(client, "timeline", {"project": project, "limit": NEWEST_ITEMS},
                                        deadline - time.monotonic()))
            except Exception:
                items = []  # server down or slow: the protocol alone
        return session_start_text(project, items)
    if event == "prompt":
        session = _payload_text(payload, "session_id", "sessionId")
        prompt = user_prompt(_payload_text(payload, "prompt", "initialPrompt") or "")
        if not _first_prompt(home, agent, session):
            return ""
        arguments = first_prompt_search(prompt)
        if arguments is None:
            return ""
        answer = mcp_tool(client, "search", arguments, deadline - time.monotonic())
        return first_prompt_text(related_items(prompt, _items(answer)))
    return ""


def hook_output(event: str, agent: str, payload: Dict[str, Any], text: str) -> str:
    """The text in the form the agent reads back from its hook's stdout."""
    if not text or event == "end":
        return ""
    if agent == "opencode":  # its JS plugin takes the text as is
        return text
    if agent == "copilot":  # Copilot reads additionalContext at the top level only
        return json.dumps({"additionalContext": text})
    name = payload.get("hook_event_name")
    if not isinstance(name, str) or not name:
        name = _EVENT_NAMES[event][agent]
    return json.dumps({"hookSpecificOutput": {"hookEventName": name, "additionalContext": text}})


def _read_payload(stream) -> Dict[str, Any]:
    """The agent's JSON payload. Agents write UTF-8, whatever the console's code page (Windows)."""
    try:
        raw = getattr(stream, "buffer", stream).read(4 * 1024 * 1024) if stream and not stream.isatty() else ""
        if isinstance(raw, bytes):
            raw = raw.decode("utf-8", "replace")
        payload = json.loads(raw) if raw and raw.strip() else {}
        return payload if isinstance(payload, dict) else {}
    except Exception:
        return {}


def _hook_upload() -> None:
    """Start the detached upload of every agent's changed sessions (returns at once)."""
    client = Client(client_home())
    if client.settings.get("upload") is False:
        return
    start_upload([])


def hook_budget() -> float:
    """HOOK_BUDGET, or JEZERO_HOOK_BUDGET when it is a number (clamped to HOOK_BUDGET_RANGE)."""
    try:
        wanted = float(os.environ.get("JEZERO_HOOK_BUDGET", ""))
    except ValueError:
        return HOOK_BUDGET
    low, high = HOOK_BUDGET_RANGE
    return min(max(wanted, low), high) if wanted == wanted else HOOK_BUDGET  # NaN: the default


def hook_main(argv: List[str], started: Optional[float] = None) -> int:
    """`hook EVENT --agent AGENT` as jezero_hook.py passes it (the plugins' own commands), without
    building the argument parser: argparse imports shutil, lzma, bz2 and locale while it builds
    one, a few ms a hook pays for nothing. Any other arguments go through main(). `started`: the
    time.monotonic() at which the launcher started, which the hook's budget counts from."""
    if len(argv) == 3 and argv[1] == "--agent" and not argv[0].startswith("-"):
        return cmd_hook(SimpleNamespace(event=argv[0], agent=argv[2], started=started))
    return main(["hook"] + argv)


def cmd_hook(args: argparse.Namespace) -> int:
    """Always exit 0, print only what the agent reads, never write to stderr."""
    # From the launcher's start when it says (importing this file is part of what the agent waits
    # for, and on a loaded machine a large part), else from now.
    started = getattr(args, "started", None) or time.monotonic()
    deadline = started + hook_budget() - 0.2  # leave time to print and exit
    found = {"text": ""}
    if args.event not in HOOK_EVENTS or args.agent not in HOOK_AGENTS:
        return 0  # a plugin from a newer core: adding nothing is the safe answer
    try:
        payload = _read_payload(sys.stdin)
        _capture(args.event, args.agent, payload)
        if args.event == "end":
            _hook_upload()
        else:
            def work() -> None:
                try:
                    found["text"] = hook_context(args.event, args.agent, payload, deadline)
                except Exception:
                    found["text"] = ""

            worker = threading.Thread(target=work, daemon=True)
            worker.start()
            worker.join(max(0.0, deadline - time.monotonic()))
            if worker.is_alive():  # out of time: session start still gets the protocol
                cwd = _payload_text(payload, "cwd", "directory") or os.getcwd()
                found["text"] = PROTOCOL if args.event == "session-start" and _device_here(cwd) else ""
            out = hook_output(args.event, args.agent, payload, found["text"])
            if out:  # UTF-8, as the agents read it (OpenCode takes the text as is, not JSON)
                stream = getattr(sys.stdout, "buffer", None)
                if stream is not None:
                    stream.write((out + "\n").encode("utf-8"))
                else:
                    sys.stdout.write(out + "\n")
                sys.stdout.flush()
    except BaseException:
        pass
    return 0


def _capture(event: str, agent: str, payload: Dict[str, Any]) -> None:
    """With JEZERO_HOOK_LOG set, append each payload the agent sent to that file (to capture
    real payloads for tests, or to see what an agent sends)."""
    target = os.environ.get("JEZERO_HOOK_LOG", "").strip()
    if target:
        try:
            with open(target, "a", encoding="utf-8") as f:
                f.write(json.dumps({"event": event, "agent": agent, "payload": payload}) + "\n")
        except OSError:
            pass


def _device_here(cwd: str) -> bool:
    """A device is set up and the context is not switched off for this folder."""
    try:
        client = Client(client_home())
    except Exception:
        return False
    return not context_off(cwd, client.settings)


# ------------------------------------------------------------------------------------------------


def main(argv: Optional[List[str]] = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="jezero_client.py",
                                     description="Jezero's client: device key, uploads, MCP bridge.")
    parser.add_argument("--version", action="version", version=VERSION)
    sub = parser.add_subparsers(dest="command")
    p = sub.add_parser("init", help="make this device's key and print the line that approves it")
    p.add_argument("--server", required=True, help="the Jezero server, e.g. https://jezero.example.com")
    p.add_argument("--device", required=True, help="a name for this computer, e.g. anna-laptop")
    p.add_argument("--new-key", action="store_true", help="replace an existing key (the admin then rotates it)")
    p = sub.add_parser("status", help="server, device, key digest, approval, last upload")
    p.add_argument("--json", action="store_true")
    p = sub.add_parser("upload", help="send changed session files to the server's inbox (detached)")
    p.add_argument("--wait", action="store_true", help="upload in this process and wait for the end")
    p.add_argument("--verbose", action="store_true", help="also print the log lines to stderr")
    p.add_argument("--claude", help="the Claude Code folder (default $CLAUDE_CONFIG_DIR or ~/.claude)")
    p.add_argument("--codex", help="the Codex folder (default $CODEX_HOME or ~/.codex)")
    p.add_argument("--gemini", help="the Gemini CLI folder (default $GEMINI_CLI_HOME/.gemini or ~/.gemini)")
    p.add_argument("--copilot", help="the Copilot CLI folder (default $COPILOT_HOME or ~/.copilot)")
    p.add_argument("--opencode", help="OpenCode's data folder (default $XDG_DATA_HOME/opencode or ~/.local/share/opencode)")
    sub.add_parser("bridge", help="a stdio MCP server forwarding to the server with this device's key")
    p = sub.add_parser("hook", help="an agent plugin's hook: read the agent's payload on stdin, print its context")
    p.add_argument("event", help="session-start, prompt or end")
    p.add_argument("--agent", default="claude", help="claude, codex, gemini, copilot or opencode")
    args = parser.parse_args(argv)
    commands = {"init": cmd_init, "status": cmd_status, "upload": cmd_upload, "bridge": cmd_bridge,
                "hook": cmd_hook}
    if args.command not in commands:
        parser.print_help(sys.stderr)
        return 2
    try:
        return commands[args.command](args)
    except ClientError as e:
        sys.stderr.write(f"error: {e}\n")
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
