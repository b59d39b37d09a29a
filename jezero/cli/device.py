"""`jezero device approve | list | revoke | rotate`: the devices that upload into the inbox."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from jezero.cli import app
from jezero.cli.common import err, fail, is_terminal, load_config, out, print_json, state

device_app = typer.Typer(
    help="Devices: computers whose agents upload their sessions into this server's inbox. A device makes its own key "
         "(`jezero_client.py init --server URL --device NAME`) and prints the line to approve it. Every command here is "
         "an edit to the config, in force on a running server within a second.",
    no_args_is_help=True,
)
app.add_typer(device_app, name="device")


def _path():
    from jezero import config as config_mod

    return config_mod.resolve_config_path(state.config_path)


def _run(action):
    from jezero import config as config_mod
    from jezero.devices import DeviceError

    try:
        return action()
    except DeviceError as e:
        fail(str(e), 2)
    except config_mod.ConfigError as e:
        fail(f"the config has problems, fix them first: {'; '.join(str(p) for p in e.problems)}", 2)


@device_app.command("approve")
def approve(
    name: Annotated[str, typer.Argument(help="The device's name, as it gave it to `jezero_client.py init`.")],
    digest: Annotated[str, typer.Argument(help="The SHA-256 digest of the device's key, as init printed it.")],
    sources: Annotated[Optional[list[str]], typer.Option("--sources", "-s", help="A glob over source names the device's agents may read; repeat for more (default: every source).")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Let a device upload and read: adds its client entry (upload = true) and its inbox connectors, disabled."""
    from jezero.devices import approve as do_approve

    path = _path()
    result = _run(lambda: do_approve(path, name, digest, sources))
    if json_out:
        print_json({"device": name, "config": str(path), "connectors": result.connectors,
                    "missing_types": result.missing_types})
        return
    out.print(f"approved {name} in {path}: its uploads are accepted within a second", markup=False)
    if result.connectors:
        out.print(f"inbox connectors added, disabled: {', '.join(result.connectors)} "
                  "(set enabled = true, or run them by name: jezero run " + " ".join(result.connectors) + ")",
                  markup=False)
    for warning in _overreaching(path):
        err.print(f"warning: {warning}", markup=False)
    if result.missing_types:
        err.print(f"warning: {', '.join(result.missing_types)} not installed (pip install jezero-connectors-inbox), "
                  "so no inbox connector was added", markup=False)


def _overreaching(path) -> list[str]:
    """config.overreaching_clients of the config as approve left it (nothing when it cannot be read)."""
    from jezero import config as config_mod

    try:
        return config_mod.overreaching_clients(config_mod.load(path, must_exist=True))
    except config_mod.ConfigError:
        return []


@device_app.command("list")
def list_devices(
    json_out: Annotated[Optional[bool], typer.Option("--json/--pretty", help="JSON (the default when not on a terminal) or a table.")] = None,
) -> None:
    """The approved devices: key digest, inbox connectors, files uploaded and when last; per agent, the client core and plugin versions it sent, flagged OUTDATED when older than this server's core."""
    from jezero.devices import devices

    found = devices(load_config())
    if json_out or (json_out is None and not is_terminal()):
        print_json(found)
        return
    if not found:
        out.print("no device approved yet: on the device, run `jezero_client.py init --server URL --device NAME`",
                  markup=False)
        return
    from rich.table import Table

    table = Table("device", "key", "connectors", "files", "last upload")
    for d in found:
        connectors = ", ".join(f"{c['name']}{'' if c['enabled'] else ' (disabled)'}" for c in d["connectors"]) or "-"
        table.add_row(d["name"], d["key_sha256"][:12] + "…", connectors, str(d["files"]), d["last_upload_at"] or "-")
    out.print(table)
    out.print(uploads_table(found))


def uploads_table(found: list[dict]):
    """Per device and agent: the last upload and the versions it came with, in words."""
    from rich.table import Table

    from jezero.inbox.uploads import server_core_version

    ours = server_core_version()
    table = Table("device", "agent", "last upload", "files", "bytes", "core", "plugin", "state",
                  title=f"uploads (this server ships client core {ours})")
    for d in found:
        if not d["agents"]:
            table.add_row(d["name"], "-", "never", "0", "0", "-", "-", "no upload yet")
        for a in d["agents"]:
            state = (f"OUTDATED: core {a['core_version'] or 'not sent'}, older than {ours}" if a["outdated"]
                     else "current")
            table.add_row(d["name"], a["agent"], a["last_upload_at"] or "-", str(a["files"]), str(a["bytes"]),
                          a["core_version"] or "-", a["plugin"] or "-", state)
        shown = {a["plugin"] for a in d["agents"] if a["outdated"]}
        for plugin in d["plugins"]:
            if plugin["outdated"] and plugin["plugin"] not in shown:
                table.add_row(d["name"], "", "", "", "", plugin["core_version"] or "-", plugin["plugin"],
                              f"OUTDATED plugin: update {plugin['plugin'].partition('/')[0]}'s Jezero plugin")
    return table


@device_app.command("revoke")
def revoke(
    name: Annotated[str, typer.Argument(help="The device to shut out.")],
) -> None:
    """Remove a device's key: its uploads and reads are refused within a second. Its connectors and files stay."""
    from jezero.devices import revoke as do_revoke

    _run(lambda: do_revoke(_path(), name))
    out.print(f"revoked {name}: its key is refused within a second (its inbox folder and connectors are kept)",
              markup=False)


@device_app.command("rotate")
def rotate(
    name: Annotated[str, typer.Argument(help="The device.")],
    digest: Annotated[str, typer.Argument(help="The digest of its new key (`jezero_client.py init --new-key` prints it).")],
) -> None:
    """Replace a device's key with a new one made on the device; the old key stops within a second."""
    from jezero.devices import rotate as do_rotate

    _run(lambda: do_rotate(_path(), name, digest))
    out.print(f"rotated the key of {name}: the old key is refused within a second", markup=False)
