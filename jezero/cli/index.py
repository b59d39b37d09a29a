"""Keeping a derived search index in step: reindex."""

from __future__ import annotations

import time
from typing import Annotated, Optional

import typer

from jezero.cli import app
from jezero.cli.common import fail, load_config, out, print_json, sqlite_only


@app.command()
def reindex(
    engine: Annotated[Optional[str], typer.Option("--engine", help="The index engine (default: [search] engine in the config).")] = None,
    catch_up: Annotated[bool, typer.Option("--catch-up", help="Apply only the changes the index lacks instead of rebuilding it.")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Rebuild the search index engine's index from the library (the library is never changed).

    FTS5, the built-in engine, lives inside the library and is always in step: nothing to do.
    """
    from jezero.store import engines

    cfg = load_config()
    sqlite_only(cfg, "reindex")
    library = cfg.library_path()
    if not library.exists():
        fail(f"no library at {library} (run `jezero init` or `jezero up` first)", 2)
    name = engine or cfg.search.engine
    if name != engines.BUILTIN and engines.engine_for(name, library) is None:
        fail(f"no installed plugin gives the search engine {name!r} (see `jezero plugins`)", 2)
    t0 = time.perf_counter()
    try:
        written = engines.sync(name, library, rebuild=not catch_up)
    except ValueError as e:  # the index's writer is held by another process
        fail(f"cannot update the {name} index now: {e}", 1)
    result = {"engine": name, "library": str(library), "items_written": written or 0,
              "seconds": round(time.perf_counter() - t0, 2)}
    if json_out:
        print_json(result)
        return
    if written is None:
        out.print(f"{name}: the index is inside the library, always in step; nothing to do")
    else:
        out.print(f"{name}: {written} items written to the index in {result['seconds']} s")
