"""The `copilot` connector: options, the walk over a Copilot home, and the cursor.

Where sessions live: `session-state/<id>/events.jsonl` with `workspace.yaml` beside it (since
1.0.11), or `session-state/<id>.jsonl` before; the folder wins when both exist.

Cursor: one entry per session, keyed by its id, valued `{"sig": [size, mtime_ns, check], "bytes": n,
"sha256": hex}` (the complete lines read and their hash). A sub-agent run has its own entry,
`<id>#<agentId>`, with the same value; the session's entry lists them under "children", so the
file is skipped only when it and all its runs are stored."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator

from jezero.plugin import (ConnectorContext, FolderPath, Options, Session, expand, file_signature, longer_copy, not_a_file,
                           read_from, read_jsonl,
                           read_options, same_signature, title_line)

from . import reader

SESSION_STATE = "session-state"


class CopilotOptions(Options):
    """A Copilot home (the folder holding `session-state/`) or that folder itself; default
    `$COPILOT_HOME` if set, else `~/.copilot`."""

    path: FolderPath | None = None


def default_home() -> Path:
    home = os.environ.get("COPILOT_HOME", "").strip()
    return expand(home) if home else Path.home() / ".copilot"


def build(options: dict[str, Any] | None, context: ConnectorContext) -> "CopilotConnector":
    opts = read_options(CopilotOptions, options, "copilot")
    return CopilotConnector(opts.path if opts.path is not None else default_home(), context)


def discover() -> list[dict[str, Any]]:
    """The Copilot home of this computer, when it holds sessions."""
    home = default_home()
    return [{"path": str(home)}] if (home / SESSION_STATE).is_dir() else []


@dataclass(frozen=True)
class EventFile:
    path: Path
    key: str  # the session id (the folder's or the file's name)
    workspace: Path | None  # workspace.yaml beside events.jsonl
    own: bool = False  # read under an id of its own (`CopilotConnector._apart`)

    @property
    def cursor_key(self) -> str:
        return own_key(self) if self.own else self.key


def _own_suffix(ref: EventFile) -> str:
    return "@folder" if ref.workspace is not None else "@flat"


def own_key(ref: EventFile) -> str:
    """The cursor key of a session's second event log, kept apart (`CopilotConnector._apart`)."""
    return ref.key + _own_suffix(ref)


def walk(state: Path, warn: Callable[[str], None]) -> list[EventFile]:
    found: dict[str, EventFile] = {}
    try:
        entries = sorted(state.iterdir())
    except OSError as e:
        warn(f"copilot: {state}: cannot list folder: {e.strerror or e}")
        return []
    def odd(path: Path) -> None:
        kind = not_a_file(path)  # a stat: a named pipe is never opened
        if kind:
            warn(f"copilot: {path}: named like an event log but is {kind}: not read")

    flat: dict[str, EventFile] = {}
    for entry in entries:
        if entry.is_dir() and (entry / "events.jsonl").is_file():
            found[entry.name] = EventFile(entry / "events.jsonl", entry.name, entry / "workspace.yaml")
        elif entry.is_file() and entry.suffix == ".jsonl":
            flat.setdefault(entry.stem, EventFile(entry, entry.stem, None))
        elif entry.is_dir():
            odd(entry / "events.jsonl")  # (absent: a session folder not written yet, said nothing)
            if entry.suffix == ".jsonl":
                odd(entry)
        elif entry.suffix == ".jsonl":
            odd(entry)
    # A session's folder and an older flat file of the same id: both (the connector tells them
    # apart); before, the flat file was never read, without a word.
    return [*found.values(), *(ref for key, ref in flat.items() if key not in found),
            *(ref for key, ref in flat.items() if key in found)]


def workspace_fields(path: Path | None) -> dict[str, str]:
    """The top-level `key: value` scalars of `workspace.yaml` (id, cwd, branch, name, ...). A
    full YAML parser is not needed for these flat files; anything else in them is ignored."""
    if path is None:
        return {}
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    fields = {}
    for line in text.splitlines():
        if not line or line[0] in " \t#-" or ":" not in line:
            continue
        key, _, value = line.partition(":")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        if value and value not in ("|", ">", "null", "~"):
            fields[key.strip()] = value
    return fields


