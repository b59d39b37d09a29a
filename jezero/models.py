"""The shapes that flow between the stages: sessions and blocks from connectors, segments to
summarizers, summaries back. Plain data, no behaviour beyond validation, so every stage (and
every plugin) can import it without pulling in the others."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from collections.abc import Sequence
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, field_validator

# ----------------------------------------------------------------------------------------------
# What a connector yields

ROLES = ("user", "assistant", "tool", "system")
KINDS = ("text", "thinking", "tool_call", "tool_result", "summary", "compaction", "image", "meta")
# What a tool call did, in the project's words. The connector, which alone knows its agent's tool
# names, sets it; summarizers and redactors read it and never a tool's name.
ACTIONS = ("shell", "read", "edit", "write", "search", "fetch", "plan", "subagent", "other")


@dataclass
class Block:
    """One unit of a transcript, in order: a prompt, an answer, a tool call or its result."""

    role: str  # one of ROLES
    kind: str  # one of KINDS
    text: str
    time: datetime | None = None  # UTC
    tool: str | None = None  # the agent's own tool name, for display only
    is_error: bool = False  # a tool_result that reported failure
    action: str | None = None  # one of ACTIONS, for tool_call / tool_result
    command: str | None = None  # the shell command a "shell" call ran
    paths: list[str] = field(default_factory=list)  # files a call read, edited, wrote or searched


@dataclass
class Session:
    """One agent session as read from its source, with everything the pipeline needs.

    `cursor_key` / `cursor_value`: once every segment of this session is stored, the pipeline sets
    the connector's cursor entry `cursor_key` to `cursor_value` in the same transaction. A session
    that is deferred (still active) or fails does not move its entry, so it is read again next run.
    """

    id: str
    agent: str  # "claude-code", "codex", ...
    blocks: list[Block]
    cursor_key: str
    cursor_value: Any
    cwd: str | None = None
    git_branch: str | None = None
    started_at: datetime | None = None
    ended_at: datetime | None = None  # last activity; drives settle and occurred_at
    parent_id: str | None = None  # the parent session of a subagent run
    model: str | None = None
    title: str | None = None  # a title the source itself gives (custom title, thread name)
    project_hint: str | None = None  # a project sent by a device with the upload
    warnings: list[str] = field(default_factory=list)  # problems reading this session


class Connector(Protocol):
    """What a connector type's `build(options, context)` returns."""

    def read(self, cursor: dict[str, Any]) -> Any:  # Iterable[Session]
        """Yield the sessions that changed since `cursor` (a dict the connector owns)."""


@dataclass
class ConnectorContext:
    """Handed to a connector type's build function."""

    name: str  # the source name from the config
    warn: Any  # Callable[[str], None]: a problem the admin must see; holds nothing by itself
    default_project: str | None = None


@dataclass
class ConnectorType:
    name: str
    build: Any  # Callable[[dict, ConnectorContext], Connector] | None for a planned type
    description: str = ""
    plugin: str | None = None  # set by the host: who registered it
    options: Any = None  # a pydantic model class declaring the type's options, or None
    discover: Any = None  # Callable[[], list[dict]]: options for this agent's stores on this computer
    demo: Any = None  # Callable[[Path, list[DemoSession]], dict]: writes them there, returns options to read them
    # Callable[[list[Block]], list[Block]]: sets action/command/paths on blocks read back from a
    # stored original (only role, kind, tool, is_error and text survive), for `jezero resummarize`.
    normalize: Any = None


# ----------------------------------------------------------------------------------------------
# What a summarizer gets and gives


@dataclass
class Segment:
    """A stable slice of one session, redacted, ready to summarise."""

    uid: str
    source: str
    session: Session  # blocks redacted; only `blocks` below belong to this segment
    index: int
    blocks: list[Block]
    text: str  # the rendered, redacted text: what is hashed, summarised and stored as the original
    content_hash: str
    occurred_at: datetime


SUMMARY_SCHEMA_VERSION = 1
ATOM_TYPES = ("decision", "fix", "error", "command", "file", "config", "number", "todo", "fact")
SUMMARY_MAX_CHARS = 800
TITLE_MAX_CHARS = 120
MAX_ATOMS = 12
_SLUG = re.compile(r"^[a-z0-9][a-z0-9._-]{0,62}$")
_NOT_SLUG = re.compile(r"[^a-z0-9._-]+")


