"""`jezero up`: set up, ingest and serve, in one command."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from jezero.cli import app
from jezero.cli.common import err, fail, out, state


@app.command()
def up(
    demo: Annotated[bool, typer.Option("--demo", help="Use made-up sessions in a throwaway folder instead of this computer's.")] = False,
    host: Annotated[Optional[str], typer.Option("--host", help="Address to serve on (default: \\[server] host, 127.0.0.1).")] = None,
    port: Annotated[Optional[int], typer.Option("--port", help="Port to serve on (default: \\[server] port, 8765; 0 picks a free one).")] = None,
    serve: Annotated[bool, typer.Option("--serve/--no-serve", help="Serve MCP after ingesting (default) or stop there.")] = True,
) -> None:
    """Find this computer's agent sessions, ingest them, and serve them over MCP.

    Each installed connector plugin looks for its own agent's store (Claude Code, Codex, Gemini
    CLI, Copilot CLI and OpenCode with `jezero\\[all]`). Needs no config, key or network: it writes a config for the stores it finds and
    a local client key, uses the offline summarizer unless a model is configured, and prints how to
    connect Claude Code and Codex.
    """
    from jezero import up as up_mod

    folder = up_mod.demo_folder() if demo else None
    keep = False
    try:
        keep = _up(folder, demo, host, port, serve) is True
    finally:
        if folder and not keep:  # a throwaway library: nothing of it outlives the command
            import shutil

            shutil.rmtree(folder, ignore_errors=True)


def _up(folder, demo: bool, host, port, serve: bool):
    """The body of `up`; True when the demo folder must stay (--no-serve prints commands using it)."""
    from jezero import config as config_mod
    from jezero import up as up_mod
    from jezero.cli.ingest import _progress
    from jezero.demo import DEMO_SEARCHES
    from jezero.ingest.runner import RunLocked, run_connectors

    config_path = folder / "config.toml" if folder else config_mod.resolve_config_path(state.config_path)
    try:
        setup = up_mod.prepare(config_path, demo_folder=folder)
        cfg = config_mod.load(config_path)
    except config_mod.ConfigError as e:
        fail(str(e), 2)
    except up_mod.NoDemoWriter as e:
        import shutil

        shutil.rmtree(folder, ignore_errors=True)
        fail(str(e), 2)
    for line in setup.warnings:
        err.print(f"warning: {line}", markup=False)
    for line in setup.created:
        err.print(f"wrote {line}", markup=False)
    if not cfg.connectors:
        err.print(_nothing_found(), markup=False)
    else:
        err.print(f"ingesting {', '.join(c.name for c in cfg.connectors)} into {cfg.library_path()} "
                  f"(summarizer: {cfg.summarizer.name})", markup=False)
        try:
            with _progress(True) as progress:
                reports = run_connectors(cfg, progress=progress)
        except RunLocked as e:
            err.print(f"{e}; serving what is already stored", markup=False)
            reports = []
        except LookupError as e:
            fail(f"{e}", 2)
        for r in reports:
            line = f"{r.connector}: {r.items_written} new or updated item(s) from {r.sessions_written} session(s)"
            if r.sessions_deferred:
                line += f", {r.sessions_deferred} still active (ingested once quiet)"
            err.print(line, markup=False)
            if r.error:
                err.print(f"  error: {r.error}", markup=False)
            elif r.warnings:
                err.print(f"  {len(r.warnings)} warning(s); see `jezero status`", markup=False)
    if not cfg.library_path().exists():
        from jezero.store import Store

        Store(cfg.library_path(), cfg.storage.tokenizer).close()

    from jezero.cli.embed import lane_line

    err.print(lane_line(cfg), markup=False)
    host = host or cfg.server.host
    if port is None:
        port = cfg.server.port
    cli = "jezero" + (f" --config {config_path}" if folder or state.config_path else "")
    if demo:
        out.print("\nTry these:", markup=False)
        first_shop = _first_item(cfg, "shop")
        for what, command in DEMO_SEARCHES:
            out.print(f"  {command.replace('jezero', cli, 1).format(first_shop_id=first_shop)}    # {what}", markup=False)
    else:
        out.print(f"\nSearch from here: {cli} search \"some error message\"", markup=False)
    if not serve:
        if folder:
            err.print(f"\nThe demo stays in {folder} for these commands; delete it when you are done.", markup=False)
        return True
    _serve(cfg, config_path, setup, host, port)


def _serve(cfg, config_path, setup, host: str, port: int) -> None:
    from jezero import up as up_mod

    try:
        sock = up_mod.listen(host, port)
    except OSError as e:
        fail(f"cannot serve on {host}:{port} ({e.strerror}; another `jezero serve`?); pick another with --port", 2)
    port = sock.getsockname()[1]
    url = f"http://{'[' + host + ']' if ':' in host else host}:{port}/mcp"
    out.print(f"\nServing the library on {url}\n", markup=False)
    out.print(up_mod.connect_instructions(url, setup.key), markup=False)
    out.print("\nPress Ctrl+C to stop.", markup=False)
    import sys

    sys.stdout.flush()
    from jezero.server import http_server

    http_server(config_path, host, port, log_level="warning").run(sockets=[sock])


def _nothing_found() -> str:
    from jezero import plugins

    looking = sorted(n for n, t in plugins.connector_types().items() if t.discover is not None and t.build is not None)
    if not looking:
        return ("No connector plugin is installed to look for agent stores (pip install 'jezero[all]'); "
                "serving an empty library.")
    return (f"No agent store found on this computer (looked for: {', '.join(looking)}); "
            "serving an empty library. Try `jezero up --demo`.")


def _first_item(cfg, project: str) -> int | str:
    from jezero.store import open_readonly

    try:
        conn = open_readonly(cfg.library_path())
        row = conn.execute("SELECT id FROM items WHERE project=? ORDER BY occurred_at LIMIT 1", (project,)).fetchone()
        return row[0] if row else "ID"
    except Exception:
        return "ID"
