"""Unattended runs: connectors one at a time under a lock file, a failing connector recorded and
the others still run, `due` runs only those whose interval has elapsed. Also the two maintenance
passes over stored items: retag (projects, no model) and resummarize (on purpose)."""

from __future__ import annotations

import errno
import json
import logging
import os
import socket
import sys
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

from filelock import FileLock, Timeout

from jezero import plugins
from jezero.config import Config, config_minutes
from jezero.ingest.pipeline import (
    Budget,
    BudgetReached,
    Pipeline,
    RunReport,
    build_summarizer,
    summary_fields,
)
from jezero.ingest.segments import parse_rendered
from jezero.models import Segment, Session
from jezero.private import private_folder
from jezero.store import Store, StoreError, backends, engines, library_failure, parse_stored_time
from jezero.store.backends import RunLocked

log = logging.getLogger("jezero.ingest")

# A lock that cannot be taken for these reasons is the library's folder's problem, which the CLI
# says in one line already (jezero.cli.errors: read-only or not yours, no space left).
_SAID_ALREADY = (errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.EFBIG)


def lock_for(config: Config) -> FileLock:
    path = config.library_path()
    private_folder(path.parent)
    return FileLock(str(path) + ".lock", mode=0o600)


def _marker(config: Config) -> Path:
    """Beside the library while a command holds the run lock (see `exclusive`)."""
    return Path(str(config.library_path()) + ".running")


