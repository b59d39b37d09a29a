"""Bringing sessions in: run, status, retag, resummarize, redact."""

from __future__ import annotations

import sys
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import Annotated, Optional

import typer

from jezero.cli import app
from jezero.cli.common import err, fail, load_config, out, print_json


@contextmanager
def _progress(enabled: bool):
    """A live spinner with the latest session on a terminal; plain lines otherwise."""
    if not enabled:
        yield lambda message: None
        return
    if sys.stderr.isatty():
        from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        with Progress(SpinnerColumn(), TextColumn("{task.description}"), TextColumn("{task.completed} session(s)"),
                      TimeElapsedColumn(), console=err, transient=True) as p:
            task = p.add_task("ingesting", total=None)
            yield lambda message: p.update(task, description=message[:70], advance=1)
    else:
        yield lambda message: err.print(message, markup=False)


def _since(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        dt = datetime.fromisoformat(value)
    except ValueError:
        fail(f"--since: not a date or datetime: {value!r} (use YYYY-MM-DD or an ISO datetime)", 2)
    return dt.replace(tzinfo=timezone.utc) if dt.tzinfo is None else dt


@app.command()
def run(
    names: Annotated[Optional[list[str]], typer.Argument(help="Connectors to run (default: all enabled).")] = None,
    due: Annotated[bool, typer.Option("--due", help="Only connectors whose interval has elapsed (for a timer).")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Count segments and estimate tokens; send and write nothing.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress output.")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print the run reports as JSON.")] = False,
) -> None:
    """Ingest new and changed sessions from the configured connectors, one at a time."""
    from jezero.ingest.runner import RunLocked, run_connectors

    cfg = load_config()
    if not cfg.connectors:
        fail("no [[connectors]] in the config; see `jezero init` or `jezero up`", 2)
    try:
        with _progress(not quiet and not json_out) as progress:
            reports = run_connectors(cfg, names or None, due=due, dry_run=dry_run, progress=progress)
    except RunLocked as e:
        fail(str(e), 3)
    except LookupError as e:
        fail(str(e), 2)
    if json_out:
        print_json([r.as_dict() for r in reports])
    else:
        for r in reports:
            if dry_run:
                out.print(f"{r.connector}: {r.sessions_seen} session(s) changed, "
                          f"{r.segments_unchanged} segment(s) unchanged, would summarise "
                          f"{r.segments_planned} segment(s), ~{r.estimated_tokens} tokens "
                          f"({r.sessions_deferred} still active)", markup=False)
                continue
            line = (f"{r.connector}: {r.sessions_written} session(s) written, {r.items_written} item(s), "
                    f"{r.segments_unchanged} unchanged, {r.sessions_deferred} still active")
            if r.segments_failed:
                line += f", {r.segments_failed} segment(s) failed"
            if r.input_tokens or r.output_tokens:
                line += f", {r.input_tokens + r.output_tokens} tokens"
                if r.cost_usd:
                    line += f" (${r.cost_usd:.4f})"
            if r.budget_reached:
                line += "; budget reached, stopped"
            out.print(line, markup=False)
            if r.error:
                err.print(f"  error: {r.error}", markup=False)
            for w in r.warnings[:10]:
                err.print(f"  warning: {w}", markup=False)
            if len(r.warnings) > 10:
                err.print(f"  ... and {len(r.warnings) - 10} more warning(s)", markup=False)
    if any(r.error for r in reports):
        raise typer.Exit(1)


@app.command()
def status(json_out: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False) -> None:
    """Each connector: items, last run, last success, last error, open warnings.

    Then which engine searches the library and whether the semantic lane is on (--json gives the
    connectors only)."""
    from jezero.ingest.runner import status as status_of

    cfg = load_config()
    rows = status_of(cfg)
    if json_out:
        print_json(rows)
        return
    from rich.table import Table
    from rich.text import Text

    table = Table("connector", "type", "items", "last run", "last success", "last error", "warnings")
    for r in rows:
        # Text, not markup: an error names config keys ("[inbox] path") that Rich would drop as tags.
        table.add_row(*(Text(cell) for cell in (r["name"], r["type"], str(r["items"]), r["last_run_at"] or "never",
                                                 r["last_success_at"] or "never", r["last_error"] or "",
                                                 str(r["warnings"] or ""))))
    out.print(table)
    from jezero.store import backends

    if backends.backend(cfg) is None and not cfg.library_path().exists():
        out.print(f"no library at {cfg.library_path()} yet: `jezero run` (or `jezero up`) makes it", markup=False)
    from jezero.ingest.runner import library_notes, unfinished_run

    unfinished = unfinished_run(cfg) if backends.backend(cfg) is None else None
    if unfinished:
        out.print(unfinished, markup=False)
    for note in library_notes(cfg):
        out.print(note, markup=False)
    open_warnings = sum(r["warnings"] for r in rows)
    if open_warnings:
        out.print(f"{open_warnings} warning(s) not acknowledged: see `jezero warnings`", markup=False)
    from jezero.cli.embed import lane_line
    from jezero.cli.index import engine_line

    out.print(engine_line(cfg, sum(r["items"] for r in rows) if rows else None), markup=False)
    out.print(lane_line(cfg), markup=False)


