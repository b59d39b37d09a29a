"""Jezero summarizers (registration only; the summarizers land with their issue)."""

from jezero import hookimpl


@hookimpl
def register_summarizers(register):
    pass
