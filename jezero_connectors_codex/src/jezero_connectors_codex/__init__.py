"""Jezero connector type 'codex' (registration only; the reader lands with its issue)."""

from jezero import hookimpl


@hookimpl
def register_connector_types(register):
    register("codex", None, description="planned: codex")
