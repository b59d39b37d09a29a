"""The `claude` connector: walks a Claude Code store and yields the sessions whose files changed
since the cursor.

Cursor: one entry per transcript file, keyed by its path relative to the root, valued
`{"sig": [size, mtime_ns, check], "consumed": bytes}` (the stat taken before reading, and how far the
complete lines went). An inline sub-agent run (Claude Code 1.0.x) has its own entry,
`<file key>#sidechain-<id>`, with the same value; the file's own entry then also lists those
keys under "children", so the file is skipped only when it and all its runs are stored."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath
from typing import Any

from jezero.plugin import (ConnectorContext, FolderPath, Options, Session, expand, file_signature, json_text, longer_copy, read_json,
                           read_options, same_signature)

from jezero_connectors_claude.actions import annotate
from jezero_connectors_claude.reader import Thread, TranscriptRead, read_transcript
from jezero_connectors_claude.store import TranscriptFile, walk

AGENT = "claude-code"


class ClaudeOptions(Options):
    """A Claude Code store root (the folder holding `projects/`) or its `projects/` folder;
    default `$CLAUDE_CONFIG_DIR/projects` if set, else `~/.claude/projects`."""

    path: FolderPath | None = None


def default_root() -> Path:
    """`$CLAUDE_CONFIG_DIR/projects` when that is set, else `~/.claude/projects`."""
    config = os.environ.get("CLAUDE_CONFIG_DIR", "").strip()
    return (expand(config) if config else expand("~/.claude")) / "projects"


def store_root(path: Path) -> Path:
    """A store root (the folder holding `projects/`) or the `projects/` folder itself."""
    projects = path / "projects"
    return projects if projects.is_dir() else path


class ClaudeConnector:
    agent = AGENT

    def __init__(self, path: Path, context: ConnectorContext):
        self.path = path
        self.context = context

    @property
    def root(self) -> Path:
        # Resolved on every read: a store created after the connector was built is still found.
        return store_root(self.path)

    def read(self, cursor: dict[str, Any]) -> Iterator[Session]:
        root = self.root
        if not root.is_dir():
            self.context.warn(f"Claude Code store not found: {root}")
            return
        files = list(walk(root, self.context.warn))
        own, warnings = own_ids(files, cursor)
        for warning in warnings:
            self.context.warn(warning)
        for tf in files:
            yield from self._read_file(tf, cursor, own)

    def _read_file(self, tf: TranscriptFile, cursor: dict[str, Any], own: OwnIds | None = None) -> Iterator[Session]:
        own = own or OwnIds({})
        try:
            sig = file_signature(tf.path)
        except FileNotFoundError:
            self.context.warn(vanished(tf.path))
            return
        except OSError as e:
            self.context.warn(f"cannot read {tf.path}: {e.strerror or e}")
            return
        renamed = own.of(tf)
        key = tf.key + OWN_ID_KEY if renamed else tf.key
        if _unchanged(cursor, key, sig):
            return
        try:
            read = read_transcript(tf.path, split_sidechains=not tf.agent, label=str(tf.path))
        except FileNotFoundError:  # removed mid-scan (retention, archiving): nothing to read
            self.context.warn(vanished(tf.path))
            return
        except OSError as e:
            self.context.warn(f"cannot read {tf.path}: {e.strerror or e}")
            return
        if tf.agent:
            sessions = agent_sessions(tf, read, sig, key=key, parent_of=lambda sid: own.parent(tf, sid))
        else:
            sessions = main_sessions(tf, read, sig, key=key, own_id=renamed)
        for session in sessions:
            if cursor.get(session.cursor_key) != session.cursor_value:
                yield session


# One file name in two project folders (stores copied or merged together, a session resumed from
# another folder) was one session id: each run kept whichever file it wrote last (the other's
# text replaced, or refused as "read back shorter"), so one of the two was lost. Now the first
# (the one the cursor already knows, else the first in the walk) keeps the id, and each other
# copy that is not just the start of it (or it of the copy) gets an id of its own,
# `<id>@<project folder>`, with a cursor entry of its own (`<key>#own-id`, its sub-agents' too):
# read once more after the upgrade, its text is kept beside the first's, and what the library
# holds under the plain id is not touched. A copy that has its own id keeps it (its entry says
# so), even once the other file is gone: its text never goes back under the plain id to replace
# what is stored there.
OWN_ID_KEY = "#own-id"


def own_id(tf: TranscriptFile) -> str:
    return f"{tf.stem}@{_folder(tf)}"


def _folder(tf: TranscriptFile) -> str:
    """The folder a file's session file sits in (its key's parent; for a nested sub-agent, the
    parent of its session folder), "." for the root."""
    parts = PurePosixPath(tf.key).parts
    if tf.agent and tf.session_dir is not None and "subagents" in parts:
        i = parts.index("subagents")
        return PurePosixPath(*parts[: i - 1]).as_posix() if i > 1 else "."
    return PurePosixPath(tf.key).parent.as_posix()


class OwnIds:
    """The main files read under an id of their own (`own_id`), and their sub-agents."""

    def __init__(self, renamed: dict[TranscriptFile, str]):
        self.renamed = {tf.key: new for tf, new in renamed.items()}
        self.by_folder = {(_folder(tf), tf.stem): new for tf, new in renamed.items()}

    def of(self, tf: TranscriptFile) -> str | None:
        """The own id of a main file, or of the parent of a nested sub-agent file; else None."""
        if not tf.agent:
            return self.renamed.get(tf.key)
        return self.by_folder.get((_folder(tf), tf.session_dir)) if tf.session_dir is not None else None

    def parent(self, tf: TranscriptFile, session_id: str | None) -> str | None:
        """The id a sub-agent's parent session is stored under, from the id its lines carry."""
        if session_id is None:
            return None
        return self.by_folder.get((_folder(tf), session_id), session_id)


