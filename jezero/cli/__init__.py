"""The `jezero` command. Each module below registers its commands on `app`; a command only parses
its arguments and calls the layer below."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from jezero.cli.common import state

HELP = """Jezero: a shared memory of past work for coding agents.

It reads the transcripts your agents (Claude Code, Codex, ...) leave on disk, summarises each finished session once, keeps them in one SQLite file, and serves them read-only over MCP.

Start here:

  jezero up              ingest this computer's Claude Code and Codex sessions and serve them
  jezero up --demo       the same on made-up sessions, in a throwaway folder

Then: `jezero search "some error"`, `jezero run` (ingest again), `jezero check-config`. The config lives in the platform config folder; --config FILE or $JEZERO_CONFIG overrides it.
"""

app = typer.Typer(
    help=HELP,
    no_args_is_help=True,
    rich_markup_mode="rich",
    context_settings={"help_option_names": ["-h", "--help"]},
    add_completion=False,
)


@app.callback()
def _root(
    config: Annotated[Optional[str], typer.Option("--config", "-c", help="Config file (default: $JEZERO_CONFIG, else the platform config folder).", envvar="JEZERO_CONFIG", show_envvar=False)] = None,
) -> None:
    state.config_path = config


def _register() -> None:
    # Imported for their side effect of adding commands; order is the order in --help.
    import importlib

    for name in ("up", "admin", "ingest", "query", "index", "serve"):
        try:
            importlib.import_module(f"jezero.cli.{name}")
        except ModuleNotFoundError as e:
            if e.name != f"jezero.cli.{name}":
                raise


_register()


def main() -> None:
    app(prog_name="jezero")
