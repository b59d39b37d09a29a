"""Jezero connector type 'claude' (registration only; the reader lands with its issue)."""

from jezero import hookimpl


@hookimpl
def register_connector_types(register):
    register("claude", None, description="planned: claude")
