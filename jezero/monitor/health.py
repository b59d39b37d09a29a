"""Whether each connector is alive: what `jezero health`, the overview route and the app report.

A connector that quietly stops bringing anything in looks just like a quiet week, so health is
judged from the connector's own record, not from the items: a connector is

- failing  when its last run ended in an error,
- warning  when its last run reported warnings (the pipeline held the cursor: the data is read
           again on the next run, and the warning stays until a run passes without one),
- stale    when it has not succeeded for `stale_factor` times its interval (a dead timer, a
           connector that fails every time), or has never run at all. One that ran but never
           succeeded is flagged by its error or warning instead: its age is unknown.

Pure functions over the stored connector state; no I/O besides reading it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import Any, Iterable

import apsw

from jezero.config import Config, ConnectorConfig, config_minutes
from jezero.store import parse_stored_time
from jezero.store.warnings import unacknowledged_warnings

# No success for three intervals: one missed run is normal (a laptop asleep, a lock held by a
# long backfill); three in a row is a pattern worth a message.
DEFAULT_STALE_FACTOR = 3.0

KINDS = ("failing", "stale", "warning")  # worst first


@dataclass
class Problem:
    connector: str
    kind: str  # one of KINDS
    detail: str

    def key(self) -> str:
        """What identifies this problem for de-duplication: a stale connector stays the same
        problem while its age grows; a failing one changes when its error does."""
        return f"{self.connector}:{self.kind}" + ("" if self.kind == "stale" else f":{self.detail}")


@dataclass
class ConnectorHealth:
    name: str
    type: str
    enabled: bool
    interval_minutes: float
    last_run_at: str | None = None
    last_success_at: str | None = None
    last_error: str | None = None
    warnings: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @property
    def status(self) -> str:
        if not self.enabled:
            return "disabled"
        for kind in KINDS:
            if any(p.kind == kind for p in self.problems):
                return kind
        return "ok"

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "status": self.status, "problems": [asdict(p) for p in self.problems]}


def connector_warnings(state: dict[str, Any]) -> list[str]:
    """The warnings a connector holds: those kept in the library that no admin has acknowledged
    (`jezero warnings ack`), as read_states() gathered them."""
    return list(state.get("warnings") or [])


def read_states(conn: apsw.Connection) -> dict[str, dict[str, Any]]:
    """Every connector's stored state, by name (read-only)."""
    rows = conn.execute("SELECT name, last_run_at, last_success_at, last_error FROM connector_state")
    states = {r[0]: {"name": r[0], "last_run_at": r[1], "last_success_at": r[2], "last_error": r[3], "warnings": []}
              for r in rows}
    for w in reversed(unacknowledged_warnings(conn)):  # oldest first
        states.setdefault(w["connector"], {"name": w["connector"], "last_run_at": None, "last_success_at": None,
                                           "last_error": None, "warnings": []})["warnings"].append(w["message"])
    return states


def _warning_note(error: str, warnings: list[str]) -> bool:
    # The runner records held warnings as the connector's error ("N warning(s); cursor held: ...");
    # that is the warning itself, not a second problem.
    return bool(warnings) and error.startswith(f"{len(warnings)} warning(s); cursor held")


def _age(since: datetime, now: datetime) -> str:
    minutes = (now - since).total_seconds() / 60
    if minutes < 120:
        return f"{minutes:.0f} minutes"
    if minutes < 48 * 60:
        return f"{minutes / 60:.0f} hours"
    return f"{minutes / 1440:.0f} days"


def judge(conn_cfg: ConnectorConfig, state: dict[str, Any] | None, now: datetime,
          stale_factor: float = DEFAULT_STALE_FACTOR) -> ConnectorHealth:
    """One connector's health from its config and stored state."""
    state = state or {}
    h = ConnectorHealth(conn_cfg.name, conn_cfg.type, conn_cfg.enabled, conn_cfg.interval_minutes,
                        state.get("last_run_at"), state.get("last_success_at"), state.get("last_error"),
                        connector_warnings(state))
    if not conn_cfg.enabled:
        return h
    if h.last_error and not _warning_note(h.last_error, h.warnings):
        h.problems.append(Problem(h.name, "failing", h.last_error.splitlines()[0][:300]))
    if h.warnings:
        first = h.warnings[0].splitlines()[0][:300] if h.warnings[0] else ""
        more = f" (and {len(h.warnings) - 1} more)" if len(h.warnings) > 1 else ""
        h.problems.append(Problem(h.name, "warning", f"{first}{more}"))
    allowed = config_minutes(conn_cfg.interval_minutes * stale_factor)
    if not h.last_run_at:
        h.problems.append(Problem(h.name, "stale", "never run (is the timer running? see `jezero schedule`)"))
    elif h.last_success_at:
        last = parse_stored_time(h.last_success_at)
        if now - last > allowed:
            h.problems.append(Problem(h.name, "stale", f"no success for {_age(last, now)} "
                                                      f"(interval {conn_cfg.interval_minutes:g} minutes)"))
    return h


@dataclass
class HealthReport:
    checked_at: str
    stale_factor: float
    connectors: list[ConnectorHealth]

    @property
    def problems(self) -> list[Problem]:
        return [p for c in self.connectors for p in c.problems]

    @property
    def ok(self) -> bool:
        return not self.problems

    def as_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "checked_at": self.checked_at, "stale_factor": self.stale_factor,
                "connectors": [c.as_dict() for c in self.connectors],
                "problems": [asdict(p) for p in self.problems]}


def check(config: Config, states: dict[str, dict[str, Any]], *, now: datetime | None = None,
          stale_factor: float = DEFAULT_STALE_FACTOR, names: Iterable[str] | None = None) -> HealthReport:
    """The health of the configured connectors (or of `names` among them)."""
    now = now or datetime.now(timezone.utc)
    wanted = set(names) if names is not None else None
    connectors = [judge(c, states.get(c.name), now, stale_factor) for c in config.connectors
                  if wanted is None or c.name in wanted]
    return HealthReport(now.strftime("%Y-%m-%dT%H:%M:%SZ"), stale_factor, connectors)


def check_library(config: Config, **options: Any) -> HealthReport:
    """check() over the library named by the config; a missing library means nothing ran yet."""
    from jezero.store import StoreError, open_readonly

    try:
        conn = open_readonly(config.library_path())
    except StoreError:
        return check(config, {}, **options)
    try:
        report = check(config, read_states(conn), **options)
        newer = _newer_schema(conn)
    finally:
        conn.close()
    if newer:  # every run fails before it records anything: the connectors looked never run
        for c in report.connectors:
            if c.enabled:
                c.problems.insert(0, Problem(c.name, "failing", newer))
    return report


def _newer_schema(conn: apsw.Connection) -> str | None:
    """What stops every run of a library a newer jezero wrote, or None."""
    from jezero.store.migrations import LATEST, current_version

    try:
        version = current_version(conn)
    except apsw.Error:  # an empty file or no library yet: said elsewhere
        return None
    if version <= LATEST:
        return None
    return (f"the library has schema version {version}, newer than this jezero knows ({LATEST}): "
            "every run fails until jezero is upgraded")
