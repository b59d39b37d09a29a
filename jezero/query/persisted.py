"""The planner's exact term counts, kept in a small SQLite file beside the library, shared by every
process that reads the library: a term counted by one process (one of `jezero serve --workers`'
processes, a CLI search) is not counted again by another, and a new process starts warm.

The counts belong to one index state (stats.py: FTS5's structure record identifies it), so each
count is stored under the state it was counted in, and a process reads only its own state's:
after any write the stored counts are of another state and are not used. The file keeps the
counts of the last STATES_KEPT states it was written in and forgets older ones. A count is
written when it is made (one short transaction; a write that would wait on another process's is
skipped, and that count is just not shared), and looked up there before a process counts a term
itself. A process that cannot open or write the file (a read-only folder) stays cold, as if there
were no file. Nothing in it changes an answer: counts only decide how a query runs, and they are
exact.

(Until 2026-12-06 the counts were a JSON file, `<library>.term-counts.json`, written whole every
5 s by each process: the two processes of a server each counted every term, and rewriting the
whole file was ~4% of a process's first searches. The old file is removed when the new one is
made.)
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from pathlib import Path

import apsw

log = logging.getLogger(__name__)

SUFFIX = ".term-counts.sqlite3"
OLD_SUFFIX = ".term-counts.json"
STATES_KEPT = 4  # as stats.CACHED_STATES: the states a process remembers
# A write waits at most this long for another process's (each holds the lock for one insert).
BUSY_MS = 20

_SCHEMA = """
CREATE TABLE IF NOT EXISTS states(id INTEGER PRIMARY KEY, state TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS counts(state INTEGER NOT NULL, term TEXT NOT NULL, n INTEGER NOT NULL,
                                  PRIMARY KEY(state, term)) WITHOUT ROWID;
"""


def path_for(library: str) -> Path:
    return Path(f"{library}{SUFFIX}")


def state_id(averages: bytes, structure: bytes) -> str:
    return hashlib.sha1(bytes(averages) + b"\0" + bytes(structure)).hexdigest()


def term_key(key: tuple) -> str:
    return json.dumps(list(key), ensure_ascii=False, separators=(",", ":"))


class _File:
    """One process's connection to one library's counts file (used under its lock)."""

    def __init__(self, library: str):
        self.lock = threading.Lock()
        self.pid = os.getpid()
        self.states: dict[str, int] = {}  # state -> its row in `states`, once written or read
        path = path_for(library)
        if not path.exists():  # the words searched for: readable by the library's owner only, as the library
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))
        self.conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE)
        try:
            self.conn.set_busy_timeout(BUSY_MS)
            if self.conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                self.conn.execute("PRAGMA journal_mode=WAL")
            # a lost count is counted again: no fsync on the search path
            self.conn.execute("PRAGMA synchronous=OFF")
            if self.conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'counts'").fetchone()[0] == 0:
                self.conn.execute(_SCHEMA)
                Path(f"{library}{OLD_SUFFIX}").unlink(missing_ok=True)
        except BaseException:
            self.conn.close()
            raise

    def state_row(self, state: str, create: bool) -> int | None:
        row = self.states.get(state)
        if row is not None:
            return row
        found = self.conn.execute("SELECT id FROM states WHERE state = ?", (state,)).fetchone()
        if found is None:
            if not create:
                return None
            with self.conn:
                self.conn.execute("INSERT OR IGNORE INTO states(state) VALUES(?)", (state,))
                row = self.conn.execute("SELECT id FROM states WHERE state = ?", (state,)).fetchone()[0]
                # the older states' counts apply to no state a reader will see again
                old = [r[0] for r in self.conn.execute(
                    "SELECT id FROM states WHERE id <= ? ORDER BY id DESC LIMIT -1 OFFSET ?", (row, STATES_KEPT))]
                for stale in old:
                    self.conn.execute("DELETE FROM counts WHERE state = ?", (stale,))
                    self.conn.execute("DELETE FROM states WHERE id = ?", (stale,))
        else:
            row = found[0]
        self.states[state] = row
        return row


_files: dict[str, _File | None] = {}  # library -> its file (None: it could not be opened)
_files_lock = threading.Lock()


def _file(library: str) -> _File | None:
    with _files_lock:
        f = _files.get(library, False)
        if f is not False and (f is None or f.pid == os.getpid()):
            return f
        try:
            f = _File(library)  # (a forked child opens its own: a connection is not shared across fork)
        except (apsw.NotADBError, apsw.CorruptError) as e:
            f = _made_again(library, e)
        except (apsw.Error, OSError) as e:
            log.debug("term counts not kept beside %s: %s", library, e)
            f = None
        _files[library] = f
        return f


def _made_again(library: str, e: apsw.Error) -> _File | None:
    """A counts file that is not a database (damaged, or another file under its name) is removed
    and made again: it holds nothing the library does not, and kept as it was, every process would
    count every term itself for as long as the library lives."""
    path = path_for(library)
    log.warning("term counts file %s is damaged (%s): made again", path, e)
    try:
        for name in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
            name.unlink(missing_ok=True)
        return _File(library)
    except (apsw.Error, OSError) as again:
        log.debug("term counts not kept beside %s: %s", library, again)
        return None


def load(library: str, state: str) -> dict[tuple, int]:
    """The counts stored for this index state, or nothing."""
    f = _file(library)
    if f is None:
        return {}
    try:
        with f.lock:
            row = f.state_row(state, create=False)
            if row is None:
                return {}
            return {tuple(json.loads(k)): int(n) for k, n in f.conn.execute(
                "SELECT term, n FROM counts WHERE state = ?", (row,))}
    except (apsw.Error, ValueError, TypeError) as e:
        log.debug("term counts beside %s not read: %s", library, e)
        return {}


def lookup(library: str, state: str, key: tuple) -> int | None:
    """One term's count in this state, if a process stored it."""
    f = _file(library)
    if f is None:
        return None
    try:
        with f.lock:
            row = f.state_row(state, create=False)
            if row is None:
                return None
            found = f.conn.execute("SELECT n FROM counts WHERE state = ? AND term = ?", (row, term_key(key))).fetchone()
    except apsw.Error as e:
        log.debug("term count beside %s not read: %s", library, e)
        return None
    return None if found is None else int(found[0])


def record(library: str, state: str, key: tuple, n: int) -> None:
    """Store one term's count in this state (skipped if the file is busy or cannot be written)."""
    f = _file(library)
    if f is None:
        return
    try:
        with f.lock:
            row = f.state_row(state, create=True)
            f.conn.execute("INSERT OR IGNORE INTO counts(state, term, n) VALUES(?, ?, ?)", (row, term_key(key), n))
    except apsw.Error as e:
        log.debug("term count not kept beside %s: %s", library, e)


def forget() -> None:
    """Close every counts file this process opened (tests; a library moved)."""
    with _files_lock:
        for f in _files.values():
            if f is not None and f.pid == os.getpid():
                f.conn.close()
        _files.clear()
