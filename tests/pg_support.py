"""A real PostgreSQL server for the tests, started once per test session and stopped at its end
(jezero_store_postgres.local: initdb into a temporary folder, as an unprivileged user when the
tests run as root). Tests that need it skip, with the reason, where none can be started: no
jezero-store-postgres installed (the core-alone run), or no server binaries on the machine."""

from __future__ import annotations

import itertools
import threading

import pytest

_server = None
_failure: str | None = None
_lock = threading.Lock()
_names = itertools.count(1)


def server():
    """The session's server, started on first use; pytest.skip with the reason when there is none."""
    global _server, _failure
    with _lock:
        if _server is None and _failure is None:
            try:
                from jezero_store_postgres.local import LocalServer, NoServer
            except ImportError:
                _failure = "jezero-store-postgres is not installed (core-only run)"
            else:
                try:
                    _server = LocalServer().start()
                except NoServer as e:
                    _failure = f"no PostgreSQL server could be started: {e}"
    if _failure is not None:
        pytest.skip(_failure)
    return _server


def fresh_database() -> str:
    """The connection string of a new, empty database on the session's server."""
    return server().create_database(f"jz{next(_names)}")


def stop() -> None:
    global _server
    with _lock:
        if _server is not None:
            _server.stop()
            _server = None
