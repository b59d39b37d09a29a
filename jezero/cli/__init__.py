"""The `jezero` command. Each module below registers its commands on `app`; a command only parses
its arguments and calls the layer below."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from jezero.cli.common import state

HELP = """Jezero: a shared memory of past work for coding agents.

It reads the transcripts your agents (Claude Code, Codex, ...) leave on disk, summarises each finished session once, keeps them in one SQLite file, and serves them read-only over MCP.

Start here:

  jezero up              ingest this computer's agent sessions (Claude Code, Codex, ...) and serve them
  jezero up --demo       the same on made-up sessions, in a throwaway folder
  jezero                 (no command) the terminal app over the running server; `jezero ui --demo` on made-up data

Then: `jezero search "some error"`, `jezero run` (ingest again), `jezero check-config`, `jezero schedule` (run unattended). The config lives in the platform config folder; --config FILE or $JEZERO_CONFIG overrides it.
"""

app = typer.Typer(
    help=HELP,
    invoke_without_command=True,
    rich_markup_mode="rich",
    context_settings={"help_option_names": ["-h", "--help"]},
    add_completion=False,
)


@app.callback()
def _root(
    ctx: typer.Context,
    config: Annotated[Optional[str], typer.Option("--config", "-c", help="Config file (default: $JEZERO_CONFIG, else the platform config folder).", envvar="JEZERO_CONFIG", show_envvar=False)] = None,
) -> None:
    state.config_path = config
    if ctx.invoked_subcommand is None:
        import sys

        if not (sys.stdin.isatty() and sys.stdout.isatty()):
            # Not a person at a terminal (a script, a pipe): the help, as before there was an app.
            typer.echo(ctx.get_help())
            raise typer.Exit(0)
        # No command: open the app on the configured server, as `jezero ui` would.
        from jezero.cli.ui import open_app

        open_app()


def _register() -> None:
    # Imported for their side effect of adding commands; order is the order in --help.
    import importlib

    for name in ("up", "admin", "ingest", "warnings", "query", "index", "store", "embed", "serve", "health", "ui", "device"):
        try:
            importlib.import_module(f"jezero.cli.{name}")
        except ModuleNotFoundError as e:
            if e.name != f"jezero.cli.{name}":
                raise


_register()


def main() -> None:
    import os

    from jezero.private import UMASK

    os.umask(UMASK)  # whatever a command creates is its user's alone (jezero.private)
    try:
        app(prog_name="jezero")
    except Exception as e:
        import sys

        from jezero.cli.common import err
        from jezero.cli.errors import argument_problem, library_problem

        message = argument_problem(e, sys.argv[1:])
        if message is not None:
            err.print("error: " + message, markup=False)
            raise SystemExit(2) from None
        message = library_problem(e, _library_name())
        if message is None:
            raise
        err.print("error: " + message, markup=False)
        raise SystemExit(1) from None


def _library_name() -> str:
    """The configured library's path for an error message, or a generic name if even the config
    cannot be read."""
    from jezero import config as config_mod

    try:
        return str(config_mod.load(state.config_path).library_path())
    except Exception:
        return "file"
