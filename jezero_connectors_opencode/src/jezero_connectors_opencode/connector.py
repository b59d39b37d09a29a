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
from contextlib import ExitStack
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


OWN_KEY = "@"


def own_id(sid: str, db: Path) -> str:
    """The id (and cursor key) of a session kept apart: one id in two databases, another conversation."""
    return f"{sid}{OWN_KEY}{db.stem}"


def _unchanged(stored: object, fp: list, copies: list) -> bool:
    return isinstance(stored, dict) and stored.get("fp") == fp and (stored.get("copies") or []) == copies


def _start_of(a: list, b: list) -> bool:
    """Whether session shape `a` (`Database.shape`) is the start of `b`, or the same: its
    messages are b's first ones, the last with the first of b's parts."""
    if len(a) > len(b):
        return False
    if not a:
        return True
    n = len(a)
    return a[: n - 1] == b[: n - 1] and a[-1][0] == b[n - 1][0] and b[n - 1][1][: len(a[-1][1])] == a[-1][1]


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
        yield from self._databases(dbs, cursor, seen)
        if storage is not None and (storage / "session").is_dir():
            yield from self._json(JsonStore(storage, self.context.warn), cursor, seen)
        if not dbs and (storage is None or not (storage / "session").is_dir()):
            self.context.warn(f"opencode: {self.path}: no OpenCode store here (no opencode.db, no storage/session)")

    def _databases(self, dbs: list[Path], cursor: dict[str, Any], seen: set[str]) -> Iterator[Session]:
        sessions: list[Session] = []
        with ExitStack() as stack:
            opened: list[tuple[Path, Database, dict]] = []
            for path in dbs:
                try:
                    db = stack.enter_context(Database(path, self.context.warn))
                    opened.append((path, db, db.sessions()))
                except apsw.Error as e:
                    self.context.warn(f"opencode: {path}: cannot read the database: {type(e).__name__}: {e}")
            plan, ids = self._plan(opened, cursor)
            for path, db, found in opened:
                seen.update(found)
                try:
                    for sid, (info, _fp) in found.items():
                        if plan.get((path, sid)) is None:
                            continue
                        key, new_id, value = plan[(path, sid)]
                        raw = db.load(info)
                        try:
                            session = reader.session(raw, cursor_key=key, cursor_value=value)
                        except Exception as e:  # a reader bug must not stop the other sessions
                            self.context.warn(f"opencode: {path}: session {sid}: cannot parse: {type(e).__name__}: {e}")
                            continue
                        session.id = new_id
                        if session.parent_id is not None:  # under the id its parent is stored under in this database
                            session.parent_id = ids.get((path, session.parent_id), session.parent_id)
                        sessions.append(session)
                    unread = db.unread_rows()
                    if unread:
                        self.context.warn(f"opencode: {path}: {unread} rows in table session_message, a format this connector does not read yet")
                except apsw.Error as e:
                    # Collected sessions are still yielded: they were read in one consistent transaction.
                    self.context.warn(f"opencode: {path}: cannot read the database: {type(e).__name__}: {e}")
        yield from sessions

    def _plan(self, opened: list[tuple[Path, Database, dict]], cursor: dict[str, Any]
              ) -> tuple[dict[tuple[Path, str], tuple[str, str, dict] | None], dict[tuple[Path, str], str]]:
        """Which database's copy of each session id is read, under which cursor key and id: for
        `(database, id)`, `(key, id, cursor value)` or None (not read: unchanged, or a copy of the
        start of another database's); and the id each is stored under.

        One id in two databases (`opencode.db` and `opencode-<channel>.db`, a copied data
        folder): before, only the first database's was read and the other conversation was lost.
        Now a copy that is the start of the other (the same message and part ids, fewer) is left
        for the longer; a different conversation is kept as session `<id>@<database stem>`
        (cursor key the same), for good. The plain id stays with the database its cursor entry
        was read from (`"from"`), else the first: what a library holds under it is not
        replaced by the other's text."""
        groups: dict[str, list[tuple[Path, Database, list]]] = {}
        for path, db, found in opened:
            for sid, (_info, fp) in found.items():
                groups.setdefault(sid, []).append((path, db, fp))
        plan: dict[tuple[Path, str], tuple[str, str, dict] | None] = {}
        ids: dict[tuple[Path, str], str] = {}
        for sid, group in groups.items():
            rest = []
            for path, db, fp in group:
                own = own_id(sid, path)
                if isinstance(cursor.get(own), dict):  # kept apart before: for good
                    ids[(path, sid)] = own
                    plan[(path, sid)] = None if cursor[own] == {"fp": fp} else (own, own, {"fp": fp})
                else:
                    rest.append((path, db, fp))
            for path, _db, _fp in rest:
                ids[(path, sid)] = sid
            stored = cursor.get(sid)
            if len(rest) == 1:
                path, _db, fp = rest[0]
                plan[(path, sid)] = None if _unchanged(stored, fp, []) else (sid, sid, {"fp": fp})
                continue
            if not rest:
                continue
            names = [path.name for path, _db, _fp in rest]
            before = names.index(stored["from"]) if isinstance(stored, dict) and stored.get("from") in names else None
            if before is not None and _unchanged(stored, rest[before][2], [fp for i, (_p, _d, fp) in enumerate(rest) if i != before]):
                continue  # nothing changed since it was read
            try:
                shapes = [db.shape(sid) for _path, db, _fp in rest]
            except apsw.Error as e:  # read as before: the first database's
                self.context.warn(f"opencode: session {sid}: cannot compare its copies: {type(e).__name__}: {e}")
                plan.update(((path, sid), None) for path, _db, _fp in rest)
                plan[(rest[0][0], sid)] = None if _unchanged(stored, rest[0][2], []) else (sid, sid, {"fp": rest[0][2]})
                continue
            longest = max(range(len(rest)), key=lambda i: (len(shapes[i]), sum(len(p) for _m, p in shapes[i]), -i))
            copies = [i for i in range(len(rest)) if i != longest and _start_of(shapes[i], shapes[longest])]
            for i in copies:
                plan[(rest[i][0], sid)] = None
                self.context.warn(f"opencode: session {sid} in {rest[i][0]} is the start of the one in {rest[longest][0]} "
                                  "(a copied database): the longer is read")
            keep = [i for i in range(len(rest)) if i not in copies]
            holder = before if before in keep else next((i for i in keep if isinstance(stored, dict) and stored.get("fp") == rest[i][2]), keep[0])
            for i in keep:
                path, _db, fp = rest[i]
                if i == holder:
                    others = [rest[j][2] for j in copies]
                    value = {"fp": fp, "from": path.name, **({"copies": others} if others else {})}
                    plan[(path, sid)] = None if _unchanged(stored, fp, others) and stored.get("from") in (None, path.name) else (sid, sid, value)
                else:
                    own = own_id(sid, path)
                    ids[(path, sid)] = own
                    plan[(path, sid)] = (own, own, {"fp": fp})
                    self.context.warn(f"opencode: session {sid} is in {rest[holder][0]} and {path} with different "
                                      f"conversations: the one in {path.name} is kept as session {own}")
        return plan, ids

    def _json(self, store: JsonStore, cursor: dict[str, Any], seen: set[str]) -> Iterator[Session]:
        for sid, paths in store.sessions().items():
            if sid in seen:
                continue
            seen.add(sid)
            path = store.newest(paths) if len(paths) > 1 else paths[0]
            others = [p for p in paths if p != path]
            value = store.fingerprint(sid, path, others)
            if store.unchanged(cursor.get(sid), value):
                continue
            if others:
                self.context.warn(f"opencode: session {sid} has a file in {len(paths)} project folders "
                                  f"({', '.join(p.parent.name for p in paths)}), one set of messages: one session, "
                                  f"with the newest file's title and folder ({path.parent.name})")
            try:
                raw = store.load(sid, path)
                if raw is not None:
                    yield reader.session(raw, cursor_key=sid, cursor_value=value)
            except Exception as e:  # a reader bug must not stop the other sessions
                self.context.warn(f"opencode: {path}: cannot parse: {type(e).__name__}: {e}")
