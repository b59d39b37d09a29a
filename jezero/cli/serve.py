"""Serving the library: `jezero serve` and `jezero new-token`."""

from __future__ import annotations

import logging
from enum import Enum
from typing import Annotated, Optional

import typer

from jezero.cli import app
from jezero.cli.common import err, fail, load_config, out, print_json, state


class Transport(str, Enum):
    stdio = "stdio"
    http = "http"


class Connections(str, Enum):
    thread = "thread"
    request = "request"


def _configure_logging(level: str) -> None:
    # Everything goes to stderr: on stdio, stdout carries the protocol.
    logging.basicConfig(level=level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    # The SDK logs every refused tool call at INFO; jezero's own messages are the useful ones.
    logging.getLogger("mcp").setLevel(max(logging.WARNING, logging.getLevelName(level.upper())))


@app.command()
def serve(
    transport: Annotated[Transport, typer.Option("--transport", "-t", help="stdio: one local agent, no key. http: MCP at /mcp for any number of agents with client keys, plus /api/v1/overview, /health and the devices' uploads at /inbox/v1.")] = Transport.http,
    host: Annotated[Optional[str], typer.Option("--host", help="Address to listen on (default: \\[server] host, 127.0.0.1).")] = None,
    port: Annotated[Optional[int], typer.Option("--port", help="Port to listen on (default: \\[server] port, 8765).")] = None,
    client: Annotated[Optional[str], typer.Option("--client", help="stdio only: read with the source patterns of this configured client instead of every source.")] = None,
    connections: Annotated[Connections, typer.Option("--connections", help="Read-only SQLite connections: one kept per worker thread, or one per request.")] = Connections.thread,
    readers: Annotated[Optional[int], typer.Option("--readers", min=1, help="How many requests read the library at once; the others wait their turn (default: one per CPU core, at least 2).")] = None,
    workers: Annotated[int, typer.Option("--workers", min=0, help="http only: server processes sharing the port, each reading the same library and watching the same config (--readers is per process; default with several: the cores shared out). 0: one per CPU core, at most 4.")] = 1,
    log_level: Annotated[str, typer.Option("--log-level", help="debug, info, warning or error (to stderr).")] = "info",
) -> None:
    """Serve the library read-only over MCP (and the overview endpoint over HTTP).

    Over HTTP every request needs `Authorization: Bearer <key>` of a client in the config (\\[\\[clients]], made with `jezero new-token`). Edits to the clients take effect within a second, without a restart.
    """
    from jezero import config as config_mod

    cfg = load_config()
    _configure_logging(log_level)
    from jezero.server.clients import ClientRegistry
    from jezero.server.process import tune_gc

    tune_gc()  # a long-lived process of many searches (jezero.server.process)

    # Watch the file even if it does not exist yet: clients added later still take effect.
    registry = ClientRegistry(cfg, config_mod.resolve_config_path(state.config_path))
    if transport is Transport.stdio:
        from jezero.server import serve_stdio

        if client is not None and registry.by_name(client) is None:
            fail(f"no client named {client!r} in the config ({cfg.path or 'none found'})", 2)
        serve_stdio(registry, client=client, connections=connections.value, readers=readers)
        return
    if client is not None:
        fail("--client is for --transport stdio; over HTTP the key decides the client", 2)
    if workers == 0:
        from jezero.server.http import default_workers

        workers = default_workers()
    if workers > 1:
        _serve_workers(cfg, host, port, workers, connections.value, readers, log_level.lower())
        return
    from jezero.server import http_server

    server = http_server(registry, host, port, log_level=log_level.lower(), connections=connections.value,
                         readers=readers)
    url = f"http://{_url_host(server.config.host)}:{server.config.port}"
    _advise_engine(cfg)
    if not cfg.clients:
        err.print("warning: the config has no [[clients]], so every request will be refused; "
                  "make a key with `jezero new-token NAME --write`", markup=False)
    err.print(f"serving {_where(cfg)} read-only: MCP at {url}/mcp, overview at "
              f"{url}/api/v1/overview, health at {url}/health ({len(cfg.clients)} client(s)); "
              f"device uploads at {url}/inbox/v1 into {cfg.inbox_path()}", markup=False)
    server.run()


def _serve_workers(cfg, host, port, workers: int, connections: str, readers, log_level: str) -> None:
    from jezero import config as config_mod
    from jezero.server.http import serve_workers

    path = config_mod.resolve_config_path(state.config_path)
    if not path.exists():
        fail(f"--workers needs a config file for every process to read ({path} does not exist)", 2)
    url = f"http://{_url_host(host or cfg.server.host)}:{port or cfg.server.port}"
    _advise_engine(cfg)
    err.print(f"serving {_where(cfg)} read-only with {workers} processes: MCP at {url}/mcp, overview at "
              f"{url}/api/v1/overview, health at {url}/health ({len(cfg.clients)} client(s))", markup=False)
    serve_workers(path, host, port, workers=workers, log_level=log_level, connections=connections, readers=readers)


def _advise_engine(cfg) -> None:
    from jezero.cli.index import engine_advice

    advice = engine_advice(cfg)
    if advice:
        err.print(f"note: {advice}", markup=False)


def _where(cfg) -> str:
    from jezero.store import StoreError, backends

    try:
        return backends.where(cfg)
    except StoreError:
        return str(cfg.library_path())


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


@app.command("new-token")
def new_token(
    name: Annotated[str, typer.Argument(help="The client's name (letters, digits, . _ -), e.g. laptop or ci.")],
    sources: Annotated[Optional[list[str]], typer.Option("--sources", "-s", help="A glob over source names this key may read; repeat for more (default: every source).")] = None,
    upload: Annotated[bool, typer.Option("--upload", help="Also allow uploads into the inbox.")] = False,
    write: Annotated[bool, typer.Option("--write", help="Append the \\[\\[clients]] lines to the config file (the running server picks them up).")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print the key, digest and lines as JSON.")] = False,
) -> None:
    """Make a client key: printed once, never stored (the config keeps its SHA-256 digest).

    Prints the key and the \\[\\[clients]] lines to paste into the config, or appends them with --write. A running server picks them up within a second."""
    from jezero import config as config_mod
    from jezero.server.auth import client_toml, key_digest, new_key

    try:
        config_mod.ClientConfig(name=name, key_sha256="0" * 64, sources=sources or ["*"], upload=upload)
    except Exception:
        fail(f"invalid client name {name!r}: use letters, digits, '.', '_' or '-' (at most 64)", 2)
    key = new_key()
    digest = key_digest(key)
    lines = client_toml(name, digest, sources or ["*"], upload)
    path = None
    if write:
        path = _append_client(name, lines)
    if json_out:
        print_json({"name": name, "key": key, "key_sha256": digest, "sources": sources or ["*"], "upload": upload,
                    "toml": lines, "written_to": str(path) if path else None})
        return
    out.print(f"key (shown once, store it now): {key}", markup=False)
    out.print("", markup=False)
    if path:
        out.print(f"added to {path}:", markup=False)
    else:
        out.print("add to the config (the server picks it up within a second):", markup=False)
    out.print("", markup=False)
    out.print(lines.rstrip("\n"), markup=False)


def _append_client(name: str, lines: str):
    from jezero import config as config_mod

    path = config_mod.resolve_config_path(state.config_path)
    cfg = load_config(must_exist=True)
    if any(c.name == name for c in cfg.clients):
        fail(f"a client named {name!r} is already in {path}: to rotate its key, replace its key_sha256 "
             "with the new digest (run without --write to print it), or pick another name", 2)
    text = path.read_text(encoding="utf-8")
    sep = "" if text.endswith("\n\n") or not text else ("\n" if text.endswith("\n") else "\n\n")
    with open(path, "a", encoding="utf-8") as f:
        f.write(sep + lines)
    try:
        config_mod.load(path)
    except config_mod.ConfigError as e:  # undo: never leave the config worse than we found it
        path.write_text(text, encoding="utf-8")
        fail(f"the config would not be valid with the new client, nothing written:\n{e}", 2)
    return path