def own_ids(files: list[TranscriptFile], cursor: dict[str, Any]) -> tuple[OwnIds, list[str]]:
    """Which main files take an id of their own (see OWN_ID_KEY), and what to say about it."""
    groups: dict[str, list[TranscriptFile]] = {}
    for tf in files:
        if not tf.agent:
            groups.setdefault(tf.stem, []).append(tf)
    renamed: dict[TranscriptFile, str] = {}
    warnings = []
    for stem, group in groups.items():
        rest = []
        for tf in group:
            if isinstance(cursor.get(tf.key + OWN_ID_KEY), dict):
                renamed[tf] = own_id(tf)
            else:
                rest.append(tf)
        if len(group) < 2 or not rest:
            continue
        holder = next((tf for tf in rest if isinstance(cursor.get(tf.key), dict)), rest[0])
        for tf in rest:
            if tf is holder:
                continue
            if longer_copy(holder.path, tf.path) is not None:
                warnings.append(f"{holder.key} and {tf.key} have one name, so one session id ({stem}), and "
                                "one is a copy of the start of the other: read as one session, the longer kept")
                continue
            renamed[tf] = own_id(tf)
            warnings.append(f"{holder.key} and {tf.key} have one name, so one session id ({stem}), and hold "
                            f"different conversations: the second is kept as session {renamed[tf]}")
    return OwnIds(renamed), warnings


def vanished(path: Path) -> str:
    # Said, not silent: a file the walk listed is gone before it was read; if it comes back, the
    # next run reads it (its cursor did not move).
    return f"{path}: removed while the run was reading the store (retention or archiving?); skipped"


def _unchanged(cursor: dict[str, Any], key: str, sig: list[int]) -> bool:
    stored = cursor.get(key)
    if not isinstance(stored, dict) or not same_signature(stored.get("sig"), sig):
        return False
    children = stored.get("children") or []
    return all(isinstance(cursor.get(k), dict) and same_signature(cursor[k].get("sig"), sig) for k in children)


# -- sessions from a parsed file --------------------------------------------------------------


