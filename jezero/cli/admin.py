"""Setting up and inspecting an installation: init, check-config, plugins."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from jezero.cli import app
from jezero.cli.common import err, fail, is_terminal, load_config, out, print_json, state
from jezero.private import write_private_text

STARTER_CONFIG = """\
# Jezero configuration. Every key is optional; `jezero check-config` validates this file.
# Secrets never go here: fields ending in _env name an environment variable (or a line in the
# .env file next to this one).

[storage]
# path = "{library}"
# tokenizer = "trigram remove_diacritics 1"

[summarizer]
# name = "offline"                 # no model needed; "llm" uses any Anthropic/OpenAI-compatible endpoint
# model = "anthropic/claude-haiku-4-5"
# api_key_env = "ANTHROPIC_API_KEY"
# output_language = "en"

# [[connectors]]
# name = "claude-local"            # the source name items are filed under
# type = "claude"
# options = {{ path = "~/.claude/projects" }}
"""


@app.command()
def init(
    json_out: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Create the library (and a starter config if there is none)."""
    from jezero import config as config_mod
    from jezero.store import Store, sqlite_version

    cfg_path = config_mod.resolve_config_path(state.config_path)
    created_config = False
    if not cfg_path.exists():
        write_private_text(cfg_path, STARTER_CONFIG.format(library=config_mod.default_data_dir() / "library.sqlite3"))
        created_config = True
    cfg = load_config()
    from jezero.store import backends

    if backends.name(cfg) != backends.SQLITE:
        _init_other(cfg, cfg_path, created_config, json_out)
        return
    library = cfg.library_path()
    existed = library.exists()
    try:
        with Store(library, cfg.storage.tokenizer) as store:
            version = store.schema_version()
    except Exception as e:  # a tokenizer mismatch or an unusable SQLite: say so plainly
        fail(str(e), 2)
    result = {"config": str(cfg_path), "config_created": created_config, "library": str(library),
              "library_created": not existed, "schema_version": version, "tokenizer": cfg.storage.tokenizer,
              "sqlite": sqlite_version()}
    if json_out:
        print_json(result)
        return
    # markup=False: a path may hold brackets ("~/lib[dev]"), which Rich would drop as a style tag.
    out.print(f"config:  {cfg_path}{' (created)' if created_config else ''}", markup=False)
    out.print(f"library: {library} ({'created' if not existed else 'already there'}, schema v{version}, "
              f"SQLite {result['sqlite']}, tokenizer {cfg.storage.tokenizer!r})", markup=False)


def _init_other(cfg, cfg_path, created_config: bool, json_out: bool) -> None:
    """`jezero init` for a library on a database server: connect, migrate, say where."""
    from jezero.store import backends

    try:
        with backends.open_writer(cfg) as store:
            version = store.schema_version()
    except Exception as e:
        fail(str(e), 2)
    result = {"config": str(cfg_path), "config_created": created_config, "library": backends.where(cfg),
              "backend": backends.name(cfg), "schema_version": version, "tokenizer": cfg.storage.tokenizer}
    if json_out:
        print_json(result)
        return
    out.print(f"config:  {cfg_path}{' (created)' if created_config else ''}", markup=False)
    out.print(f"library: {result['library']} (schema v{version}, tokenizer {cfg.storage.tokenizer!r})", markup=False)


@app.command("check-config")
def check_config(
    json_out: Annotated[bool, typer.Option("--json", help="Print the problems as JSON.")] = False,
) -> None:
    """Validate the config and report every problem at once (never prints a secret)."""
    from jezero import config as config_mod

    from jezero.store import StoreError, backends

    path = config_mod.resolve_config_path(state.config_path)
    try:
        cfg = config_mod.load(state.config_path, must_exist=True)
        try:  # a backend no installed distribution gives: every command refuses the config
            backends.backend(cfg)
        except StoreError as e:
            raise config_mod.ConfigError(path, [config_mod.Problem("storage.backend", str(e).replace("[storage] backend = ", ""))])
    except config_mod.ConfigError as e:
        if json_out:
            print_json({"config": str(path), "ok": False, "problems": [{"key": p.key, "message": p.message} for p in e.problems]})
        else:
            err.print(f"{path}: {len(e.problems)} problem(s)", markup=False)
            for p in e.problems:
                err.print(f"  {p}", markup=False)
        raise typer.Exit(1)
    warnings = config_mod.blind_clients(cfg) + config_mod.overreaching_clients(cfg) + config_mod.unknown_engine(cfg)
    summary = {"config": str(path), "ok": True, "library": str(cfg.library_path()),
               "connectors": [c.name for c in cfg.connectors], "clients": [c.name for c in cfg.clients],
               "summarizer": cfg.summarizer.name, "problems": [], "warnings": warnings}
    if json_out:
        print_json(summary)
    else:
        for warning in warnings:
            err.print(f"warning: {warning}", markup=False)
        out.print(f"{path}: ok ({len(cfg.connectors)} connector(s), {len(cfg.clients)} client(s), "
                  f"summarizer {cfg.summarizer.name!r})", markup=False)


@app.command("plugins")
def plugins(
    all_plugins: Annotated[bool, typer.Option("--all", help="Include the built-in plugins.")] = False,
    hook: Annotated[Optional[str], typer.Option("--hook", help="Only plugins implementing this hook.")] = None,
    json_out: Annotated[Optional[bool], typer.Option("--json/--pretty", help="JSON (the default when not on a terminal) or a table.")] = None,
) -> None:
    """List the installed plugins: distribution, version, hooks, and any that failed to load.

    Set JEZERO_PLUGINS=a,b to load only those entry points (empty: none), and
    JEZERO_TRACE_HOOKS=1 to print every hook call.
    """
    from jezero import plugins as plugins_mod

    info = plugins_mod.plugin_info(all_plugins=all_plugins)
    if hook:
        info = [p for p in info if hook in p["hooks"]]
    if json_out or (json_out is None and not is_terminal()):
        print_json(info)
        return
    from rich.markup import escape
    from rich.table import Table

    table = Table("plugin", "distribution", "version", "hooks")
    for p in info:
        hooks = ", ".join(p["hooks"]) if "error" not in p else f"[red]failed to load: {escape(p['error'])}[/red]"
        table.add_row(p["name"], p["distribution"] or "-", p["version"] or "-", hooks)
    out.print(table)
