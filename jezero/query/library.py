"""One item in full, and what the library holds: get_item, catalog, overview."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta, timezone

import apsw

from jezero.query.common import allowed_sources, library_sources, may_read
from jezero.query.errors import ItemNotFound, QueryError
from jezero.query.search import item_id_or_raise
from jezero.store import row_to_item

MAX_OVERVIEW_DAYS = 3660


def get_item(conn: apsw.Connection, item_id: int, *, include_original: bool = False,
             allowed: Sequence[str] = ("*",)) -> dict:
    """Every stored field of one item (questions and atoms as lists); the redacted original
    transcript only when asked. An item the caller may not read is reported as missing."""
    ident = item_id_or_raise(item_id)
    cursor = conn.execute("SELECT * FROM items WHERE id = ?", (ident,))
    try:
        names = [d[0] for d in cursor.get_description()]
    except apsw.ExecutionCompleteError:  # no row: the statement is already done
        raise ItemNotFound(item_id) from None
    row = cursor.fetchone()
    if row is None:
        raise ItemNotFound(item_id)
    item = dict(zip(names, row))
    if not may_read(item["source"], allowed):
        raise ItemNotFound(item_id)
    return row_to_item(item, include_original=include_original)


def catalog(conn: apsw.Connection, *, allowed: Sequence[str] = ("*",)) -> dict:
    """What a caller may filter on: its sources and the projects in them, each with its number
    of items and the time of the newest, most items first."""
    expanded = allowed_sources(conn, allowed)
    sources = library_sources(conn) if expanded is None else expanded
    out_sources = []
    for name in sources:
        n, last = conn.execute("SELECT count(*), max(occurred_at) FROM items WHERE source = ?", (name,)).fetchone()
        out_sources.append({"name": name, "items": n, "last_at": last})
    projects: dict[str, dict] = {}
    if sources:
        where, args = _source_filter(expanded)
        rows = conn.execute(
            f"SELECT project, source, count(*), max(occurred_at) FROM items "
            f"WHERE project IS NOT NULL{where} GROUP BY project, source", args)
        for project, source, n, last in rows:
            p = projects.setdefault(project, {"name": project, "items": 0, "last_at": None, "sources": []})
            p["items"] += n
            p["last_at"] = max(p["last_at"] or last, last)
            p["sources"].append(source)
    for p in projects.values():
        p["sources"].sort()
    return {
        "sources": sorted(out_sources, key=lambda s: (-s["items"], s["name"])),
        "projects": sorted(projects.values(), key=lambda p: (-p["items"], p["name"])),
    }


def overview(conn: apsw.Connection, *, allowed: Sequence[str] = ("*",), days: int = 30) -> dict:
    """Counts for a home screen, over the caller's sources only: items per source and per
    project (all time, and within the last `days` days as `recent`), and per day for the last
    `days` days (UTC dates, oldest first, days without items included)."""
    if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= MAX_OVERVIEW_DAYS:
        raise QueryError(f"days must be a whole number from 1 to {MAX_OVERVIEW_DAYS}, got {days!r}")
    expanded = allowed_sources(conn, allowed)
    sources = library_sources(conn) if expanded is None else expanded
    today = datetime.now(timezone.utc).date()
    first_day = today - timedelta(days=days - 1)
    start = f"{first_day.isoformat()}T00:00:00.000000Z"
    per_source, per_project, per_day = [], {}, {}
    total = recent_total = 0
    for name in sources:
        n, last = conn.execute("SELECT count(*), max(occurred_at) FROM items WHERE source = ?", (name,)).fetchone()
        recent = 0
        for day, k in conn.execute(
            "SELECT substr(occurred_at, 1, 10), count(*) FROM items WHERE source = ? AND occurred_at >= ? "
            "GROUP BY 1", (name, start)):
            per_day[day] = per_day.get(day, 0) + k
            recent += k
        per_source.append({"name": name, "items": n, "recent": recent, "last_at": last})
        total += n
        recent_total += recent
    if sources:
        where, args = _source_filter(expanded)
        for project, n, recent, last in conn.execute(
            f"SELECT project, count(*), sum(occurred_at >= ?), max(occurred_at) FROM items "
            f"WHERE project IS NOT NULL{where} GROUP BY project", [start, *args]):
            per_project[project] = {"name": project, "items": n, "recent": recent, "last_at": last}
    return {
        "days": days,
        "since": start,
        "total": total,
        "recent": recent_total,
        "sources": sorted(per_source, key=lambda s: (-s["items"], s["name"])),
        "projects": sorted(per_project.values(), key=lambda p: (-p["items"], p["name"])),
        "per_day": [{"day": (first_day + timedelta(days=i)).isoformat(),
                     "items": per_day.get((first_day + timedelta(days=i)).isoformat(), 0)} for i in range(days)],
    }


def _source_filter(expanded: list[str] | None) -> tuple[str, list[str]]:
    """The allowed-sources condition for the per-project counts. `+source` keeps SQLite from
    reading items through the (source, session) index: an index on (project, source,
    occurred_at), when the library has one, answers the whole query without touching a row."""
    if expanded is None:
        return "", []
    return f" AND +source IN ({','.join('?' * len(expanded))})", list(expanded)
