"""What every query function shares: limits, times, the caller's sources, the time budget, and
the shape of a hit."""

from __future__ import annotations

import fnmatch
import re
from array import array
from collections.abc import Sequence
from contextlib import contextmanager
from datetime import date, datetime, timezone

import apsw

from jezero.config import SearchConfig
from jezero.query.errors import QueryError

# Fields of a hit, in this order, as stored in `items`.
HIT_FIELDS = ("id", "title", "summary", "project", "source", "agent", "session_id", "occurred_at")
TIMELINE_DEFAULT_LIMIT = 20
LATER_DEFAULT_LIMIT = 5
# The progress handler runs every this many SQLite VM steps: often enough to stop within a
# fraction of a millisecond, rarely enough to cost nothing measurable.
PROGRESS_STEPS = 1000

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


_DEFAULT_OPTIONS = SearchConfig()


def options_or_default(options: SearchConfig | None) -> SearchConfig:
    return options if options is not None else _DEFAULT_OPTIONS


def clamp_limit(limit, default: int, cap: int) -> int:
    """The same rule for every function: missing, None, zero or negative means the default;
    anything above `cap` (search.max_limit) is cut to it."""
    if limit is None or isinstance(limit, bool):
        value = 0
    else:
        try:
            value = int(limit)
        except (TypeError, ValueError):
            raise QueryError(f"limit must be a whole number, got {limit!r}") from None
    if value <= 0:
        value = default
    return max(1, min(value, cap))


def check_span(since: str | None, end: str | None, end_name: str) -> None:
    """Refuse bounds that no time is between (both as `parse_time` gives them): a caller that
    swapped them read "no match" and took it for an answer about the library."""
    if since is not None and end is not None and since >= end:
        raise QueryError(f"since ({since}) is not before {end_name} ({end}): no time is between them; "
                         "swap them, or leave one out")


def parse_time(value, name: str = "since") -> str | None:
    """A bound as stored text (fixed-width UTC), or None for no bound.

    Accepts a datetime, a date, or ISO 8601 text: a bare date (`2024-05-01`) is midnight UTC, a
    datetime without offset is UTC, `Z` or an offset are converted.
    """
    if value is None:
        return None
    if isinstance(value, datetime):
        dt = value
    elif isinstance(value, date):
        dt = datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        try:
            if _DATE.match(text):
                dt = datetime.strptime(text, "%Y-%m-%d")
            else:
                dt = datetime.fromisoformat(text.replace("z", "Z"))
        except ValueError:
            raise QueryError(
                f"{name}: cannot read {value!r} as a date; use ISO 8601, e.g. 2024-05-01 or 2024-05-01T14:30:00Z"
            ) from None
    else:
        raise QueryError(f"{name}: expected a date or ISO 8601 text, got {type(value).__name__}")
    return time_text(dt)


def time_text(dt: datetime) -> str:
    """The store's fixed-width UTC text (zero-padded years too, so text order stays time order)."""
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    try:
        dt = dt.astimezone(timezone.utc)
    except OverflowError:
        raise QueryError(f"date out of range: {dt.isoformat()} is outside years 1 to 9999 in UTC") from None
    return (f"{dt.year:04d}-{dt.month:02d}-{dt.day:02d}T{dt.hour:02d}:{dt.minute:02d}:{dt.second:02d}"
            f".{dt.microsecond:06d}Z")


def parse_stored(text: str) -> datetime:
    return datetime.fromisoformat(text)


def utc_now(now: datetime | None) -> datetime:
    if now is None:
        return datetime.now(timezone.utc)
    if not isinstance(now, datetime):
        raise QueryError(f"now must be a datetime, got {type(now).__name__}")
    return now.replace(tzinfo=timezone.utc) if now.tzinfo is None else now.astimezone(timezone.utc)


# -- sources the caller may read -------------------------------------------------------------------


def library_sources(conn: apsw.Connection) -> list[str]:
    """The distinct source names in the library, by walking the (source, occurred_at) index one
    seek per source instead of reading every row."""
    names: list[str] = []
    row = conn.execute("SELECT min(source) FROM items").fetchone()
    while row and row[0] is not None:
        names.append(row[0])
        row = conn.execute("SELECT min(source) FROM items WHERE source > ?", (row[0],)).fetchone()
    return names


def all_allowed(allowed: Sequence[str] | str | None) -> bool:
    patterns = _patterns(allowed)
    return "*" in patterns


def allowed_sources(conn: apsw.Connection, allowed: Sequence[str] | str | None) -> list[str] | None:
    """The caller's glob patterns (case-sensitive, `agent-*`) expanded against the library's
    sources. None means every source (a bare `*`), so callers can skip the filter altogether."""
    patterns = _patterns(allowed)
    if "*" in patterns:
        return None
    return [s for s in library_sources(conn) if any(fnmatch.fnmatchcase(s, p) for p in patterns)]


