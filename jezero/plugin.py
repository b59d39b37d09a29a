"""The one module a plugin author imports. Everything a connector, redactor, summarizer or
project-hint resolver needs is here; the rest of `jezero` is private and free to change."""

from jezero.hookspecs import hookimpl
from jezero.models import (
    ACTIONS,
    ATOM_TYPES,
    KINDS,
    ROLES,
    Atom,
    Block,
    Connector,
    ConnectorContext,
    ProjectHints,
    Segment,
    Session,
    Summarizer,
    Summary,
    Usage,
    utc,
)

__all__ = [
    "ACTIONS", "ATOM_TYPES", "KINDS", "ROLES", "Atom", "Block", "Connector", "ConnectorContext",
    "ProjectHints", "Segment", "Session", "Summarizer", "Summary", "Usage", "hookimpl", "utc",
]
