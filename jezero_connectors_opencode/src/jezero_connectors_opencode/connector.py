"""The `opencode` connector: options, the stores in an OpenCode data folder, and the cursor.

An OpenCode data folder (`$XDG_DATA_HOME/opencode`, else `~/.local/share/opencode`) holds the
SQLite store `opencode.db` (or `opencode-<channel>.db` for other release channels; `$OPENCODE_DB`
names another) and, from before 1.2 or left by the upgrade, the JSON files under `storage/`. A
session found in both is read from the database.

Cursor: one entry per session, keyed by its id, valued `{"fp": ...}`: from the database the
session's `time_updated`, the count and newest change of its messages and the count of its parts, from JSON
files a hash of their names, sizes and times and one of their signatures'
checks (`JsonStore.fingerprint`). A session is read again only when that changes."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterator

import apsw

from jezero.plugin import ConnectorContext, FolderPath, Options, Session, expand, read_options

from . import reader
from .database import Database
from .jsonfiles import JsonStore


class OpenCodeOptions(Options):
    """An OpenCode data folder, or one of its `.db` files; default `$XDG_DATA_HOME/opencode`, else
    `~/.local/share/opencode` (and `$OPENCODE_DB` when that names another database)."""

    path: FolderPath | None = None


def default_data_dir() -> Path:
    xdg = os.environ.get("XDG_DATA_HOME", "").strip()
    return (expand(xdg) if xdg else Path.home() / ".local" / "share") / "opencode"


def build(options: dict[str, Any] | None, context: ConnectorContext) -> "OpenCodeConnector":
    opts = read_options(OpenCodeOptions, options, "opencode")
    if opts.path is not None:
        return OpenCodeConnector(opts.path, context)
    return OpenCodeConnector(default_data_dir(), context, extra_db=os.environ.get("OPENCODE_DB", "").strip() or None)


def databases(folder: Path, extra: str | None = None) -> list[Path]:
    """The SQLite stores of a data folder: `opencode.db` first, then the other channels'."""
    found = []
    if extra:
        named = Path(os.path.expanduser(extra))
        found.append(named if named.is_absolute() else folder / named)
    found.append(folder / "opencode.db")
    try:
        found += sorted(p for p in folder.glob("opencode-*.db") if p.is_file())
    except OSError:
        pass
    return [p for p in dict.fromkeys(found) if p.is_file()]


def discover() -> list[dict[str, Any]]:
    """The OpenCode data folder of this computer, when it holds a store."""
    folder = default_data_dir()
    if databases(folder, os.environ.get("OPENCODE_DB", "").strip() or None) or (folder / "storage" / "session").is_dir():
        return [{"path": str(folder)}]
    return []


class OpenCodeConnector:
    agent = reader.AGENT

    def __init__(self, path: Path, context: ConnectorContext, extra_db: str | None = None):
        self.path = path
        self.context = context
        self.extra_db = extra_db

    def read(self, cursor: dict[str, Any]) -> Iterator[Session]:
        if self.path.is_file():
            dbs, storage = [self.path], None
        elif self.path.is_dir():
            dbs, storage = databases(self.path, self.extra_db), self.path / "storage"
        else:
            self.context.warn(f"opencode: {self.path}: no such folder or file")
            return
        seen: set[str] = set()
        for db in dbs:
            yield from self._database(db, cursor, seen)
        if storage is not None and (storage / "session").is_dir():
            yield from self._json(JsonStore(storage, self.context.warn), cursor, seen)
        if not dbs and (storage is None or not (storage / "session").is_dir()):
            self.context.warn(f"opencode: {self.path}: no OpenCode store here (no opencode.db, no storage/session)")

    def _database(self, path: Path, cursor: dict[str, Any], seen: set[str]) -> Iterator[Session]:
        sessions: list[Session] = []
        try:
            with Database(path, self.context.warn) as db:
                for sid, (info, fp) in db.sessions().items():
                    if sid in seen:
                        continue
                    seen.add(sid)
                    value = {"fp": fp}
                    if cursor.get(sid) == value:
                        continue
                    raw = db.load(info)
                    try:
                        sessions.append(reader.session(raw, cursor_key=sid, cursor_value=value))
                    except Exception as e:  # a reader bug must not stop the other sessions
                        self.context.warn(f"opencode: {path}: session {sid}: cannot parse: {type(e).__name__}: {e}")
                unread = db.unread_rows()
                if unread:
                    self.context.warn(f"opencode: {path}: {unread} rows in table session_message, a format this connector does not read yet")
        except apsw.Error as e:
            # Collected sessions are still yielded: they were read in one consistent transaction.
            self.context.warn(f"opencode: {path}: cannot read the database: {type(e).__name__}: {e}")
        yield from sessions

    def _json(self, store: JsonStore, cursor: dict[str, Any], seen: set[str]) -> Iterator[Session]:
        for sid, path in store.sessions().items():
            if sid in seen:
                continue
            seen.add(sid)
            value = store.fingerprint(sid, path)
            if store.unchanged(cursor.get(sid), value):
                continue
            try:
                raw = store.load(sid, path)
                if raw is not None:
                    yield reader.session(raw, cursor_key=sid, cursor_value=value)
            except Exception as e:  # a reader bug must not stop the other sessions
                self.context.warn(f"opencode: {path}: cannot parse: {type(e).__name__}: {e}")
