"""Read-only connections to the library for the server's worker threads.

The SDK runs each (sync) tool call on a worker thread. Two ways to give it a connection:

- "thread" (the default): one read-only connection per worker thread, kept for the thread's
  life. Its page cache and parsed schema stay warm between calls. SQLite in WAL mode lets it see
  every commit made since its last statement, so a connector writing meanwhile is no problem.
- "request": a fresh read-only connection per call, closed after it. Nothing is shared or kept,
  at the cost of an open (~0.1 ms) and a cold page cache on every call.

benchmarks/load/ compares them under load. Either way the file is opened read-only: no request
can write, whatever the code above it does.

At most `readers` calls read at once (default: one per CPU core); the others wait their turn
before they start. A search is CPU-bound work inside SQLite: forty searches sharing two cores
all finish late, where one per core finish in turn. (Its budget counts SQLite's work, not the
clock, so either way the answers are the same: jezero.query.common.Budget.) Waiting in line is
the honest way to be busy.
"""

from __future__ import annotations

import os
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Literal

import apsw

from jezero.store import open_readonly

ConnectionMode = Literal["thread", "request"]

def default_readers() -> int:
    return max(2, os.cpu_count() or 2)


class Library:
    def __init__(self, path: str | os.PathLike, *, mode: ConnectionMode = "thread", readers: int | None = None,
                 opener=None):
        if mode not in ("thread", "request"):
            raise ValueError(f"connection mode must be 'thread' or 'request', not {mode!r}")
        self.path = Path(path)
        # How a reader is opened: the SQLite file read-only, or another backend's
        # (jezero.store.backends.reader_opener: a server keeps no state of its own beyond this).
        self.opener = opener or (lambda: open_readonly(self.path))
        self.mode = mode
        self.readers = readers or default_readers()
        self._turns = threading.BoundedSemaphore(self.readers)
        self._local = threading.local()

    @classmethod
    def for_config(cls, config, **kwargs) -> "Library":
        """The configured library, whichever backend holds it."""
        from jezero.store import backends

        return cls(config.library_path(), opener=backends.reader_opener(config), **kwargs)

    @contextmanager
    def reader(self) -> Iterator[apsw.Connection]:
        """A read-only connection for the current call, once one of the `readers` turns is free.
        Raises StoreError if there is no library."""
        with self._turns:
            with self._connection() as conn:
                yield conn

    @contextmanager
    def _connection(self) -> Iterator[apsw.Connection]:
        if self.mode == "request":
            conn = self.opener()
            try:
                yield conn
            finally:
                conn.close()
            return
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self.opener()
            self._local.conn = conn
        try:
            yield conn
        finally:
            # A statement left unfinished would hold a read transaction open: the connection would
            # keep answering from an old snapshot and block checkpoints. Start over instead.
            if conn.in_transaction:
                self.forget()

    def forget(self) -> None:
        """Close this thread's kept connection (the next call opens a new one)."""
        conn = getattr(self._local, "conn", None)
        self._local.conn = None
        if conn is not None:
            try:
                conn.close(True)
            except apsw.Error:
                pass