def slug(name: str) -> str | None:
    """A project name as the schema takes it: lower case, each run of other characters a `-`,
    no leading or trailing `-`, `.` or `_`, at most 63 characters; None when nothing is left."""
    s = _NOT_SLUG.sub("-", name.strip().lower()).strip("-._")[:63].rstrip("-._")
    return s if _SLUG.match(s) else None


class Atom(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["decision", "fix", "error", "command", "file", "config", "number", "todo", "fact"]
    text: str = Field(min_length=1, max_length=400)


class Summary(BaseModel):
    """The fixed, versioned output of every summarizer (schema version SUMMARY_SCHEMA_VERSION)."""

    model_config = ConfigDict(extra="forbid")
    title: str = Field(min_length=1, max_length=TITLE_MAX_CHARS)
    summary: str = Field(min_length=1, max_length=SUMMARY_MAX_CHARS)
    questions: list[str] = Field(min_length=3, max_length=6)
    atoms: list[Atom] = Field(default_factory=list, max_length=MAX_ATOMS)
    project: str | None = None  # the summarizer's guess, a slug
    language: str | None = None  # ISO 639-1 of the written fields

    @field_validator("title")
    @classmethod
    def _one_line(cls, v: str) -> str:
        if "\n" in v.strip():
            raise ValueError("title must be one line")
        return v.strip()

    @field_validator("project")
    @classmethod
    def _slug(cls, v: str | None) -> str | None:
        if v is None or v == "":
            return None
        if not _SLUG.match(v):
            raise ValueError(f"project must be a lowercase slug, got {v!r}")
        return v


@dataclass
class Usage:
    """What one summarizer call cost; recorded per call."""

    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None


@runtime_checkable
class Summarizer(Protocol):
    name: str
    model: str | None
    max_in_flight: int  # calls the pipeline may run at once

    def summarize(self, segment: Segment) -> tuple[Summary, Usage]: ...


@dataclass
class SummarizerType:
    name: str
    build: Any  # Callable[[SummarizerConfig], Summarizer]
    description: str = ""
    plugin: str | None = None


@dataclass
class IndexEngineType:
    name: str
    open: Any  # Callable[[pathlib.Path], jezero.store.engines.IndexEngine]; None for the built-in fts5
    description: str = ""
    plugin: str | None = None


@runtime_checkable
class Embedder(Protocol):
    """Text in, vectors out, for the semantic lane."""

    # What made the vectors (model and its version, any derivation): the library records it, and
    # vectors of two model ids never mix in one ranking. Change it whenever the vectors change.
    model_id: str
    dimension: int

    def embed(self, texts: Sequence[str], *, query: bool = False) -> Any:
        """One row of `dimension` floats per text, L2-normalised (all zeros for a text with
        nothing to embed); a float32 numpy array of shape (len(texts), dimension) is best.
        `query=True` for a search query, for models that embed queries apart from documents."""
        ...


class EmbedderNotReady(Exception):
    """Raised by an embedder's build when its model is not on this computer yet; the message
    says the command that makes it ready (e.g. `jezero embed --prepare`)."""


@dataclass
class EmbedderType:
    name: str
    build: Any  # Callable[[dict], Embedder]
    description: str = ""
    prepare: Any = None  # Callable[[dict], str] | None
    plugin: str | None = None


@dataclass
class Redactor:
    name: str
    redact: Any  # Callable[[str], str]
    plugin: str | None = None


@dataclass
class ProjectHints:
    """Everything a project-hint resolver may use to name a session's project."""

    source: str
    agent: str
    cwd: str | None = None
    device_project: str | None = None
    summarizer_guess: str | None = None
    default_project: str | None = None
    rules: list[Any] = field(default_factory=list)  # [(glob, project)] from the config
    roots: list[str] = field(default_factory=list)  # common root folders from the config


def utc(dt: datetime) -> datetime:
    """Aware UTC; a naive datetime is taken to be UTC already."""
    if dt.tzinfo is None:
        return dt.replace(tzinfo=timezone.utc)
    return dt.astimezone(timezone.utc)
