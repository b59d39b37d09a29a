"""`jezero up`: the main job on one machine. With no config, no key and no network it finds the
local Claude Code and Codex stores, writes a config for them with a local client key, ingests
(the offline summarizer unless a model is configured), and hands over to the HTTP server.
`--demo` does the same on made-up sessions in a throwaway folder."""

from __future__ import annotations

import os
import socket
import tempfile
from dataclasses import dataclass
from pathlib import Path

from jezero import config as config_mod
from jezero.private import private_folder, write_private_text
from jezero.server.auth import client_toml, key_digest, new_key

LOCAL_CLIENT = "local"


@dataclass
class AgentStore:
    type: str
    path: Path


def discover_stores() -> list[AgentStore]:
    """The agents' stores on this computer, where their own settings put them."""
    found = []
    claude = Path(os.environ["CLAUDE_CONFIG_DIR"]).expanduser() if os.environ.get("CLAUDE_CONFIG_DIR") else Path.home() / ".claude"
    if (claude / "projects").is_dir():
        found.append(AgentStore("claude", claude / "projects"))
    codex = Path(os.environ["CODEX_HOME"]).expanduser() if os.environ.get("CODEX_HOME") else Path.home() / ".codex"
    if (codex / "sessions").is_dir() or (codex / "archived_sessions").is_dir():
        found.append(AgentStore("codex", codex))
    return found


def _toml(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def connectors_toml(stores: list[AgentStore]) -> str:
    names = {"claude": "claude-local", "codex": "codex-local"}
    out = []
    for s in stores:
        out.append(f"[[connectors]]\nname = {_toml(names[s.type])}\ntype = {_toml(s.type)}\n"
                   f"options = {{ path = {_toml(str(s.path))} }}\n")
    return "\n".join(out)


def local_key(key_file: Path) -> str:
    """The local client's key, made once and kept in a file only this user can read."""
    if key_file.exists():
        return key_file.read_text().strip()
    private_folder(key_file.parent)
    key = new_key()
    fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(key + "\n")
    return key


@dataclass
class Setup:
    config_path: Path
    key: str
    created: list[str]  # what this run wrote, for the user to see
    stores: list[AgentStore]


def prepare(config_path: Path, *, demo_folder: Path | None = None) -> Setup:
    """Make sure there is a config with connectors and a local client whose key we hold."""
    created: list[str] = []
    if demo_folder is not None:
        from jezero import demo

        claude_projects, codex_home = demo.build(demo_folder / "sessions")
        stores = [AgentStore("claude", claude_projects), AgentStore("codex", codex_home)]
        key_file = demo_folder / "local.key"
        write_private_text(
            config_path,
            "# A throwaway demo library: made-up sessions, nothing from this computer.\n"
            f"[storage]\npath = {_toml(str(demo_folder / 'library.sqlite3'))}\n\n"
            "[ingest]\nsettle_minutes = 0\n\n" + connectors_toml(stores),
        )
        created.append(f"demo sessions in {demo_folder / 'sessions'}")
    else:
        stores = discover_stores()
        key_file = config_mod.default_data_dir() / "local-client.key"
        if not config_path.exists():
            write_private_text(
                config_path,
                "# Written by `jezero up`: the agent stores found on this computer.\n"
                "# `jezero check-config` validates this file.\n\n" + connectors_toml(stores),
            )
            created.append(f"config {config_path}")
        else:
            cfg = config_mod.load(config_path)
            if not cfg.connectors and stores:
                with config_path.open("a") as f:
                    f.write("\n# Added by `jezero up`.\n" + connectors_toml(stores))
                created.append(f"connectors for {', '.join(s.type for s in stores)} in {config_path}")
    key = local_key(key_file)
    cfg = config_mod.load(config_path)
    digest = key_digest(key)
    if not any(c.key_sha256 == digest for c in cfg.clients):
        name = LOCAL_CLIENT if all(c.name != LOCAL_CLIENT for c in cfg.clients) else f"{LOCAL_CLIENT}-{digest[:6]}"
        with config_path.open("a") as f:
            f.write(f"\n# The local client; its key is in {key_file} (only its digest is here).\n"
                    + client_toml(name, digest, ["*"]))
        created.append(f"a local client key in {key_file}")
    return Setup(config_path, key, created, stores)


def demo_folder() -> Path:
    return Path(tempfile.mkdtemp(prefix="jezero-demo-"))


def listen(host: str, port: int) -> socket.socket:
    """Bind and listen before saying where to connect: a client that connects at once waits in
    the backlog until the server accepts, instead of being refused. Port 0 picks a free one."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.listen(128)
    return sock


def connect_instructions(url: str, key: str) -> str:
    return f"""Connect Claude Code:
  claude mcp add --transport http jezero {url} --header "Authorization: Bearer {key}"

Connect Codex: add to ~/.codex/config.toml
  [mcp_servers.jezero]
  url = "{url}"
  bearer_token_env_var = "JEZERO_KEY"
and start Codex with the key in its environment:
  export JEZERO_KEY={key}"""
