"""Jezero connector type 'inbox' (registration only; the reader lands with its issue)."""

from jezero import hookimpl


@hookimpl
def register_connector_types(register):
    register("inbox", None, description="planned: inbox")
