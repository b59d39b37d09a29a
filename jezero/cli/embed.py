"""The semantic lane's maintenance: embed (and embed --prepare)."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from jezero.cli import app
from jezero.cli.common import err, fail, load_config, out, print_json, sqlite_only


@app.command()
def embed(
    prepare: Annotated[bool, typer.Option("--prepare", help="Make the configured embedder's model ready on this computer (the one step that may fetch or derive it), then stop.")] = False,
    batch: Annotated[int, typer.Option("--batch", help="Items embedded per transaction (a killed run loses at most one batch).", min=1)] = 64,
    json_out: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Embed the library for the semantic lane (\\[semantic] in the config).

    Embeds every item whose vectors are missing or older than the item, all of them when the
    embedder's model changed. Resumable: stopped at any point, the next run goes on from the first
    item still to embed and never embeds one twice.
    """
    from jezero.ingest import embed as embedding
    from jezero.ingest.runner import RunLocked
    from jezero.models import EmbedderNotReady

    cfg = load_config()
    sqlite_only(cfg, "embed")
    if prepare:
        try:
            said = embedding.prepare(cfg)
        except LookupError as e:
            fail(str(e), 2)
        if json_out:
            print_json({"prepared": said})
        else:
            out.print(said, markup=False)
        return
    try:
        report = embedding.embed_library(cfg, batch=batch, progress=None if json_out else _progress)
    except RunLocked as e:
        fail(str(e), 3)
    except EmbedderNotReady as e:
        fail(f"{e}", 2)
    except LookupError as e:
        fail(str(e), 2)
    if json_out:
        print_json(report.as_dict())
        return
    if report.replaced:
        out.print(f"dropped the vectors of {report.replaced}", markup=False)
    out.print(f"{report.embedded} item(s) embedded ({report.windows} message window(s)) with {report.embedder} "
              f"({report.model_id}, {report.dimension} dims); {report.items} item(s) in the library"
              + (f"; {report.removed} deleted item(s)' vectors removed" if report.removed else ""), markup=False)
    for note in report.notes:
        err.print(f"note: {note}", markup=False)


def _progress(done: int, total: int) -> None:
    # One line per batch: a log on a pipe, progress on a terminal (where it overwrites itself).
    end = "\r" if sys.stderr.isatty() and done < total else "\n"
    sys.stderr.write(f"embedded {done} of {total} item(s){end}")
    sys.stderr.flush()


def lane_line(cfg) -> str:
    """One line for `jezero status` and `jezero up`: whether the semantic lane is on, with which
    embedder and model, and how much of the library it covers. Imports nothing of it when off."""
    if not cfg.semantic.enabled:
        return "semantic lane: off (one line turns it on: [semantic] enabled = true; see docs/semantic.md)"
    from jezero.query.vectors import describe
    from jezero.store import StoreError, open_readonly

    try:
        conn = open_readonly(cfg.library_path())
    except StoreError:
        conn = None
    try:
        info = describe(conn, cfg.semantic)
    finally:
        if conn is not None:
            conn.close()
    model = f" ({info['model_id']})" if info["model_id"] else ""
    if info["off"]:
        return f"semantic lane: on, embedder {info['embedder']}{model}, but not answering: {info['off']}"
    line = f"semantic lane: on, embedder {info['embedder']}{model}"
    if info["items"] is not None:
        line += f"; {info['items'] - info['behind']} of {info['items']} item(s) embedded"
        if info["behind"]:
            line += f" ({info['behind']} behind: run `jezero embed`)"
    return line
