"""Warnings that runs leave, kept until an admin acknowledges them.

A warning is kept once per connector and message (a bad line names its file and line, an unknown
record type its file), with when it was first and last seen and how many runs saw it. `jezero
warnings ack` marks the ones an admin has understood; `status` (and a `health` command) report
only the others, so an acknowledged warning stops being news while a new one still is. Runs that
see an acknowledged warning again do not bring it back.

These functions take any apsw connection, read-only ones included (a library older than schema
6 simply has no warnings)."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Sequence
from typing import Any

import apsw

# A run with a damaged store can warn once per file; this many per run are kept, the rest counted.
MAX_PER_RUN = 500


def record_warnings(db: apsw.Connection, connector: str, messages: Iterable[str], now: str) -> None:
    """Remember this run's warnings (call inside the caller's transaction or alone)."""
    rows = [(connector, m, now, now) for m in dict.fromkeys(messages)][:MAX_PER_RUN]
    if not rows:
        return
    with db:
        db.executemany(
            """INSERT INTO warnings(connector, message, first_seen, last_seen) VALUES(?, ?, ?, ?)
               ON CONFLICT(connector, message) DO UPDATE SET last_seen = excluded.last_seen,
                 runs = warnings.runs + 1""",
            rows,
        )


def unacknowledged_warnings(db: apsw.Connection, connector: str | None = None, *,
                            limit: int | None = None) -> list[dict[str, Any]]:
    """The warnings no admin has acknowledged yet, newest first: id, connector, message,
    first_seen, last_seen, runs. One connector's only when `connector` is given."""
    return _select(db, connector, acknowledged=False, limit=limit)


def all_warnings(db: apsw.Connection, connector: str | None = None) -> list[dict[str, Any]]:
    """Every kept warning, acknowledged ones with `acknowledged_at` set."""
    return _select(db, connector, acknowledged=None, limit=None)


def acknowledge(db: apsw.Connection, *, ids: Sequence[int] = (), match: str | None = None,
                connector: str | None = None, everything: bool = False, now: str) -> int:
    """Acknowledge warnings that exist now: by id, by a glob over their text (`*api-request*`),
    or all of them (of one connector, if given). Returns how many were acknowledged. Warnings
    seen for the first time later are not covered: they are news."""
    if not (ids or match or everything):
        return 0
    chosen = []
    for w in unacknowledged_warnings(db, connector):
        if everything or w["id"] in ids or (match is not None and fnmatch.fnmatchcase(w["message"], match)):
            chosen.append(w["id"])
    if chosen:
        with db:
            db.executemany("UPDATE warnings SET acknowledged_at = ? WHERE id = ?", [(now, i) for i in chosen])
    return len(chosen)


def _select(db, connector, *, acknowledged: bool | None, limit: int | None) -> list[dict[str, Any]]:
    if not _has_table(db):
        return []
    where, args = [], []
    if acknowledged is False:
        where.append("acknowledged_at IS NULL")
    if connector is not None:
        where.append("connector = ?")
        args.append(connector)
    sql = ("SELECT id, connector, message, first_seen, last_seen, runs, acknowledged_at FROM warnings"
           + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY last_seen DESC, id DESC")
    if limit is not None:
        sql += " LIMIT ?"
        args.append(int(limit))
    cols = ("id", "connector", "message", "first_seen", "last_seen", "runs", "acknowledged_at")
    out = [dict(zip(cols, r)) for r in db.execute(sql, args)]
    if acknowledged is False:
        for w in out:
            del w["acknowledged_at"]
    return out


def _has_table(db) -> bool:
    return db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='warnings'").fetchone() is not None
