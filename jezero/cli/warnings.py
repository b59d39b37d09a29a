"""Warnings the runs left: list them, and acknowledge the ones that are understood so that
`status` stops reporting them (new ones still show)."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from jezero.cli import app
from jezero.cli.common import fail, load_config, out, print_json

warnings_app = typer.Typer(
    help="Warnings from ingest runs, kept until acknowledged. Without a subcommand: list the open ones.",
    invoke_without_command=True,
    no_args_is_help=False,
)
app.add_typer(warnings_app, name="warnings")

ConnectorOpt = Annotated[Optional[str], typer.Option("--connector", help="Only this connector's warnings.")]


def _store():
    from jezero.ingest.runner import open_store

    return open_store(load_config())


@warnings_app.callback()
def list_warnings(
    ctx: typer.Context,
    connector: ConnectorOpt = None,
    everything: Annotated[bool, typer.Option("--all", help="Include acknowledged warnings.")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """List the warnings no one has acknowledged yet (with --all, every kept warning)."""
    if ctx.invoked_subcommand is not None:
        return
    from jezero.store import backends, open_readonly
    from jezero.store.warnings import all_warnings, unacknowledged_warnings

    cfg = load_config()
    if backends.backend(cfg) is not None:  # (another backend's writer reads them its own way)
        with _store() as store:
            rows = all_warnings(store.db, connector) if everything else store.unacknowledged_warnings(connector)
    elif not cfg.library_path().exists():
        rows = []  # nothing ran yet; and no library is made by looking
    else:
        # Read only, as status: listing on a read-only mount failed with "cannot write the library".
        conn = open_readonly(cfg.library_path())
        try:
            rows = all_warnings(conn, connector) if everything else unacknowledged_warnings(conn, connector)
        finally:
            conn.close()
    if json_out:
        print_json(rows)
        return
    if not rows:
        out.print("no open warnings", markup=False)
        return
    for w in rows:
        seen = f"seen in {w['runs']} run(s), last {w['last_seen'][:16].replace('T', ' ')}"
        acked = f", acknowledged {w['acknowledged_at'][:10]}" if w.get("acknowledged_at") else ""
        out.print(f"#{w['id']} {w['connector']}: {w['message']}  ({seen}{acked})", markup=False)
    if not everything:
        out.print("\nAcknowledge what you understood: jezero warnings ack ID... (or --match 'GLOB', --all)",
                  markup=False)


@warnings_app.command("ack")
def ack(
    ids: Annotated[Optional[list[int]], typer.Argument(help="Warning ids, as `jezero warnings` lists them.")] = None,
    match: Annotated[Optional[str], typer.Option("--match", help="Every open warning whose text matches this glob, e.g. '*unknown record type*'.")] = None,
    connector: ConnectorOpt = None,
    everything: Annotated[bool, typer.Option("--all", help="Every open warning (of --connector, if given).")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print the count as JSON.")] = False,
) -> None:
    """Acknowledge understood warnings, so that `status` stops counting them.

    Only warnings that exist now are acknowledged; one seen for the first time later is reported
    as usual."""
    if not (ids or match or everything):
        fail("say which warnings: their ids, --match 'GLOB' or --all", 2)
    with _store() as store:
        n = store.acknowledge_warnings(ids=list(ids or ()), match=match, connector=connector, everything=everything)
        left = len(store.unacknowledged_warnings())
    if json_out:
        print_json({"acknowledged": n, "open": left})
    else:
        out.print(f"{n} warning(s) acknowledged, {left} still open", markup=False)
