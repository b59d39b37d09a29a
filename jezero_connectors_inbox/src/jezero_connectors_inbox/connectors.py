"""The inbox connectors: the claude and codex connectors over a device folder, with the
device's project hints. Cursors are the wrapped connector's, unchanged."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from jezero.inbox.folder import read_hint
from jezero.ingest.files import expand
from jezero.models import ConnectorContext, Session

from jezero_connectors_claude.connector import ClaudeConnector
from jezero_connectors_codex import store as codex_store
from jezero_connectors_codex.connector import CodexConnector

OPTIONS = ("path",)


def _folder(kind: str, options: dict[str, Any] | None) -> Path:
    options = dict(options or {})
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise ValueError(f"{kind}: unknown option {', '.join(map(repr, unknown))} (known: path)")
    path = options.get("path")
    if not isinstance(path, str) or not path.strip():
        raise ValueError(f"{kind}: option 'path' (the device's folder in the inbox) is required")
    return expand(path)


class InboxClaude:
    """Claude Code sessions in `<inbox>/<device>/claude/projects/`."""

    def __init__(self, folder: Path, context: ConnectorContext):
        self.folder = folder
        self.inner = ClaudeConnector(folder, context)

    def read(self, cursor: dict[str, Any]) -> Iterator[Session]:
        if not self.folder.is_dir():
            return  # nothing uploaded yet: not a problem worth a warning every run
        root = self.inner.root
        for session in self.inner.read(cursor):
            relative = (root / session.cursor_key.split("#", 1)[0]).relative_to(self.folder).as_posix()
            session.project_hint = read_hint(self.folder, relative) or self._parent_hint(relative)
            yield session

    def _parent_hint(self, relative: str) -> str | None:
        # A sub-agent file without a hint of its own works in its session's project:
        # projects/<dir>/<session>/subagents/agent-x.jsonl -> projects/<dir>/<session>.jsonl
        parts = relative.split("/")
        if "subagents" in parts:
            i = parts.index("subagents")
            return read_hint(self.folder, "/".join(parts[: i - 1] + [parts[i - 1] + ".jsonl"]))
        return None


class InboxCodex:
    """Codex rollouts in `<inbox>/<device>/codex/` (sessions/, archived_sessions/)."""

    def __init__(self, folder: Path, context: ConnectorContext):
        self.folder = folder
        self.inner = CodexConnector(folder, context)

    def read(self, cursor: dict[str, Any]) -> Iterator[Session]:
        if not self.folder.is_dir():
            return
        paths: dict[str, Path] | None = None
        for session in self.inner.read(cursor):
            if paths is None:  # the codex cursor is keyed by rollout id: find each id's file
                paths = {key: ref.path for key, ref in codex_store.discover(self.folder, lambda _m: None).items()}
            path = paths.get(session.cursor_key)
            if path is not None:
                session.project_hint = read_hint(self.folder, path.relative_to(self.folder).as_posix())
            yield session


def build_claude(options: dict[str, Any] | None, context: ConnectorContext) -> InboxClaude:
    return InboxClaude(_folder("inbox-claude", options), context)


def build_codex(options: dict[str, Any] | None, context: ConnectorContext) -> InboxCodex:
    return InboxCodex(_folder("inbox-codex", options), context)