@contextmanager
def exclusive(config: Config, command: str = "jezero run"):
    """Hold the run lock: one run (or resummarize, embed) writes at a time; a second one is
    refused. A library on a database server has its own lock there (one run across every machine).

    While it holds the lock, `command` is named in a marker beside the library, removed when it
    ends however it ends, except by a kill: a run killed mid-way (kill -9, the OOM killer, a
    machine stopped) records nothing, and status went on showing the run before as the last one.
    `unfinished_run` reads the marker."""
    held = backends.run_lock(config)
    if held is not None:
        with held:
            yield
        return
    lock = lock_for(config)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise RunLocked(f"another `jezero run` holds {lock.lock_file}") from None
    except OSError as e:
        if e.errno in _SAID_ALREADY:
            raise
        # Something else at the lock's path (a folder, a special file): a traceback said nothing.
        raise StoreError(f"cannot take the run lock {lock.lock_file} ({e.strerror or e}): it must be a file "
                         "this user can write; move away what is there") from None
    marker = _marker(config)
    try:
        with suppress(OSError):  # (no room for it: the run goes on, status cannot tell)
            marker.write_text(json.dumps({"command": command, "pid": os.getpid(), "host": socket.gethostname(),
                                          "process_start": _process_start(os.getpid()),
                                          "started_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}))
        yield
    finally:
        with suppress(OSError):
            marker.unlink(missing_ok=True)
        lock.release()


def unfinished_run(config: Config) -> str | None:
    """What status says of a command that took the run lock and has not ended (its marker, see
    `exclusive`): still working, or stopped without ending (killed); None when there is none."""
    found = _run_state(config)
    return found[1] if found else None


def _run_state(config: Config) -> tuple[str, str] | None:
    """`unfinished_run`'s finding as (state, what to say): state "running" (this host's process
    is there), "killed", or "elsewhere" (another host's: not known)."""
    try:
        found = json.loads(_marker(config).read_text(encoding="utf-8"))
        command, pid, started = str(found["command"]), int(found["pid"]), str(found["started_at"])
    except (OSError, ValueError, TypeError, KeyError):
        return None
    if found.get("host") != socket.gethostname() or sys.platform == "win32":  # (there os.kill ends a process)
        return "elsewhere", (f"`{command}` started at {started} on {found.get('host')} and has not ended: still "
                             "running, or stopped")
    killed = "killed", (f"`{command}` started at {started} did not finish (killed, or the machine stopped): what it "
                        f"wrote is kept, and the next `{command}` goes on from there")
    try:
        os.kill(pid, 0)  # signal 0: only whether the process is there
    except ProcessLookupError:
        return killed
    except OSError:  # there, another user's
        pass
    kept, now = found.get("process_start"), _process_start(pid)
    if kept is not None and now is not None and kept != now:
        return killed  # its number reused since by another process (a killed run's pid, days later)
    return "running", f"`{command}` is running (process {pid}, since {started})"


def _process_start(pid: int) -> int | None:
    """When process `pid` started, in clock ticks since boot (Linux's /proc/PID/stat, field 22):
    with the pid it names one process, where the pid alone is reused. None where there is no /proc."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
        return int(stat.rsplit(")", 1)[1].split()[19])  # after the command's name, which may hold spaces
    except (OSError, ValueError, IndexError):
        return None


def open_store(config: Config, *, vectors: bool = True) -> Store:
    """The library's writer; with the semantic lane on (and `vectors`), writing vectors too."""
    if backends.backend(config) is not None:  # another backend: no derived index or vectors (SQLite's)
        if vectors and config.semantic.enabled:
            log.warning("semantic lane: no vectors written: the %s backend has none yet", backends.name(config))
        return backends.open_writer(config)
    store = Store(config.library_path(), config.storage.tokenizer)
    follow = engines.follower(config.search.engine, store.path)
    if follow is not None:  # a derived search index follows what is written (at most every 2 s)
        store.after_write.append(follow)
    if vectors and config.semantic.enabled:
        _attach_vectors(store, config)
    return store


def _attach_vectors(store: Store, config: Config) -> None:
    """With the semantic lane on, items are written with their vectors. An embedder that is not
    installed or not ready, or whose model is not the one the library's vectors come from, is
    said once; the items are still written, and are behind until `jezero embed`."""
    from jezero.models import EmbedderNotReady
    from jezero.store import vectors

    try:
        store.vectors = vectors.VectorWriter(store.db, config.semantic.embedder, vectors.build_embedder(config.semantic),
                                             window_chars=config.semantic.window_chars)
    except (LookupError, EmbedderNotReady, vectors.ModelMismatch) as e:
        log.warning("semantic lane: no vectors written this run: %s", e)


def run_connectors(
    config: Config,
    names: list[str] | None = None,
    *,
    due: bool = False,
    dry_run: bool = False,
    now: datetime | None = None,
    progress: Callable[[str], None] | None = None,
) -> list[RunReport]:
    now = now or datetime.now(timezone.utc)
    selected = [c for c in config.connectors if c.enabled]
    if names:
        unknown = [n for n in names if n not in {c.name for c in config.connectors}]
        if unknown:
            raise LookupError(f"no connector named {', '.join(unknown)} in the config")
        selected = [c for c in config.connectors if c.name in names]
    with exclusive(config):
        with open_store(config) as store:
            summarizer = None if dry_run else build_summarizer(config)
            budget = Budget(config.summarizer.budget_usd, config.summarizer.budget_tokens)
            reports = []
            for conn in selected:
                if due and not _is_due(store, conn.name, conn.interval_minutes, now):
                    continue
                if budget.exhausted:
                    break
                pipeline = Pipeline(store, config, conn, summarizer, budget=budget, dry_run=dry_run, now=now,
                                    progress=progress)
                try:
                    report = pipeline.run()
                except Exception as e:  # one connector's failure never stops the others...
                    if library_failure(e):  # ...but a library that cannot be written stops them all
                        raise
                    # The report carries the one-line error; the traceback is for whoever debugs.
                    log.debug("connector %s failed", conn.name, exc_info=True)
                    report = pipeline.report
                    report.error = f"{type(e).__name__}: {e}"
                if not dry_run:
                    _record(store, report)
                reports.append(report)
            written = sum(r.items_written for r in reports)
            if written:
                store.tidy_index(written)
            # Also when nothing was written: an index left behind (its disk was full) catches up.
            if not dry_run and backends.backend(config) is None:
                _sync_engine(config, store)
            return reports


def _sync_engine(config, store: Store) -> None:
    """Bring the configured search index engine's index in step with what this run wrote, so
    readers need not catch up themselves. A failure here loses nothing: readers catch up, or
    FTS5 answers, and `jezero reindex` rebuilds."""
    try:
        engines.sync(config.search.engine, store.path)
    except Exception as e:
        log.warning("search engine %s: could not update its index (%s); `jezero reindex` rebuilds it",
                    config.search.engine, e)


def _record(store: Store, report: RunReport) -> None:
    # Warnings are not errors: they are kept (store.warnings) and shown until acknowledged.
    store.record_run(report.connector, error=report.error, warnings=report.warnings, ok=report.error is None)


def _is_due(store: Store, name: str, interval_minutes: float, now: datetime) -> bool:
    state = store.connector_state(name)
    if not state or not state["last_run_at"]:
        return True
    return now - parse_stored_time(state["last_run_at"]) >= config_minutes(interval_minutes)


# ----------------------------------------------------------------------------------------------
# Maintenance passes


@dataclass
class RetagReport:
    items: int = 0
    changed: int = 0


@contextmanager
def library_reader(config: Config, tables: tuple[str, ...]):
    """A read-only connection to the library (backends.open_reader), or None where there is none
    to read: no library file yet (none is made by looking), or an empty one that no writer has
    opened (it lacks one of `tables`). Closed on leaving."""
    other = backends.backend(config) is not None
    if not other and not config.library_path().exists():
        yield None
        return
    conn = backends.open_reader(config)
    try:
        marks = ", ".join("?" * len(tables))
        made = other or conn.execute(f"SELECT count(*) FROM sqlite_master WHERE name IN ({marks})",
                                     tables).fetchone()[0] == len(tables)
        yield conn if made else None
    finally:
        conn.close()


def retag(config: Config, *, dry_run: bool = False) -> RetagReport:
    """Re-apply the project rules to every stored item, with no model. A dry run only reads, as
    `status` does: a library on a read-only mount is counted as it is, and none is made where
    there is none yet. (It opened the writer until 2026-12-04, and failed on a read-only mount.)"""
    pm = plugins.get_plugin_manager()
    from jezero.models import ProjectHints

    defaults = {c.name: c.default_project for c in config.connectors}
    report = RetagReport()
    query = "SELECT id, source, agent, cwd, device_project, project_guess, project FROM items"

    def changes(rows):  # (item id, its new project) for each item the rules move
        for item_id, source, agent, cwd, device, guess, project in rows:
            report.items += 1
            hints = ProjectHints(source=source, agent=agent, cwd=cwd, device_project=device, summarizer_guess=guess,
                                 default_project=defaults.get(source), rules=list(config.projects.rules),
                                 roots=list(config.projects.roots))
            new = pm.hook.resolve_project(hints=hints)
            if new != project:
                report.changed += 1
                yield item_id, new

    if dry_run:
        with library_reader(config, ("items",)) as conn:
            for _ in changes(conn.execute(query).fetchall() if conn is not None else []):
                pass
        return report
    with open_store(config) as store:
        for item_id, new in changes(store.db.execute(query).fetchall()):
            store.set_project(item_id, new)
    return report


@dataclass
class ResummarizeReport:
    matched: int = 0
    summarized: int = 0
    failed: int = 0
    budget_reached: bool = False
    estimated_tokens: int = 0


def resummarize(
    config: Config,
    *,
    source: str | None = None,
    project: str | None = None,
    since: datetime | None = None,
    dry_run: bool = False,
    progress: Callable[[str], None] | None = None,
) -> ResummarizeReport:
    """Summarise stored items again from their redacted originals (a new model or language)."""
    report = ResummarizeReport()
    where, args = [], []
    if source:
        where.append("source = ?")
        args.append(source)
    if project:
        where.append("project = ?")
        args.append(project)
    if since:
        from jezero.store import format_time

        where.append("occurred_at >= ?")
        args.append(format_time(since))
    sql = "SELECT * FROM items" + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY id"
    with exclusive(config, "jezero resummarize"):
        with open_store(config) as store:
            cursor = store.db.execute(sql, args)
            cols = [d[0] for d in cursor.getdescription()]
            rows = [dict(zip(cols, r)) for r in cursor]
            report.matched = len(rows)
            if dry_run:
                report.estimated_tokens = sum(len(r["original"]) for r in rows) // 4
                return report
            summarizer = build_summarizer(config)
            budget = Budget(config.summarizer.budget_usd, config.summarizer.budget_tokens)
            normalizers = _normalizers(config)
            for row in rows:
                if budget.exhausted:
                    report.budget_reached = True
                    break
                seg = _segment_from_row(row, normalizers.get(row["source"]))
                try:
                    summary, usage = summarizer.summarize(seg)
                except (BudgetReached, Exception) as e:
                    report.failed += 1
                    store.record_call(run_id="resummarize", source=row["source"], uid=row["uid"],
                                      summarizer=summarizer.name, model=summarizer.model, input_tokens=0,
                                      output_tokens=0, cost_usd=None, ok=False, error=f"{type(e).__name__}: {e}")
                    continue
                budget.add(usage)
                # Only what the item says changes: its messages keep the times the run read.
                store.set_summary(row["id"], summary_fields(summary, summarizer), call=dict(
                    run_id="resummarize", source=row["source"], uid=row["uid"], summarizer=summarizer.name,
                    model=summarizer.model, input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
                    cost_usd=usage.cost_usd, ok=True))
                report.summarized += 1
                if progress:
                    progress(f"{row['id']}: {summary.title}")
    return report


def _normalizers(config: Config) -> dict:
    """Source name -> its connector type's `normalize`: only the connector knows what a tool name
    means, and a stored original keeps the name, not what the call did."""
    types = plugins.connector_types()
    return {c.name: types[c.type].normalize for c in config.connectors
            if c.type in types and types[c.type].normalize is not None}


def _segment_from_row(row: dict, normalize=None) -> Segment:
    session = Session(id=row["session_id"], agent=row["agent"], blocks=[], cursor_key="", cursor_value=None,
                      cwd=row["cwd"], git_branch=row["git_branch"], model=row["model"],
                      parent_id=row["parent_session_id"], project_hint=row["device_project"],
                      started_at=parse_stored_time(row["started_at"]) if row["started_at"] else None)
    blocks = parse_rendered(row["original"])
    if normalize is not None:
        blocks = normalize(blocks)
    session.blocks = blocks
    return Segment(uid=row["uid"], source=row["source"], session=session, index=row["segment_index"], blocks=blocks,
                   text=row["original"], content_hash=row["content_hash"],
                   occurred_at=parse_stored_time(row["occurred_at"]))


def status(config: Config) -> list[dict]:
    """Each configured connector with its stored state. Read only: a library on a read-only mount
    is shown as it is, one of an older schema is not migrated, and none is made where there is
    none yet (every connector then shows as never run). (Opened as the writer until 2026-12-04:
    status failed on a read-only mount, and made an empty library by looking.)"""
    from jezero.monitor.health import read_states

    states: dict[str, dict] = {}
    counts: dict[str, int] = {}
    with library_reader(config, ("items", "connector_state")) as conn:
        if conn is not None:
            states = read_states(conn)
            for c in config.connectors:
                counts[c.name] = conn.execute("SELECT count(*) FROM items WHERE source=?", (c.name,)).fetchone()[0]
    out = []
    for c in config.connectors:
        state = states.get(c.name) or {}
        out.append({"name": c.name, "type": c.type, "enabled": c.enabled, "items": counts.get(c.name, 0),
                    "last_run_at": state.get("last_run_at"), "last_success_at": state.get("last_success_at"),
                    "last_error": state.get("last_error"), "warnings": len(state.get("warnings") or [])})
    return out


def library_notes(config: Config) -> list[str]:
    """What status says of the library beyond its connectors, read only: a schema this jezero
    migrates at the next writer (or cannot write: newer than it knows), and items stored under a
    source that no connector of the config has any more (removed or renamed: they stay
    searchable, and a renamed connector stores its sessions again under the new name). Before,
    status said neither: on a newer library every run failed while status and health showed a
    connector never run, and a renamed connector's first run doubled every session unseen."""
    from jezero.store.migrations import LATEST, current_version

    if backends.backend(config) is not None:
        return []
    notes = []
    with library_reader(config, ("items", "meta")) as conn:
        if conn is None:
            return []
        version = current_version(conn)
        if version > LATEST:
            notes.append(f"the library has schema version {version}, newer than this jezero knows ({LATEST}): "
                         "it reads it, but every run fails until jezero is upgraded")
        elif version < LATEST:
            # a run that is working now is upgrading it (its marker is written before it opens the library)
            running = (_run_state(config) or ("",))[0] == "running"
            by = "the command running now upgrades it" if running else "the next `jezero run` upgrades it"
            notes.append(f"the library has schema version {version} (this jezero's is {LATEST}): {by}, in one "
                         "transaction per step; nothing stored is lost")
        names = {c.name for c in config.connectors}
        others = [(source, n) for source, n in conn.execute("SELECT source, count(*) FROM items GROUP BY source")
                  if source not in names]
    if others:
        listed = ", ".join(f"{source} ({n})" for source, n in others)
        notes.append(f"item(s) of a source no connector of the config has (removed or renamed): {listed}; they "
                     "stay searchable, and a connector renamed stores its sessions again under its new name")
    return notes


__all__ = ["run_connectors", "retag", "resummarize", "status", "unfinished_run", "library_notes", "RunLocked"]
