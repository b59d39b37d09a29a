"""The one module a plugin author imports. Everything a connector, redactor, summarizer,
project-hint resolver or search index engine needs is here; the rest of `jezero` is private and
free to change."""

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
from jezero.store import FTS_COLUMNS, fts_row, open_readonly
from jezero.store.engines import Head, IndexEngine, library_head
from jezero.store.engines import Request as IndexRequest

__all__ = [
    "ACTIONS", "ATOM_TYPES", "FTS_COLUMNS", "KINDS", "ROLES", "Atom", "Block", "Connector", "ConnectorContext",
    "Head", "IndexEngine", "IndexRequest", "ProjectHints", "Segment", "Session", "Summarizer", "Summary", "Usage",
    "fts_row", "hookimpl", "library_head", "open_readonly", "utc",
]
