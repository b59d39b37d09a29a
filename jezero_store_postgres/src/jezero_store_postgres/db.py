"""A PostgreSQL connection that reads like the apsw connection the query layer was written for.

The query layer's plain statements (timeline, get_item, catalog, the hit fields, the sources) are
standard SQL with `?` marks; this wrapper runs them unchanged: `?` becomes psycopg's `%s` (and
`:name` with a mapping becomes `%(name)s`), `with conn:` is a transaction (a savepoint when
nested, as in apsw), and a statement naming a table this backend does not have (FTS5's shadow
tables) raises apsw.SQLError, as SQLite would, so the callers that fall back on such an error
(current.py's subject words) fall back here too. What ranks is not SQL the two engines share:
that goes through `ranker` (jezero_store_postgres.search).

Connections run in autocommit: each statement outside `with conn:` sees every commit made
before it, as a SQLite reader in WAL mode does between statements.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import apsw
import psycopg

# The work budget's price of a statement and of a row it returns, in SQLite VM steps (the unit of
# jezero.query.common.STEPS_PER_MS: 10,000 a millisecond). A round trip to a local server and its
# planning cost about a millisecond; a row fetched and turned into Python about 10 us. So the
# default 250 ms allows some 250 statements or 25,000 rows: a search of the benchmarks' libraries
# uses a few dozen statements and a few thousand rows (recall of a common word: its 5,000 newest).
STATEMENT_STEPS = 10_000
ROW_STEPS = 100

_NAMED = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")
_cache: dict[tuple[str, bool], str] = {}


def translate(sql: str, named: bool) -> str:
    """SQLite's parameter marks as psycopg's (and a literal % doubled)."""
    key = (sql, named)
    out = _cache.get(key)
    if out is None:
        out = sql.replace("%", "%%")
        out = _NAMED.sub(r"%(\1)s", out) if named else out.replace("?", "%s")
        if len(_cache) < 4096:
            _cache[key] = out
    return out


class Cursor:
    """The little of apsw's cursor the callers use: fetchone, fetchall, iteration, the columns."""

    def __init__(self, cur: psycopg.Cursor):
        self._cur = cur

    def _has_rows(self) -> bool:
        return self._cur.description is not None

    def fetchone(self):
        return self._cur.fetchone() if self._has_rows() else None

    def fetchall(self):
        return self._cur.fetchall() if self._has_rows() else []

    def __iter__(self):
        return iter(self._cur) if self._has_rows() else iter(())

    def get_description(self):
        if not self._has_rows():
            raise apsw.ExecutionCompleteError("the statement returned no rows")
        return tuple((d.name, None) for d in self._cur.description)

    getdescription = get_description

    @property
    def rowcount(self) -> int:
        return self._cur.rowcount


class Connection:
    """An apsw-like face on one psycopg connection. `ranker` is set on readers (the search
    engine of this backend); `backend` names it for messages and explain."""

    backend = "postgres"
    filename = ""  # not a file: jezero.store.engines' derived indexes do not apply

    def __init__(self, url: str, *, read_only: bool = False, application_name: str = "jezero"):
        try:
            self.pg = psycopg.connect(url, autocommit=True, application_name=application_name)
        except psycopg.OperationalError as e:
            raise ConnectionFailed(f"cannot connect to the PostgreSQL library: {str(e).strip()}") from None
        if read_only:
            # Every reader is read-only in the database itself, as SQLite readers open the file
            # read-only: no request can write, whatever the code above it does.
            self.pg.execute("SET default_transaction_read_only = on")
        self._tx: list = []
        self.ranker = None
        self._progress = None  # (handler, steps) while the query layer's work budget runs
        self._work = 0

    # -- statements ---------------------------------------------------------------------------

    def execute(self, sql: str, params=None, *, prepare: bool | None = None) -> Cursor:
        """`prepare` False: planned for these arguments each time, never from a prepared generic
        plan (psycopg prepares a statement after a few runs; a word's selectivity decides its plan)."""
        named = isinstance(params, Mapping)
        try:
            if params is None:
                cur = self.pg.execute(sql)  # no parameters: psycopg sends the text as it is
            else:
                cur = self.pg.execute(translate(sql, named), params if named else tuple(params), prepare=prepare)
        except (psycopg.errors.UndefinedTable, psycopg.errors.UndefinedFunction) as e:
            raise apsw.SQLError(f"SQLError: {str(e).splitlines()[0]}") from e
        except psycopg.errors.ReadOnlySqlTransaction as e:
            raise apsw.ReadOnlyError(f"ReadOnlyError: {str(e).splitlines()[0]}") from e
        if self._progress is not None:
            self._count_work(STATEMENT_STEPS + max(cur.rowcount, 0) * ROW_STEPS)
        return Cursor(cur)

    def _count_work(self, steps: int) -> None:
        """The work budget (set_progress_handler): the handler is called once per `steps` of
        work done, as SQLite calls it once per so many VM steps; when it says stop, the statement's
        answer is dropped and apsw.InterruptError raised, as SQLite interrupts a statement."""
        handler, every = self._progress
        self._work += steps
        while self._work >= every:
            self._work -= every
            if handler():
                raise apsw.InterruptError("InterruptError: the work budget ran out")

    def executemany(self, sql: str, rows) -> None:
        rows = list(rows)
        if not rows:
            return
        named = isinstance(rows[0], Mapping)
        with self.pg.cursor() as cur:
            cur.executemany(translate(sql, named), rows if named else [tuple(r) for r in rows])

    # -- transactions -------------------------------------------------------------------------

    def __enter__(self):
        tx = self.pg.transaction()
        tx.__enter__()
        self._tx.append(tx)
        return self

    def __exit__(self, *exc):
        tx = self._tx.pop()
        return tx.__exit__(*exc)

    @property
    def in_transaction(self) -> bool:
        return bool(self._tx) or self.pg.info.transaction_status != psycopg.pq.TransactionStatus.IDLE

    # -- what apsw has and the query layer calls ----------------------------------------------

    def set_progress_handler(self, handler, steps: int = 0) -> None:
        """The query layer's work budget (jezero.query.common.budget). A server has no VM steps
        to count, and a clock would let a busy machine change an answer; so the work counted is
        what this connection did: STATEMENT_STEPS for each statement and ROW_STEPS for each row
        it returned, checked after each statement (a statement is never stopped inside the
        server: each is bounded by its shape, see search.py and messages.py)."""
        self._progress = (handler, max(int(steps), 1)) if handler is not None else None
        self._work = 0

    def close(self, force: bool = False) -> None:
        self.pg.close()


class ConnectionFailed(Exception):
    pass
