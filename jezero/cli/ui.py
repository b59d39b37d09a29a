"""`jezero ui` (and `jezero` with no command): the terminal app."""

from __future__ import annotations

import os
import shutil
import threading
from typing import Annotated, Optional

import typer

from jezero.cli import app
from jezero.cli.common import err, fail, load_config

KEY_ENV = "JEZERO_KEY"
URL_ENV = "JEZERO_URL"


@app.command()
def ui(
    demo: Annotated[bool, typer.Option("--demo", help="Build the demo library (as `up --demo`), serve it on 127.0.0.1 for the app, remove it afterwards.")] = False,
    url: Annotated[Optional[str], typer.Option("--url", help="The server's MCP endpoint (default: $JEZERO_URL, else the config's \\[server] on this computer).")] = None,
) -> None:
    """Open the terminal app: Home, Search, Timeline, Agents and Agent view.

    It reads the server like an agent, through the MCP tools with a client key, plus the overview route. The key comes from $JEZERO_KEY, else the local key `jezero up` made. Works over SSH; no colours needed.
    """
    if demo:
        _open_demo()
    else:
        open_app(url)


def _server_url(url: str | None) -> str:
    if url or os.environ.get(URL_ENV):
        return url or os.environ[URL_ENV]
    cfg = load_config()
    host = cfg.server.host if cfg.server.host not in ("0.0.0.0", "::") else "127.0.0.1"
    return f"http://{'[' + host + ']' if ':' in host else host}:{cfg.server.port}/mcp"


def _key() -> str | None:
    if os.environ.get(KEY_ENV):
        return os.environ[KEY_ENV]
    from jezero.up import local_key_path

    local = local_key_path()
    return local.read_text().strip() if local.exists() else None


def _reachable(url: str) -> bool:
    import httpx2

    try:
        return httpx2.get(url.rstrip("/").removesuffix("/mcp") + "/health", timeout=5).status_code == 200
    except Exception:
        return False


def open_app(url: str | None = None) -> None:
    url = _server_url(url)
    key = _key()
    if not key:
        fail(f"no client key: set ${KEY_ENV}, or run `jezero up` once to make a local one "
             "(`jezero ui --demo` shows the app on made-up data)", 2)
    if not _reachable(url):
        fail(f"no Jezero server at {url}: start one with `jezero up` or `jezero serve`, "
             f"or point at another with --url / ${URL_ENV} (`jezero ui --demo` needs none)", 1)
    _run(url, key)


def _run(url: str, key: str, where: str | None = None) -> None:
    from jezero.tui.app import JezeroApp
    from jezero.tui.remote import Remote

    JezeroApp(Remote(url, key), where=where).run()


def _open_demo() -> None:
    """The demo library served in this process on a free local port, for the app's lifetime."""
    from jezero import config as config_mod
    from jezero import up as up_mod
    from jezero.ingest.runner import run_connectors
    from jezero.server import http_server

    folder = up_mod.demo_folder()
    try:
        config_path = folder / "config.toml"
        setup = up_mod.prepare(config_path, demo_folder=folder)
        cfg = config_mod.load(config_path)
        err.print(f"building the demo library in {folder} ...", markup=False)
        run_connectors(cfg)
        sock = up_mod.listen("127.0.0.1", 0)
        port = sock.getsockname()[1]
        server = http_server(config_path, "127.0.0.1", port, log_level="error")
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        try:
            _run(f"http://127.0.0.1:{port}/mcp", setup.key, where="demo library (made-up sessions)")
        finally:
            server.should_exit = True
            thread.join(10)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
