"""The `gemini` connector: options, the walk over a Gemini folder, and the cursor.

Cursor: one entry per recording, keyed by its file name without the suffix (under the parent's
id for a sub-agent chat), so the entry survives Gemini renaming a hash folder to a slug or
migrating a `.json` into a `.jsonl`. Value: `{"sig": [size, mtime_ns, check], "bytes": n, "sha256":
hex}`, the complete lines read and their hash: a file touched, or grown only by a line still
being written, is not read again."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path
from typing import Any, Iterator

from jezero.plugin import (ConnectorContext, FolderPath, Options, Session, file_signature, longer_copy, read_from, json_text, read_json,
                           read_jsonl, read_options, same_signature)

from . import reader, store


class GeminiOptions(Options):
    """A Gemini folder (the one holding `tmp/`) or the home that holds `.gemini/`; default
    `$GEMINI_CLI_HOME/.gemini` if set, else `~/.gemini`."""

    path: FolderPath | None = None


def build(options: dict[str, Any] | None, context: ConnectorContext) -> "GeminiConnector":
    opts = read_options(GeminiOptions, options, "gemini")
    return GeminiConnector(opts.path if opts.path is not None else store.default_root(), context)


class GeminiConnector:
    agent = reader.AGENT

    def __init__(self, path: Path, context: ConnectorContext):
        self.path = path
        self.context = context

    @property
    def root(self) -> Path:
        # The Gemini folder itself, or a home that holds one.
        return self.path / ".gemini" if not (self.path / "tmp").is_dir() and (self.path / ".gemini" / "tmp").is_dir() else self.path

    def read(self, cursor: dict[str, Any]) -> Iterator[Session]:
        root = self.root
        if not (root / "tmp").is_dir():
            self.context.warn(f"gemini: {root}: no Gemini CLI chats here (no tmp/ folder)")
            return
        known = store.registry(root)
        chats = store.walk(root, self.context.warn)
        keyed = self._keys(chats, cursor)
        # Main chats kept apart (one name in two project folders), by folder and the 8 characters
        # of the session id their name ends with: a sub-agent chat (`chats/<parent id>/...`) in
        # that folder ran under that copy, stored as `<parent id>@<folder>`. Before, it pointed at
        # the plain parent id: the other folder's conversation.
        apart = {(c.project.name, c.key[-8:]) for c, k in keyed if c.parent_id is None and k is not None and k != c.key}
        for chat, key in keyed:
            if key is None:
                continue
            session = self._read(chat, cursor.get(key), known, root, key)
            if session is not None:
                if chat.parent_id is not None and (chat.project.name, chat.parent_id[:8]) in apart:
                    session.parent_id = f"{chat.parent_id}{OWN_KEY}{chat.project.name}"
                yield session

    def _keys(self, chats: list[store.ChatFile], cursor: dict[str, Any]) -> list[tuple[store.ChatFile, str | None]]:
        """Each chat with its cursor key: its own (`ChatFile.key`), or, for one of a name found in
        two project folders (stores copied together, a hash folder beside its slug) that holds
        another conversation, `<key>@<project folder>` (its session `<id>@<project folder>`), once
        and for good; None for a copy that is only the start of another (the longer is read).
        The plain key stays with the file the cursor's entry was read from (its bytes' hash),
        else the first in the walk: what the library holds under it is never replaced by the
        other's text. Before, the second file was never read, silently."""
        groups: dict[str, list[store.ChatFile]] = {}
        for chat in chats:
            groups.setdefault(chat.key, []).append(chat)
        keys: dict[store.ChatFile, str | None] = {}
        for key, group in groups.items():
            rest = []
            for chat in group:
                own = f"{key}{OWN_KEY}{chat.project.name}"
                if isinstance(cursor.get(own), dict):  # kept apart before: for good
                    keys[chat] = own
                else:
                    rest.append(chat)
            if len(rest) < 2:
                keys.update((c, key) for c in rest)
                continue
            # Copies of one chat taken at two moments: the longest holds them all.
            longest = max(rest, key=_size)
            copies = [c for c in rest if c is not longest and longer_copy(longest.path, c.path) is longest.path]
            for c in copies:
                keys[c] = None
                self.context.warn(f"gemini: {c.path} is the start of {longest.path} (one chat copied twice): "
                                  "the longer is read")
            rest = [c for c in rest if c not in copies]
            holder = next((c for c in rest if read_from(cursor.get(key), c.path)), rest[0])
            for c in rest:
                if c is holder:
                    keys[c] = key
                else:
                    keys[c] = f"{key}{OWN_KEY}{c.project.name}"
                    self.context.warn(f"gemini: {holder.path} and {c.path} have one name and hold different "
                                      f"conversations: the second is kept as session <its id>{OWN_KEY}{c.project.name}")
        return [(c, keys.get(c)) for c in chats]

    def _read(self, chat: store.ChatFile, state: Any, known: dict[str, str], root: Path,
              key: str | None = None) -> Session | None:
        key = key or chat.key
        try:
            sig = file_signature(chat.path)
            if isinstance(state, dict) and same_signature(state.get("sig"), sig):
                return None
            data = chat.path.read_bytes()
        except FileNotFoundError:
            self.context.warn(f"gemini: {chat.path}: vanished while being read, skipped")
            return None
        except OSError as e:
            self.context.warn(f"gemini: {chat.path}: cannot read: {e.strerror or e}")
            return None
        label = str(chat.path)
        if chat.document:
            consumed = len(data)
            try:
                doc = read_json(json_text(data))
            except ValueError:
                self.context.warn(f"gemini: {chat.path}: not valid JSON (still being written?), skipped")
                return None
            if not isinstance(doc, dict):
                self.context.warn(f"gemini: {chat.path}: not a Gemini chat recording, skipped")
                return None
        else:
            consumed = data.rfind(b"\n") + 1
            if consumed == 0:
                return None  # empty, or its first line is still being written
        digest = hashlib.sha256(data[:consumed]).hexdigest()
        if isinstance(state, dict) and state.get("bytes") == consumed and state.get("sha256") == digest:
            return None
        value = {"sig": sig, "bytes": consumed, "sha256": digest}
        try:
            if chat.document:
                replayed = reader.replay_document(label, doc)
            else:
                replayed = reader.replay_jsonl(label, read_jsonl(chat.path, stream=io.BytesIO(data)))
            session = reader.session(
                replayed,
                fallback_id=chat.key.rsplit("/", 1)[-1],
                parent_id=chat.parent_id,
                project_roots=store.project_roots(root, chat.project, known),
                known_paths=list(known),
                cursor_key=key,
                cursor_value=value,
            )
            if key != chat.key:  # one name in two project folders: this one has an id of its own
                session.id = f"{session.id}{OWN_KEY}{chat.project.name}"
            return session
        except Exception as e:  # a reader bug must not stop the other files
            self.context.warn(f"gemini: {chat.path}: cannot parse: {type(e).__name__}: {e}")
            return None


OWN_KEY = "@"


def _size(chat: store.ChatFile) -> int:
    try:
        return chat.path.stat().st_size
    except OSError:
        return -1


def discover() -> list[dict[str, Any]]:
    """The Gemini CLI folder of this computer, when it holds chats."""
    root = store.default_root()
    return [{"path": str(root)}] if (root / "tmp").is_dir() else []