def main_sessions(tf: TranscriptFile, read: TranscriptRead, sig: list[int], *, key: str | None = None,
                  own_id: str | None = None) -> list[Session]:
    """A main (or loose) file: its session, then one child session per inline sub-agent run.
    `key`: its cursor key (default its path's); `own_id`: the id it takes instead of its name
    (one file name in two folders, `own_ids`)."""
    main = read.main
    key = key or tf.key
    session_id = _session_id(main, tf.stem)
    if own_id is not None and session_id == tf.stem:
        session_id = own_id
    value = {"sig": sig, "consumed": read.consumed}
    children = []
    for thread in read.sidechains:
        if not thread.blocks or thread.is_warmup:
            continue  # nothing to keep, and no file of its own whose cursor must move
        child = _session(
            thread,
            id=f"{session_id}/{thread.key}",
            parent_id=session_id,
            cursor_key=f"{key}#{thread.key}",
            cursor_value=dict(value),
            sig=sig,
            fallback=main,
        )
        children.append(child)
    if children:
        value["children"] = [c.cursor_key for c in children]
    parent = _session(main, id=session_id, parent_id=None, cursor_key=key, cursor_value=value, sig=sig)
    return [parent, *children]


def agent_sessions(tf: TranscriptFile, read: TranscriptRead, sig: list[int], *, key: str | None = None,
                   parent_of: Callable[[str | None], str | None] = lambda sid: sid) -> list[Session]:
    """A sub-agent file: one child session of the session it ran in (the lines' `sessionId`;
    `parent_of` maps it to the id that session is stored under)."""
    thread = read.main
    parent = parent_of(thread.session_ids.most_common(1)[0][0] if thread.session_ids else tf.session_dir)
    session = _session(
        thread,
        id=f"{parent}/{tf.stem}" if parent else tf.stem,
        parent_id=parent,
        cursor_key=key or tf.key,
        cursor_value={"sig": sig, "consumed": read.consumed},
        sig=sig,
    )
    if session.blocks and session.title is None:
        session.title = _meta_title(tf.meta_path)
    return [session]


def _session(thread: Thread, *, id: str, parent_id: str | None, cursor_key: str, cursor_value: dict,
             sig: list[int], fallback: Thread | None = None) -> Session:
    # A sub-agent's "Warmup" run carries no work: it is yielded empty, only to move the cursor.
    blocks = [] if parent_id is not None and thread.is_warmup else thread.blocks
    ended_at = thread.ended_at
    if ended_at is None:  # nothing dated (an empty or metadata-only file): its last write
        ended_at = datetime.fromtimestamp(sig[1] / 1e9, tz=timezone.utc)
    return Session(
        id=id,
        agent=AGENT,
        blocks=annotate(list(blocks)),
        cursor_key=cursor_key,
        cursor_value=cursor_value,
        cwd=thread.cwd or (fallback.cwd if fallback else None),
        git_branch=thread.git_branch or (fallback.git_branch if fallback else None),
        started_at=thread.started_at,
        ended_at=ended_at,
        parent_id=parent_id,
        model=thread.model,
        title=thread.title(),
        warnings=list(thread.warnings),
    )


def _session_id(thread: Thread, stem: str) -> str:
    """The file name when the lines agree (the normal case); else, for a loose file, the id the
    lines carry (the last one a conversation line used); else the file name."""
    if stem in thread.session_ids:
        return stem
    if thread.last_session_id:
        return thread.last_session_id
    if thread.session_ids:
        return thread.session_ids.most_common(1)[0][0]
    return stem


def _meta_title(path: Path) -> str | None:
    """2.1.x writes `agent-<id>.meta.json` = {"agentType", "description", ...} beside the file."""
    try:
        meta = read_json(json_text(path.read_bytes()))
    except (OSError, ValueError):
        return None
    if not isinstance(meta, dict):
        return None
    description = meta.get("description")
    agent_type = meta.get("agentType")
    parts = [p.strip() for p in (agent_type, description) if isinstance(p, str) and p.strip()]
    return ": ".join(parts) or None


def build_connector(options: dict[str, Any] | None, context: ConnectorContext,
                    default: Callable[[], Path] = default_root) -> ClaudeConnector:
    opts = read_options(ClaudeOptions, options, "claude connector")
    return ClaudeConnector(opts.path if opts.path is not None else default(), context)


def discover() -> list[dict[str, Any]]:
    """This computer's Claude Code store, where Claude Code's own settings put it."""
    root = default_root()
    return [{"path": str(root)}] if root.is_dir() else []