@app.command()
def retag(
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Count what would change.")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """Re-apply the project rules to every stored item (no model involved)."""
    from jezero.ingest.runner import retag as retag_items

    report = retag_items(load_config(), dry_run=dry_run)
    if json_out:
        print_json(report.__dict__)
    else:
        verb = "would change" if dry_run else "changed"
        out.print(f"{report.items} item(s) checked, {report.changed} {verb}", markup=False)


@app.command()
def resummarize(
    source: Annotated[Optional[str], typer.Option("--source", help="Only items of this source.")] = None,
    project: Annotated[Optional[str], typer.Option("--project", help="Only items of this project.")] = None,
    since: Annotated[Optional[str], typer.Option("--since", help="Only items from this date (UTC) on.")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Count items and estimate tokens; send nothing.")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """Summarise stored items again, on purpose (a new model or output language)."""
    from jezero.ingest.runner import RunLocked
    from jezero.ingest.runner import resummarize as resummarize_items

    cfg = load_config()
    try:
        with _progress(not json_out) as progress:
            report = resummarize_items(cfg, source=source, project=project, since=_since(since), dry_run=dry_run,
                                       progress=progress)
    except RunLocked as e:
        fail(str(e), 3)
    except LookupError as e:
        fail(str(e), 2)
    if json_out:
        print_json(report.__dict__)
    elif dry_run:
        out.print(f"{report.matched} item(s) would be summarised again, ~{report.estimated_tokens} tokens", markup=False)
    else:
        out.print(f"{report.summarized} of {report.matched} item(s) summarised again, {report.failed} failed"
                  + ("; budget reached, stopped" if report.budget_reached else ""), markup=False)
    if report.failed:
        raise typer.Exit(1)


@app.command()
def redact(
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Count what would change, per source; write nothing.")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """Apply the redactors again to everything stored (after a redactor was added or a secret found).

    Items (title, summary, questions, atoms, original), messages, warnings; the search indexes
    follow, changed items' vectors are dropped (`jezero embed` makes them again), and deleted text
    is overwritten in the file. Holds the run lock; a kill leaves every row old or new, and running
    it again finishes. Never prints a secret: only counts."""
    from jezero.ingest.reredact import redact_library
    from jezero.ingest.runner import RunLocked
    from jezero.store import StoreError, backends

    cfg = load_config()
    if backends.name(cfg) == backends.SQLITE and not cfg.library_path().exists():
        fail(f"no library at {cfg.library_path()} (run `jezero init` or `jezero up` first)", 2)
    try:
        with _progress(not json_out) as progress:
            report = redact_library(cfg, dry_run=dry_run, progress=progress)
    except RunLocked as e:
        fail(str(e), 3)
    except StoreError as e:
        fail(str(e), 2)
    if json_out:
        print_json(report.as_dict())
        return
    if not report.redactors:
        out.print("no redactor is registered (see `jezero plugins`): nothing to do", markup=False)
        return
    verb = "would change" if dry_run else "changed"
    out.print(f"redactors: {', '.join(report.redactors)}; {report.items_checked} item(s) and "
              f"{report.messages_checked} message(s) checked", markup=False)
    for source, counts in sorted(report.sources.items()):
        out.print(f"{source}: {verb} {counts.items} item(s), {counts.messages} message(s)", markup=False)
    if report.other_rows:
        out.print(f"warnings, connector states and call errors: {verb} {report.other_rows} row(s)", markup=False)
    if report.unfinished:
        out.print("a `jezero redact` killed before it ended left the index merge and the file's rewrite to do",
                  markup=False)
    if not report.sources and not report.other_rows:
        out.print("nothing to change: every stored text is as the redactors leave it", markup=False)
        if report.vacuumed:
            out.print("the search indexes were merged and the file written anew (a pass before was killed)",
                      markup=False)
        return
    if dry_run:
        out.print("run `jezero redact` without --dry-run to change them", markup=False)
        return
    if report.vectors_dropped:
        out.print(f"{report.vectors_dropped} item(s)' vectors dropped: `jezero embed` makes them again", markup=False)
    if report.index_rebuilt:
        out.print(f"{report.index_rebuilt} index rebuilt from the library", markup=False)
    if report.wal_truncated is False:
        err.print("note: a reader kept the write-ahead log from being emptied; stop the server and run "
                  "`jezero redact` again to be sure no old text stays in the library's -wal file", markup=False)
