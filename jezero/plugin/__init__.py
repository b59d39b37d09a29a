"""The one module a plugin author imports. Everything a connector, redactor, summarizer or
project-hint resolver needs is here; the rest of `jezero` is private and free to change.

- the hook marker: `hookimpl`;
- for summarizers: `SummarizerConfig` (the `[summarizer]` table) and `lookup_env` (a variable
  from the environment or the `.env` beside the config), the schema limits `MAX_ATOMS`,
  `SUMMARY_MAX_CHARS`, `TITLE_MAX_CHARS`, `ATOM_TYPES`, and `slug` (a project name as the schema
  takes it);
- what flows between the stages: `Session`, `Block` (with `ROLES`, `KINDS`, `ACTIONS`),
  `Segment`, `Summary`, `Atom`, `Usage`, `ProjectHints`, and the `Connector` / `Summarizer`
  protocols with the `ConnectorContext` a connector is built with;
- declaring options: `Options` (unknown keys refused), `FolderPath`, `read_options`;
- the file helpers a file-based connector needs: `read_jsonl` (tolerant, leaves a half-written
  last line for the next run) and `JsonlStream` (the same, line by line, for files of any size),
  `damage_warnings` (what such a read replaced or left out), `file_signature` and `same_signature` (for cursors),
  `longer_copy` and `read_from` (one transcript name found twice: is one a copy of the other's start? the file a cursor
  entry was read from?), `not_a_file` (what a
  path named like a transcript is when it is not a file: for a walk's warning), `json_text` (a file's bytes as JSON text: bad bytes
  replaced, a byte order mark dropped), `read_json` (`json.loads` that raises only ValueError,
  nesting deeper than `MAX_JSON_DEPTH` included), `parse_time`, `clip` (head and
  tail of a long text), `strip_ansi`, `expand`, `TOOL_TEXT_LIMIT`;
- made-up sessions for `jezero up --demo`: `DemoSession` and `Turn`;
- for a search index engine: `IndexEngine`, `IndexRequest`, `MessageRequest` (with `CommonUnread`), `Head` and
  `library_head` (the library's id and last change), `FTS_COLUMNS`, `fts_row` and `open_readonly`;
- for an embedder (the semantic lane): `Embedder` and `EmbedderNotReady`;
- the test kit is `jezero.plugin.testing` (imported on its own: it brings the pipeline and the
  store).
"""

from jezero.config import SummarizerConfig, lookup_env
from jezero.demo import SessionSpec as DemoSession
from jezero.demo import Turn
from jezero.hookspecs import hookimpl
from jezero.ingest.files import (
    MAX_JSON_DEPTH,
    TOOL_TEXT_LIMIT,
    JsonlRead,
    JsonlStream,
    clip,
    damage_warnings,
    expand,
    file_signature,
    json_text,
    longer_copy,
    not_a_file,
    parse_time,
    read_from,
    read_json,
    read_jsonl,
    same_signature,
    strip_ansi,
    title_line,
)
from jezero.models import (
    ACTIONS,
    ATOM_TYPES,
    KINDS,
    MAX_ATOMS,
    ROLES,
    SUMMARY_MAX_CHARS,
    TITLE_MAX_CHARS,
    Atom,
    Block,
    Connector,
    ConnectorContext,
    ConnectorType,
    Embedder,
    EmbedderNotReady,
    ProjectHints,
    Redactor,
    Segment,
    Session,
    Summarizer,
    SummarizerType,
    Summary,
    Usage,
    slug,
    utc,
)
from jezero.options import FolderPath, Options, read_options
from jezero.store import FTS_COLUMNS, fts_row, open_readonly
from jezero.store.engines import CommonUnread, Head, IndexEngine, MessageRequest, library_head
from jezero.store.engines import Request as IndexRequest

__all__ = [
    "FTS_COLUMNS", "CommonUnread", "Head", "IndexEngine", "IndexRequest", "MessageRequest", "fts_row", "library_head", "open_readonly",
    "ACTIONS", "ATOM_TYPES", "KINDS", "MAX_ATOMS", "ROLES", "MAX_JSON_DEPTH", "SUMMARY_MAX_CHARS", "TITLE_MAX_CHARS", "TOOL_TEXT_LIMIT",
    "Atom", "Block", "Connector", "ConnectorContext", "ConnectorType", "DemoSession", "Embedder", "EmbedderNotReady", "FolderPath", "JsonlRead", "JsonlStream",
    "Options", "ProjectHints", "Redactor", "Segment", "Session", "Summarizer", "SummarizerConfig", "SummarizerType",
    "Summary", "Turn", "Usage", "clip", "damage_warnings", "expand", "file_signature", "hookimpl", "longer_copy", "read_from", "same_signature", "json_text", "lookup_env", "not_a_file", "parse_time",
    "read_json", "read_jsonl", "read_options", "slug", "strip_ansi", "title_line", "utc",
]
