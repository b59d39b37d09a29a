"""What every command module shares: the loaded config, the consoles, JSON output."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

import typer

if TYPE_CHECKING:  # the config's models cost a cold command ~80 ms: imported by the commands that read it
    from jezero import config as config_mod


class _Console:
    """A rich Console made on first use: `--json` output never needs one, and importing rich
    costs a cold command about 60 ms."""

    def __init__(self, **options: Any):
        self._options, self._console = options, None

    def __getattr__(self, name: str) -> Any:
        if self._console is None:
            from rich.console import Console

            self._console = Console(**self._options)
        return getattr(self._console, name)


out = _Console(highlight=False, soft_wrap=True)
err = _Console(stderr=True, highlight=False, soft_wrap=True)


class State:
    config_path: str | None = None


state = State()


def load_config(*, must_exist: bool = False, check_plugins: bool = True) -> config_mod.Config:
    """The config, or a clear message and exit code 2. `check_plugins=False` for a command that
    only reads the library: it then loads no plugin (see config.load)."""
    from jezero import config as config_mod

    try:
        return config_mod.load(state.config_path, must_exist=must_exist, check_plugins=check_plugins)
    except config_mod.ConfigError as e:
        err.print(f"[red]error:[/red] the config has {len(e.problems)} problem(s):", markup=True)
        for line in str(e).splitlines():
            err.print(f"  {line}", markup=False)
        raise typer.Exit(2)


def sqlite_only(cfg: config_mod.Config, command: str) -> None:
    """Refuse, in one line, a command that reads the SQLite file itself when the library lives
    in another backend (it would report on a file that is not the library)."""
    from jezero.store import backends

    if backends.name(cfg) != backends.SQLITE:
        fail(f"`jezero {command}` works on a SQLite library only for now; this config's library is on "
             f"[storage] backend = {backends.name(cfg)!r}", code=2)


def fail(message: str, code: int = 1) -> None:
    err.print("error: " + message, markup=False)
    raise typer.Exit(code)


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


def is_terminal() -> bool:
    return sys.stdout.isatty()
