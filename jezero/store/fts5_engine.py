"""The built-in search index engine, `fts5`: the library's own FTS5 table. A plugin module of
its own so that reading the library (jezero.store.engines) never loads the plugin host."""

from jezero.hookspecs import hookimpl
from jezero.store.engines import BUILTIN


@hookimpl(trylast=True)
def register_index_engines(register):
    # Nothing to open: search.py ranks with the library's own index.
    register(BUILTIN, None, description="SQLite FTS5 inside the library file (built in, the default)")
