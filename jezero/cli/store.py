"""Moving the library between backends: `jezero migrate-store`."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from jezero.cli import app
from jezero.cli.common import err, fail, load_config, out, print_json


@app.command("migrate-store")
def migrate_store(
    to: Annotated[str, typer.Option("--to", help="Where to copy the library: postgres (from the SQLite file) or sqlite (from PostgreSQL).")],
    url_env: Annotated[Optional[str], typer.Option("--url-env", help="The environment variable holding the PostgreSQL connection string (default: \\[storage] url_env).")] = None,
    path: Annotated[Optional[str], typer.Option("--path", help="The SQLite file (default: the configured library path).")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Copy the library between SQLite and PostgreSQL, verified and resumable.

    Copies items (with their ids), messages, cursors, connector state, warnings and summarizer
    calls; the destination builds its own search index. Resumable (run it again after an
    interruption: only what is missing is copied) and verified (counts and a content hash per
    table, on both sides). Then set \\[storage] backend to the new one."""
    import os
    from pathlib import Path

    from jezero.config import lookup_env
    from jezero.store import backends

    if to not in ("postgres", "sqlite"):
        fail(f"--to must be postgres or sqlite, not {to!r}", 2)
    cfg = load_config(check_plugins=False)
    variable = url_env or cfg.storage.url_env
    if not variable:
        fail("name the environment variable holding the PostgreSQL connection string: --url-env VAR, or "
             "[storage] url_env in the config", 2)
    url = lookup_env(variable) or os.environ.get(variable)
    if not url:
        fail(f"{variable} is not set: set it to the PostgreSQL library's connection string", 2)
    sqlite_path = Path(path).expanduser() if path else cfg.library_path()
    if to == "postgres" and not sqlite_path.exists():
        fail(f"no SQLite library at {sqlite_path}", 1)
    try:
        module = backends.backend_named("postgres")
        from importlib import import_module

        migrate = import_module(f"{module.__name__}.migrate")
        progress = None if json_out else (lambda line: err.print(line, markup=False))
        if to == "postgres":
            report = migrate.to_postgres(sqlite_path, url, progress=progress)
            where = f"{sqlite_path} -> postgres (${variable})"
        else:
            report = migrate.to_sqlite(url, sqlite_path, progress=progress)
            where = f"postgres (${variable}) -> {sqlite_path}"
    except Exception as e:  # a lost connection, a tokenizer mismatch: plainly, without a traceback
        fail(f"migrate-store: {e} (run it again to resume: what was copied stays)", 1)
    result = {"from_to": where, "copied_items": report.copied_items, "skipped_items": report.skipped_items,
              "verified": report.verified, "counts": {t: list(c) for t, c in report.counts.items()},
              "hashes": {t: list(h) for t, h in report.hashes.items()}, "differing": report.differing()}
    if json_out:
        print_json(result)
    else:
        out.print(f"{where}: {report.copied_items} items copied, {report.skipped_items} already there", markup=False)
        for table, (a, b) in report.counts.items():
            same = "same" if report.hashes[table][0] == report.hashes[table][1] else "DIFFERENT content"
            out.print(f"  {table}: {a} -> {b} rows, {same}", markup=False)
        out.print("verified: counts and content hashes match" if report.verified else
                  f"NOT verified: {', '.join(report.differing())} differ", markup=False)
    if not report.verified:
        raise typer.Exit(1)
