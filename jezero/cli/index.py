"""Keeping a derived search index in step: reindex."""

from __future__ import annotations

import time
from typing import Annotated, Optional

import typer

from jezero.cli import app
from jezero.cli.common import fail, load_config, out, print_json, sqlite_only

# Past this many items FTS5's search of a first prompt's words outgrows the hook's share of its
# 150 ms: search() alone, CPU p50 / p95, 34 / 73 ms at 20k, 82 / 159 at 50k, 128 / 233 at 100k,
# next to the hook's own ~40-50 ms; tantivy 8.5 / 13.3 at 100k (benchmarks/hooks/README.md).
FTS5_ADVICE_ITEMS = 30_000


@app.command()
def reindex(
    engine: Annotated[Optional[str], typer.Option("--engine", help="The index engine (default: \\[search] engine in the config).")] = None,
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
    found = engines.engine_for(name, library)
    t0 = time.perf_counter()
    try:
        written = found.catch_up(rebuild=not catch_up) if found is not None else None
    except ValueError as e:  # the index's writer is held by another process
        fail(f"cannot update the {name} index now: {e}", 1)
    # an engine with a messages index of its own (tantivy) says how many messages it wrote
    messages = getattr(found, "messages_written", None)
    result = {"engine": name, "library": str(library), "items_written": written or 0,
              "seconds": round(time.perf_counter() - t0, 2)}
    if messages is not None:
        result["messages_written"] = messages
    if json_out:
        print_json(result)
        return
    if written is None:
        out.print(f"{name}: the index is inside the library, always in step; nothing to do")
    else:
        what = f"{written} items" + (f" and {messages} messages" if messages is not None else "")
        out.print(f"{name}: {what} written to the index in {result['seconds']} s")


def engine_line(cfg, items: int | None = None) -> str:
    """One line for `jezero status`: which engine searches the library, with engine_advice()."""
    from jezero import plugins
    from jezero.store import backends, engines

    if backends.name(cfg) != backends.SQLITE:
        return f"search engine: the {backends.name(cfg)} backend's own"
    name = cfg.search.engine
    if name != engines.BUILTIN:
        if name not in plugins.index_engines():
            return f"search engine: {name}, but no installed plugin gives it: searching with fts5"
        note = index_condition(name, cfg.library_path())
        return f"search engine: {name}" + (f"; {note}" if note else "")
    advice = engine_advice(cfg, items)
    return "search engine: fts5 (inside the library)" + (f"; {advice}" if advice else "")


def index_condition(name: str, library) -> str | None:
    """What the engine says of its index when it is not in step (its `condition`), or None
    (status and health say it)."""
    from jezero.store import engines

    if not library.exists():
        return None
    found = engines.engine_for(name, library)
    condition = getattr(found, "condition", None)
    if condition is None:
        return None
    try:
        return condition() or None
    except Exception as e:  # status still shows the rest
        return f"its index cannot be read ({type(e).__name__}: {str(e)[:200]})"


def engine_advice(cfg, items: int | None = None) -> str | None:
    """How to move to tantivy, for a SQLite library searched by FTS5 that holds FTS5_ADVICE_ITEMS
    items or more; else None. `items`: the library's item count if the caller has it."""
    from jezero import plugins
    from jezero.store import backends, engines

    if backends.name(cfg) != backends.SQLITE or cfg.search.engine != engines.BUILTIN:
        return None
    if items is None:
        items = _count_items(cfg)
    if items is None or items < FTS5_ADVICE_ITEMS:
        return None
    how = ("set [search] engine = \"tantivy\" and run `jezero reindex`" if "tantivy" in plugins.index_engines()
           else "pip install 'jezero[tantivy]', set [search] engine = \"tantivy\" and run `jezero reindex`")
    return (f"the library holds {items:,} items, where FTS5's searches of common words slow down "
            f"(an agent's first-prompt context can miss its budget): {how}")


def _count_items(cfg) -> int | None:
    from jezero.store import StoreError, open_readonly

    if not cfg.library_path().exists():
        return None
    try:
        conn = open_readonly(cfg.library_path())
    except StoreError:
        return None
    try:
        return conn.execute("SELECT count(*) FROM items").fetchone()[0]
    finally:
        conn.close()