class CopilotConnector:
    agent = reader.AGENT

    def __init__(self, home: Path, context: ConnectorContext):
        self.home = home
        self.context = context

    def read(self, cursor: dict[str, Any]) -> Iterator[Session]:
        state = self.home / SESSION_STATE if (self.home / SESSION_STATE).is_dir() else self.home
        if not state.is_dir():
            self.context.warn(f"copilot: {self.home}: no such folder")
            return
        refs = walk(state, self.context.warn)
        for ref in self._apart(refs, cursor):
            yield from self._read(ref, cursor)

    def _apart(self, refs: list[EventFile], cursor: dict[str, Any]) -> list[EventFile]:
        """One event log per cursor key. A session's folder (`<id>/events.jsonl`) beside a flat
        `<id>.jsonl` of the same id (Copilot before 1.0.11; a store copied over another): the
        longer is read when one is the start of the other; else both, the one the cursor's entry
        was read from (else the folder) under the id, the other as session `<id>@flat` or
        `<id>@folder` (cursor key the same), once and for good. Before, the flat file was never
        read, and a folder arriving after its flat file was stored replaced what it held."""
        by_key: dict[str, list[EventFile]] = {}
        for ref in refs:
            by_key.setdefault(ref.key, []).append(ref)
        out = []
        for key, group in by_key.items():
            if len(group) == 1:
                kept = group[0]
                if isinstance(cursor.get(own_key(kept)), dict):  # kept apart before: for good
                    kept = dataclasses.replace(kept, own=True)
                out.append(kept)
                continue
            folder, flat = group[0], group[1]
            for ref in group:
                if isinstance(cursor.get(own_key(ref)), dict):
                    out.append(dataclasses.replace(ref, own=True))
                    group = [r for r in group if r is not ref]
                    out.extend(group)  # the other keeps the id
                    break
            else:
                kept = longer_copy(folder.path, flat.path)  # (equal copies: the folder's)
                if kept is not None:
                    longer, shorter = (folder, flat) if kept is folder.path else (flat, folder)
                    self.context.warn(f"copilot: {shorter.path} is the start of {longer.path} (one session copied "
                                      "twice): the longer is read")
                    out.append(longer)
                    continue
                holder = flat if read_from(cursor.get(key), flat.path) else folder
                other = flat if holder is folder else folder
                other = dataclasses.replace(other, own=True)
                self.context.warn(f"copilot: {holder.path} and {other.path} are one session id holding different "
                                  f"events: the second is kept as session <its id>{_own_suffix(other)}")
                out.extend([holder, other])
        return out

    def _read(self, ref: EventFile, cursor: dict[str, Any]) -> Iterator[Session]:
        state = cursor.get(own_key(ref) if ref.own else ref.key)
        try:
            sig = file_signature(ref.path)
            if _unchanged(cursor, state, sig):
                return
            data = ref.path.read_bytes()
        except FileNotFoundError:
            self.context.warn(f"copilot: {ref.path}: vanished while being read, skipped")
            return
        except OSError as e:
            self.context.warn(f"copilot: {ref.path}: cannot read: {e.strerror or e}")
            return
        consumed = data.rfind(b"\n") + 1
        if consumed == 0:
            return  # empty, or its first line is still being written
        digest = hashlib.sha256(data[:consumed]).hexdigest()
        if isinstance(state, dict) and state.get("bytes") == consumed and state.get("sha256") == digest and _children_stored(cursor, state):
            return
        try:
            log = reader.parse(str(ref.path), read_jsonl(ref.path, stream=io.BytesIO(data)))
            sessions = self._sessions(ref, log, {"sig": sig, "bytes": consumed, "sha256": digest})
        except Exception as e:  # a reader bug must not stop the other files
            self.context.warn(f"copilot: {ref.path}: cannot parse: {type(e).__name__}: {e}")
            return
        for s in sessions:
            if cursor.get(s.cursor_key) != s.cursor_value:
                yield s

    def _sessions(self, ref: EventFile, log: reader.EventLog, value: dict) -> list[Session]:
        meta = workspace_fields(ref.workspace)
        sid = log.session_id or meta.get("id") or ref.key
        if ref.own:
            sid += _own_suffix(ref)
        cwd = log.cwd or meta.get("cwd")
        branch = log.branch or meta.get("branch")
        fallback_end = datetime.fromtimestamp(value["sig"][1] / 1e9, tz=timezone.utc)
        children = []
        for agent_id, run in log.runs.items():
            children.append(Session(
                id=f"{sid}/{agent_id}", agent=reader.AGENT, blocks=run.blocks, cursor_key=f"{ref.cursor_key}#{agent_id}",
                cursor_value=dict(value), cwd=cwd, git_branch=branch,
                started_at=min(run.times) if run.times else None, ended_at=max(run.times) if run.times else fallback_end,
                parent_id=sid, model=reader.model_of(run) or reader.model_of(log.main),
                title=title_line(run.description) or title_line(run.first_prompt),
            ))
        main = log.main
        parent_value = dict(value, children=[c.cursor_key for c in children]) if children else value
        title = meta.get("name") or title_line(main.first_prompt)
        parent = Session(
            id=sid, agent=reader.AGENT, blocks=main.blocks, cursor_key=ref.cursor_key, cursor_value=parent_value,
            cwd=cwd, git_branch=branch,
            started_at=log.started_at or (min(main.times) if main.times else None),
            ended_at=max(main.times) if main.times else fallback_end,
            model=reader.model_of(main), title=title_line(title), warnings=list(log.warnings),
        )
        return [parent, *children]


def _children_stored(cursor: dict[str, Any], state: dict) -> bool:
    return all(cursor.get(k) == {key: v for key, v in state.items() if key != "children"} for k in state.get("children") or [])


def _unchanged(cursor: dict[str, Any], state: Any, sig: list[int]) -> bool:
    return isinstance(state, dict) and same_signature(state.get("sig"), sig) and _children_stored(cursor, state)