def reads_nothing(sources: list[str] | None, source: str | None) -> bool:
    """Whether the caller's sources (allowed_sources) leave nothing to search: none at all, or
    not the one source asked for."""
    return sources is not None and (not sources or bool(source) and source not in sources)


def may_read(source: str, allowed: Sequence[str] | str | None) -> bool:
    return any(fnmatch.fnmatchcase(source, p) for p in _patterns(allowed))


def _patterns(allowed) -> list[str]:
    if allowed is None:
        return []
    if isinstance(allowed, str):
        return [allowed]
    return [p for p in allowed if isinstance(p, str)]


# -- work budget ----------------------------------------------------------------------------------

# The budget counts SQLite's work, not the clock: a busy machine must give the answer an idle
# one gives, a little later. `search.time_budget_ms` is turned into VM steps at this rate, the
# lowest measured on a 2-core dev machine for FTS5 MATCH queries at 10k items (9,400 to 19,000
# steps per ms, benchmarks/budget/README.md), so an idle machine stops at or before
# the configured time.
STEPS_PER_MS = 10_000


class Budget:
    """An allowance of SQLite VM steps enforced by the connection's progress handler: a
    statement still running when it is spent is interrupted (apsw.InterruptError), and
    `interrupted` stays set so the answer can say it was cut. `renew()` starts a fresh
    allowance, for the one cheaper retry a caller may make after an interruption."""

    def __init__(self, ms: int):
        self.allowance = max(1, int(ms)) * STEPS_PER_MS
        self.used = 0
        self.interrupted = False

    def renew(self) -> None:
        self.used = 0

    def expired(self) -> bool:
        return self.used > self.allowance

    def _check(self) -> bool:
        self.used += PROGRESS_STEPS
        if self.used > self.allowance:
            self.interrupted = True
            return True
        return False


class Hits(list):
    """A search answer: the hits, and whether the work budget cut the search short (then the
    hits are the best of what was looked at, not necessarily the best of the library)."""

    cut: bool = False
    notes: tuple[str, ...] = ()  # what the caller should know, e.g. why a lane was off


@contextmanager
def budget(conn: apsw.Connection, ms: int):
    """Install a Budget as the connection's progress handler for the duration of one call. The
    query layer owns the handler while it runs: use a connection for one call at a time."""
    b = Budget(ms)
    conn.set_progress_handler(b._check, PROGRESS_STEPS)
    try:
        yield b
    finally:
        conn.set_progress_handler(None)


# -- filters --------------------------------------------------------------------------------------


def scope_conditions(alias: str, sources: Sequence[str] | None, source: str | None) -> tuple[list[str], list]:
    """The SQL conditions (and their arguments) for the caller's sources and a chosen source, on
    table `alias`; None means no condition. Shared by the items' and the messages' filters."""
    where: list[str] = []
    args: list = []
    if sources is not None:
        where.append(f"{alias}.source IN ({','.join('?' * len(sources))})")
        args += sources
    if source is not None:
        where.append(f"{alias}.source = ?")
        args.append(source)
    return where, args


def time_conditions(column: str, since: str | None, until: str | None) -> tuple[list[str], list]:
    """`column` >= since (inclusive) and < until (exclusive), stored time text; None: no bound."""
    where: list[str] = []
    args: list = []
    if since is not None:
        where.append(f"{column} >= ?")
        args.append(since)
    if until is not None:
        where.append(f"{column} < ?")
        args.append(until)
    return where, args


# -- hits -----------------------------------------------------------------------------------------


def fetch_hits(conn: apsw.Connection, ids: Sequence[int]) -> dict[int, dict]:
    """The hit fields of these items, by id."""
    if not ids:
        return {}
    listed, args = id_list(conn, ids)
    cols = ", ".join(HIT_FIELDS)
    rows = conn.execute(f"SELECT {cols} FROM items WHERE id IN {listed}", args)
    return {r[0]: dict(zip(HIT_FIELDS, r)) for r in rows}


_CARRAY = getattr(apsw, "carray", None)  # the locked apsw has it; an older one lists the ids as before


def id_list(conn, ids: Sequence[int]) -> tuple[str, list]:
    """What follows `IN` for these integer ids, and its arguments: on SQLite one array bound
    (apsw.carray), so that the statement's text is the same whatever the count, else `(?, ?, ...)`.
    A statement written for each count of ids filled the connection's statement cache (apsw's
    100): the load benchmark's searches used 74 such texts (the items re-score's read of up to 50
    candidates, the hits' rows, the unread items' message ranges), 4.5 statements a search were
    prepared again (~25 us each for a list of 50), and the others they pushed out with them
    (benchmarks/load/README.md, 2026-12-04, `load10`). Same rows either way: SQLite reads an IN
    list or an IN over the array as the same sorted, de-duplicated set of values."""
    if _CARRAY is not None and isinstance(conn, apsw.Connection):
        return "carray(?)", [_CARRAY(array("q", ids))]
    return f"({','.join('?' * len(ids))})", list(ids)
