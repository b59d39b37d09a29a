"""Running unattended: `jezero health` (is every connector alive?) and `jezero schedule` (the
timer that runs `run --due` and `health`)."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from jezero.cli import app
from jezero.cli.common import err, fail, load_config, out, print_json, state, sqlite_only


@app.command()
def health(
    stale_factor: Annotated[float, typer.Option("--stale-after", min=1.0, help="Flag a connector as stale after this many of its intervals without a success.")] = 3.0,
    webhook: Annotated[bool, typer.Option("--webhook", help="Post an alert to the URL in $JEZERO_HEALTH_WEBHOOK when the problems change, and a recovery when they are gone.")] = False,
    ping: Annotated[Optional[str], typer.Option("--ping", help="GET this URL on every check (a push monitor: it alerts when pings stop).", envvar="JEZERO_HEALTH_PING", show_envvar=True)] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Flag failing connectors, stale ones (no success for a few intervals) and held warnings.

    Exit code 0 when every enabled connector is healthy, 1 when something is flagged, 2 when the config cannot be read. Meant for a timer or a monitoring agent; see `jezero schedule`. Devices whose client core is older than this server's are listed as OUTDATED, for the admin to update their plugins; that alone is not a problem (no exit code, no webhook).
    """
    from jezero import config as config_mod
    from jezero.monitor import alerts
    from jezero.monitor.health import check_library

    cfg = load_config()
    sqlite_only(cfg, "health")
    if not cfg.connectors:
        fail("no [[connectors]] in the config: nothing to check", 2)
    report = check_library(cfg, stale_factor=stale_factor)
    result: dict = report.as_dict()
    devices = _devices(cfg)
    if devices is not None:
        result["devices"], result["client_core_version"] = devices
    if webhook:
        url = config_mod.lookup_env(alerts.WEBHOOK_ENV)
        if not url:
            fail(f"--webhook: set ${alerts.WEBHOOK_ENV} (in the environment or the .env beside the config)", 2)
        sent = alerts.notify(report, url, alerts.state_path(cfg.library_path()))
        result["webhook"] = {"posted": sent.posted, "error": sent.error}
    if ping:
        result["ping"] = {"error": alerts.ping(ping)}
    engine = _engine_note(cfg)
    if engine:
        result["search_engine"] = engine
    if json_out:
        print_json(result)
    else:
        _print(report)
        if engine:
            out.print(f"note: {engine}", markup=False)
        if devices is not None:
            _print_outdated(*devices)
        if webhook and result["webhook"]["posted"]:
            err.print(f"webhook: {result['webhook']['posted']} posted", markup=False)
    for what in ("webhook", "ping"):
        if result.get(what, {}).get("error"):
            err.print(f"warning: {what}: {result[what]['error']}", markup=False)
    if not report.ok:
        raise typer.Exit(1)


def _engine_note(cfg) -> str | None:
    """What status says of an index engine's index when it is not in step (a read-only mount where
    tantivy cannot be read, an index not built or damaged: FTS5 answers), or None. Said, not a
    problem: every search is still answered."""
    from jezero.cli.index import index_condition
    from jezero.store import engines

    name = cfg.search.engine
    if name == engines.BUILTIN:
        return None
    from jezero import plugins

    if name not in plugins.index_engines():
        return f"search engine {name}: no installed plugin gives it, so fts5 answers every search"
    note = index_condition(name, cfg.library_path())
    return f"search engine {name}: {note}" if note else None


def _print(report) -> None:
    for c in report.connectors:
        when = c.last_success_at[:16].replace("T", " ") if c.last_success_at else "never"
        out.print(f"{c.status.upper():8} {c.name} ({c.type}, every {c.interval_minutes:g} min, last success {when})",
                  markup=False)
        for p in c.problems:
            out.print(f"         {p.kind}: {p.detail}", markup=False)
    n = len(report.problems)
    out.print("all connectors healthy" if not n else f"{n} problem(s)", markup=False)


def _devices(cfg) -> tuple[list[dict], str] | None:
    """The devices that upload and the core this server ships; None when there are none. An
    outdated plugin is work for the admin, not an outage, so it never counts as a problem."""
    from jezero.devices import uploads
    from jezero.inbox.uploads import server_core_version

    found = uploads(cfg)
    return (found, server_core_version()) if found else None


def _print_outdated(found: list[dict], ours: str) -> None:
    for d in found:
        for a in d["agents"]:
            if a["outdated"]:
                plugin = f", plugin {a['plugin']}" if a["plugin"] else ""
                out.print(f"OUTDATED {d['device']}/{a['agent']}: last upload came with core "
                          f"{a['core_version'] or '(not sent)'}{plugin}, older than this server's {ours}", markup=False)


class Platform(str, Enum):
    linux = "linux"
    macos = "macos"


@app.command()
def schedule(
    every: Annotated[int, typer.Option("--every", min=1, help="Minutes between ticks; each tick runs only the connectors that are due.")] = 5,
    platform: Annotated[Optional[Platform], typer.Option("--platform", help="linux (systemd user timer) or macos (launchd agent); default: this computer's.")] = None,
    webhook: Annotated[bool, typer.Option("--webhook", help="Let each tick's health check post to $JEZERO_HEALTH_WEBHOOK (set it in the .env beside the config).")] = False,
    ping: Annotated[Optional[str], typer.Option("--ping", help="A push monitor URL the health check pings on every tick.")] = None,
    install: Annotated[bool, typer.Option("--install", help="Write the files (printed otherwise) and say how to enable them.")] = False,
) -> None:
    """Print (or --install) a timer that runs `jezero run --due` then `jezero health`."""
    import sys

    from jezero import config as config_mod
    from jezero.monitor import schedule as sched

    config_path = config_mod.resolve_config_path(state.config_path).resolve()
    exe = Path(sys.argv[0]).resolve() if Path(sys.argv[0]).name == "jezero" else None
    jezero = [str(exe)] if exe and exe.exists() else [sys.executable, "-m", "jezero.cli"]
    jezero += ["--config", str(config_path)]
    health_args: list[str] = []
    if webhook:
        health_args.append("--webhook")
    if ping:
        health_args += ["--ping", ping]
    name = (platform or Platform(sched.this_platform())).value
    make = sched.launchd if name == "macos" else sched.systemd
    files = make(jezero, every, health_args, Path.home())
    if not install:
        for f in files:
            out.print(f"# {f.path}\n{f.text}", markup=False)
        hint = sched.enable_hint(name).replace("\n", "\n# ")
        out.print(f"# write them with `jezero schedule --install`, then:\n# {hint}", markup=False)
        return
    for f in files:
        f.path.parent.mkdir(parents=True, exist_ok=True)
        f.path.write_text(f.text, encoding="utf-8")
        out.print(f"wrote {f.path}", markup=False)
    out.print(f"enable it with:\n  {sched.enable_hint(name).replace(chr(10), chr(10) + '  ')}", markup=False)
    if webhook and not config_mod.lookup_env("JEZERO_HEALTH_WEBHOOK"):
        err.print("note: $JEZERO_HEALTH_WEBHOOK is not set; put it in the .env beside the config "
                  f"({config_path.parent / '.env'}) for alerts", markup=False)
