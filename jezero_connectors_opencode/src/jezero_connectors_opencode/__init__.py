"""Jezero connector type 'opencode': OpenCode sessions, from its SQLite store (`opencode.db`) or
its older JSON files (`storage/`), in `$XDG_DATA_HOME/opencode` or `~/.local/share/opencode`."""

from jezero.plugin import hookimpl

from .connector import OpenCodeConnector, OpenCodeOptions, build, discover
from .demo import write_demo

__all__ = ["OpenCodeConnector", "OpenCodeOptions", "build", "discover", "register_connector_types", "write_demo"]

DESCRIPTION = "OpenCode sessions (~/.local/share/opencode: opencode.db, or the older storage/ JSON files)"


@hookimpl
def register_connector_types(register):
    register("opencode", build, description=DESCRIPTION, options=OpenCodeOptions, discover=discover, demo=write_demo)
