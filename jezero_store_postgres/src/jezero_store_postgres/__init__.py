"""Jezero store backend `postgres`: the library on a PostgreSQL server.

    [storage]
    backend = "postgres"
    url_env = "JEZERO_DATABASE_URL"          # the variable holding the connection string
    replica_url_env = "JEZERO_REPLICA_URL"   # optional: readers (search, serve) use a read replica

Loaded by jezero.store.backends through the entry point group `jezero.store_backends`; the core
never imports psycopg. The writer (`open_writer`) is jezero.store.Store's methods over the same
tables (store.py); readers (`open_reader`) are read-only connections that the query layer reads
as it reads SQLite (db.py), with this backend's ranking for the candidate pool (search.py).
`run_lock` is a session-level advisory lock: one `jezero run` across every machine.
"""

from __future__ import annotations

import os
from contextlib import contextmanager

from jezero.store import StoreError
from jezero.store.backends import RunLocked

NAME = "postgres"
# pg_try_advisory_lock key for `jezero run` ("jezerorn" as eight bytes).
RUN_LOCK = int.from_bytes(b"jezerorn", "big") & 0x7FFF_FFFF_FFFF_FFFF


def url(config, *, replica: bool = False) -> str:
    """The connection string from the environment variable the config names (a replica's for
    readers when one is named and set). StoreError when it is not set."""
    storage = config.storage
    if replica and storage.replica_url_env and _env(config, storage.replica_url_env):
        return _env(config, storage.replica_url_env)
    if not storage.url_env:
        raise StoreError('[storage] backend = "postgres" needs url_env: the name of the environment variable '
                         'holding the connection string, e.g. url_env = "JEZERO_DATABASE_URL"')
    value = _env(config, storage.url_env)
    if not value:
        raise StoreError(f"[storage] url_env names {storage.url_env}, which is not set: set it to the library's "
                         "connection string, e.g. postgresql://jezero@db.example/jezero")
    return value


def _env(config, name: str) -> str | None:
    from jezero.config import lookup_env

    return lookup_env(name) or os.environ.get(name) or None


def where(config) -> str:
    """The library as messages name it: the variable, never the string (it may hold a password)."""
    return f"postgres (${config.storage.url_env})"


def open_writer(config):
    from jezero_store_postgres.db import ConnectionFailed
    from jezero_store_postgres.store import PostgresStore

    try:
        return PostgresStore(url(config), config.storage.tokenizer, where=where(config))
    except ConnectionFailed as e:
        raise StoreError(str(e)) from None


def open_reader(config):
    """A read-only connection for the query layer, ranking with this backend's engine."""
    return connect_reader(url(config, replica=True))


def connect_reader(dsn: str):
    from jezero_store_postgres.db import Connection, ConnectionFailed
    from jezero_store_postgres.schema import current_version
    from jezero_store_postgres.search import Ranker

    try:
        conn = Connection(dsn, read_only=True, application_name="jezero reader")
    except ConnectionFailed as e:
        raise StoreError(str(e)) from None
    version = current_version(conn)
    if version == 0:
        conn.close()
        raise StoreError("the PostgreSQL library is empty (run `jezero init` or `jezero run` first)")
    conn.ranker = Ranker(conn)  # refuses a library older than the term counts (schema._v3)
    return conn


@contextmanager
def run_lock(config):
    """Hold the library's run lock for the duration: a session-level advisory lock on its own
    connection, so a second `jezero run` anywhere is refused at once, and a run that dies (its
    connection closed) releases it."""
    from jezero_store_postgres.db import Connection, ConnectionFailed

    try:
        conn = Connection(url(config), application_name="jezero run lock")
    except ConnectionFailed as e:
        raise StoreError(str(e)) from None
    try:
        got = conn.execute("SELECT pg_try_advisory_lock(?)", (RUN_LOCK,)).fetchone()[0]
        if not got:
            holder = conn.execute(
                "SELECT a.client_addr, a.backend_start FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
                "WHERE l.locktype = 'advisory' AND l.granted AND (l.classid::bigint << 32 | l.objid::bigint) = ?",
                (RUN_LOCK,)).fetchone()
            since = f" (held since {holder[1]:%Y-%m-%d %H:%M:%S %Z})" if holder else ""
            raise RunLocked(f"another `jezero run` holds the library's run lock in PostgreSQL{since}")
        yield
    finally:
        conn.close()  # closing the session releases the lock
