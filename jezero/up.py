"""`jezero up`: the main job on one machine. With no config, no key and no network it asks each
installed connector type where its agent keeps sessions on this computer, writes a config for
the stores found with a local client key, ingests (the offline summarizer unless a model is
configured), and hands over to the HTTP server. `--demo` does the same on made-up sessions that
the installed connector types write in a throwaway folder. Only the connectors know paths and
formats."""

from __future__ import annotations

import os
import socket
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jezero import config as config_mod
from jezero.private import private_folder, write_private_text
from jezero.server.auth import client_toml, key_digest, new_key

LOCAL_CLIENT = "local"


class NoDemoWriter(LookupError):
    """`up --demo` with no connector type that can write made-up sessions."""


@dataclass
class AgentStore:
    type: str  # the connector type that reads it
    options: dict[str, Any]  # the options that point that type at this store


def discover_stores(types: dict[str, Any] | None = None, warn=None) -> list[AgentStore]:
    """The agents' stores on this computer, as each connector type finds its own. A type whose
    discovery fails is skipped (and `warn` told why): it must not keep the others from being found."""
    if types is None:
        from jezero import plugins

        types = plugins.connector_types()
    found = []
    for name, t in sorted(types.items()):
        if t.discover is None or t.build is None:
            continue
        try:
            options = list(t.discover() or [])
        except Exception as e:  # a plugin's bug: say so, carry on
            if warn is not None:
                warn(f"connector type {name!r} could not look for its stores: {type(e).__name__}: {e}")
            continue
        found += [AgentStore(name, dict(o)) for o in options if isinstance(o, dict)]
    return found


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


def connectors_toml(stores: list[AgentStore]) -> str:
    """`[[connectors]]` tables, named `<type>-local` (then `-2`, `-3` for a type's further stores)."""
    out, seen = [], {}
    for s in stores:
        seen[s.type] = seen.get(s.type, 0) + 1
        name = f"{s.type}-local" + (f"-{seen[s.type]}" if seen[s.type] > 1 else "")
        options = ", ".join(f"{k} = {_toml(v)}" for k, v in s.options.items())
        out.append(f"[[connectors]]\nname = {_toml(name)}\ntype = {_toml(s.type)}\noptions = {{ {options} }}\n")
    return "\n".join(out)


def local_key_path() -> Path:
    """Where `jezero up` keeps this computer's own client key (and `jezero ui` looks for it)."""
    return config_mod.default_data_dir() / "local-client.key"


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
    warnings: list[str]  # connector types that failed to look for their stores


def prepare(config_path: Path, *, demo_folder: Path | None = None) -> Setup:
    """Make sure there is a config with connectors and a local client whose key we hold."""
    created: list[str] = []
    problems: list[str] = []
    if demo_folder is not None:
        from jezero import demo, plugins

        try:
            written = demo.build(demo_folder / "sessions", plugins.connector_types())
        except demo.DemoWriterFailed as e:
            raise NoDemoWriter(str(e)) from None
        if not written:
            raise NoDemoWriter("no installed connector type can write demo sessions; "
                               "install one (pip install 'jezero[all]')")
        stores = [AgentStore(name, options) for name, options in written]
        key_file = demo_folder / "local.key"
        write_private_text(
            config_path,
            "# A throwaway demo library: made-up sessions, nothing from this computer.\n"
            f"[storage]\npath = {_toml(str(demo_folder / 'library.sqlite3'))}\n\n"
            "[ingest]\nsettle_minutes = 0\n\n" + connectors_toml(stores),
        )
        created.append(f"demo sessions in {demo_folder / 'sessions'}")
    else:
        stores = discover_stores(warn=problems.append)
        key_file = local_key_path()
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
    return Setup(config_path, key, created, stores, problems)


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
