"""The inbox connectors: each agent's own connector over a device folder, with the device's
project hints. Cursors are the wrapped connector's, unchanged."""

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


class _Hinted:
    """A wrapped connector whose sessions get the hint stored beside their file, found by the
    session's cursor key through `files` (cursor key -> path in the device folder)."""

    def __init__(self, folder: Path, context: ConnectorContext, inner):
        self.folder = folder
        self.context = context
        self.inner = inner

    def files(self) -> dict[str, Path]:
        return {}

    def read(self, cursor: dict[str, Any]) -> Iterator[Session]:
        if not self.folder.is_dir():
            return  # nothing uploaded yet
        paths: dict[str, Path] | None = None
        for session in self.inner.read(cursor):
            if paths is None:
                paths = self.files()
            path = paths.get(session.cursor_key)
            if path is not None:
                session.project_hint = read_hint(self.folder, path.relative_to(self.folder).as_posix())
            yield session


class InboxCodex(_Hinted):
    """Codex rollouts in `<inbox>/<device>/codex/` (sessions/, archived_sessions/)."""

    def __init__(self, folder: Path, context: ConnectorContext):
        super().__init__(folder, context, CodexConnector(folder, context))

    def files(self) -> dict[str, Path]:
        # the codex cursor is keyed by rollout id: find each id's file
        return {key: ref.path for key, ref in codex_store.discover(self.folder, lambda _m: None).items()}


class InboxGemini(_Hinted):
    """Gemini CLI chats in `<inbox>/<device>/gemini/tmp/<project>/chats/`."""

    def __init__(self, folder: Path, context: ConnectorContext):
        from jezero_connectors_gemini.connector import GeminiConnector

        super().__init__(folder, context, GeminiConnector(folder, context))

    def files(self) -> dict[str, Path]:
        from jezero_connectors_gemini import store as gemini_store
        from jezero_connectors_gemini.connector import OWN_KEY

        # One chat name in two project folders: the second is read under `<key>@<project>`.
        out: dict[str, Path] = {}
        for chat in gemini_store.walk(self.folder, lambda _m: None):
            out.setdefault(chat.key, chat.path)
            out[f"{chat.key}{OWN_KEY}{chat.project.name}"] = chat.path
        return out


class InboxCopilot(_Hinted):
    """Copilot CLI sessions in `<inbox>/<device>/copilot/session-state/`."""

    def __init__(self, folder: Path, context: ConnectorContext):
        from jezero_connectors_copilot.connector import CopilotConnector

        super().__init__(folder, context, CopilotConnector(folder, context))

    def files(self) -> dict[str, Path]:
        from jezero_connectors_copilot.connector import own_key, walk

        # A session's folder and a flat file of its id: the second read is `<id>@flat`/`@folder`.
        out: dict[str, Path] = {}
        for ref in walk(self.folder / "session-state", lambda _m: None):
            out.setdefault(ref.key, ref.path)
            out[own_key(ref)] = ref.path
        return out


class InboxOpenCode(_Hinted):
    """OpenCode's store in `<inbox>/<device>/opencode/`: the snapshot of its SQLite database the
    device made, or the older JSON files. One database holds every session, so there is no hint
    per session: OpenCode records each session's folder, which the server's project rules read."""

    def __init__(self, folder: Path, context: ConnectorContext):
        from jezero_connectors_opencode.connector import OpenCodeConnector

        super().__init__(folder, context, OpenCodeConnector(folder, context))


def build_gemini(options: dict[str, Any] | None, context: ConnectorContext) -> InboxGemini:
    return InboxGemini(_folder("inbox-gemini", options), context)


def build_copilot(options: dict[str, Any] | None, context: ConnectorContext) -> InboxCopilot:
    return InboxCopilot(_folder("inbox-copilot", options), context)


def build_opencode(options: dict[str, Any] | None, context: ConnectorContext) -> InboxOpenCode:
    return InboxOpenCode(_folder("inbox-opencode", options), context)


def build_claude(options: dict[str, Any] | None, context: ConnectorContext) -> InboxClaude:
    return InboxClaude(_folder("inbox-claude", options), context)


def build_codex(options: dict[str, Any] | None, context: ConnectorContext) -> InboxCodex:
    return InboxCodex(_folder("inbox-codex", options), context)
