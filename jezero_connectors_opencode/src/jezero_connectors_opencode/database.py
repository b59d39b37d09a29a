"""Read sessions from OpenCode's SQLite store (`opencode.db`, since 1.2), strictly read-only.

OpenCode keeps the file in WAL mode. Opening it read-only the ordinary way still creates `-wal`
and `-shm` files beside it when they are absent, so when no `-wal` file exists (OpenCode is not
running) the file is opened `immutable=1`, which creates nothing; when one exists it is opened
`mode=ro`, so what OpenCode wrote to the WAL but has not checkpointed yet is read too. Every read
of a run happens in one read transaction, so a session is seen whole or not at all.

apsw, not the standard `sqlite3`: it brings its own SQLite (3.50+, like the one OpenCode's Bun
writes with), where Python's may be older than the file's schema needs."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import apsw

from jezero.plugin import parse_time

from .reader import Message, Raw, loads

SESSION_COLUMNS = ("id", "parent_id", "directory", "title", "version", "model", "time_created", "time_updated")


class Database:
    def __init__(self, path: Path, warn: Callable[[str], None]):
        self.path = path
        self.warn = warn
        self.conn: apsw.Connection | None = None

    def __enter__(self) -> "Database":
        live = self.path.with_name(self.path.name + "-wal").exists()
        uri = self.path.resolve().as_uri() + ("?mode=ro" if live else "?immutable=1")
        self.conn = apsw.Connection(uri, flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
        self.conn.setbusytimeout(5000)
        self.conn.execute("BEGIN")
        return self

    def __exit__(self, *exc) -> None:
        if self.conn is not None:
            try:
                self.conn.execute("COMMIT")
            except apsw.Error:
                pass
            self.conn.close()
            self.conn = None

    def _columns(self, table: str) -> set[str]:
        return {row[1] for row in self.conn.execute(f"PRAGMA table_info({table})")}

    def sessions(self) -> dict[str, tuple[dict, list]]:
        """Every session: its row, and a fingerprint cheap to compare with the cursor: the
        session's `time_updated`, its messages' count and newest change, and its parts' count.
        The parts are only counted, which their session index answers without reading a row: a
        store of millions of parts is not read through on every run. A part that changes in
        place (a tool call finishing) is still seen: OpenCode then updates its message's and its
        session's `time_updated` too (in every store looked at, both follow their parts)."""
        have = self._columns("session")
        if "id" not in have:
            raise apsw.SQLError("no session table with an id column")
        cols = [f"s.{c}" if c in have else f"NULL AS {c}" for c in SESSION_COLUMNS]
        parts = ("(SELECT count(*) FROM part p WHERE p.session_id = s.id)" if "session_id" in self._columns("part") else
                 "(SELECT count(*) FROM part p JOIN message m ON p.message_id = m.id WHERE m.session_id = s.id)")
        sql = (f"SELECT {', '.join(cols)},"
               " (SELECT count(*) || ':' || coalesce(max(m.time_updated), 0) FROM message m WHERE m.session_id = s.id),"
               f" {parts} FROM session s ORDER BY s.time_created, s.id")
        out = {}
        for row in self.conn.execute(sql):
            info = dict(zip(SESSION_COLUMNS, row[: len(SESSION_COLUMNS)]))
            out[str(info["id"])] = (info, [info["time_updated"], row[-2], row[-1]])
        return out

    def load(self, info: dict) -> Raw:
        sid = info["id"]
        warnings: list[str] = []
        where = f"{self.path} session {sid}"
        messages: dict[str, Message] = {}
        latest = 0
        for mid, updated, data in self.conn.execute(
                "SELECT id, time_updated, data FROM message WHERE session_id = ? ORDER BY time_created, id", (sid,)):
            obj = loads(data, f"{where} message {mid}", warnings)
            latest = max(latest, updated or 0)
            if obj is not None:
                messages[mid] = Message({**obj, "id": mid})
        for pid, mid, updated, data in self.conn.execute(
                "SELECT p.id, p.message_id, p.time_updated, p.data FROM part p JOIN message m ON p.message_id = m.id"
                " WHERE m.session_id = ? ORDER BY p.message_id, p.id", (sid,)):
            obj = loads(data, f"{where} part {pid}", warnings)
            latest = max(latest, updated or 0)
            if obj is not None and mid in messages:
                messages[mid].parts.append({**obj, "id": pid})
        return Raw(info, list(messages.values()), warnings, parse_time(latest) if latest else None)

    def shape(self, sid: str) -> list[tuple[str, tuple[str, ...]]]:
        """A session's messages' ids in the order `load` reads them, each with its parts' ids:
        what tells a copy of a session (the start of another database's) from another
        conversation under the same id, without reading a row's data."""
        parts: dict[str, list[str]] = {}
        for pid, mid in self.conn.execute(
                "SELECT p.id, p.message_id FROM part p JOIN message m ON p.message_id = m.id"
                " WHERE m.session_id = ? ORDER BY p.message_id, p.id", (sid,)):
            parts.setdefault(mid, []).append(pid)
        return [(mid, tuple(parts.get(mid, ()))) for (mid,) in self.conn.execute(
            "SELECT id FROM message WHERE session_id = ? ORDER BY time_created, id", (sid,))]

    def unread_rows(self) -> int:
        """Rows in `session_message`, a newer message table this connector does not read yet."""
        try:
            return self.conn.execute("SELECT count(*) FROM session_message").fetchone()[0]
        except apsw.SQLError:
            return 0
