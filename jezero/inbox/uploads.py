"""The inbox's own record of who uploads: per device and agent, the last upload, the files and bytes
received, and the client core and plugin versions the device sent with it (the X-Jezero-Client
and X-Jezero-Plugin headers).

It lives in one small private JSON file at the top of the inbox, not in the library: uploads
happen while connectors write the library, and these facts describe the devices, not past work.
Every change is a read, an edit and an atomic replace under a file lock, so concurrent uploads
(threads of one server, or several servers on one inbox) never lose each other's counts, and a
reader sees the old file or the new one. A damaged file is read as empty, with a warning, and
replaced by the next upload: the facts come back with the uploads, and no uploaded file depends
on them.

The server ships a copy of the client core (jezero/client_core.py, written by
scripts/build_clients.py); a device whose core is older than that copy is "outdated".
"""

from __future__ import annotations

import json
import logging
import os
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from filelock import FileLock

from jezero.client_core import CORE_VERSION
from jezero.private import FILE_MODE

log = logging.getLogger("jezero.inbox")

STATE_FILE = ".uploads.json"  # hidden: no connector walk or device folder can ever hold it
LOCK_TIMEOUT_SECONDS = 10  # an edit holds the lock for a few milliseconds
# What a version header may hold: a version number with an optional suffix ("0.2.0", "1.0.0rc1").
_VERSION = re.compile(r"^[0-9][0-9A-Za-z.+-]{0,31}$")
_PLUGIN = re.compile(r"^[a-z0-9][a-z0-9._-]{0,31}/[0-9A-Za-z][0-9A-Za-z.+-]{0,31}$")
_NUMBERS = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?")


def server_core_version() -> str:
    """The client core this server ships (its copy in jezero/client_core.py)."""
    return CORE_VERSION


def version_key(version: str | None) -> tuple[int, int, int] | None:
    """(major, minor, patch) of a version, None when it does not start with numbers."""
    found = _NUMBERS.match(version) if isinstance(version, str) else None
    if not found:
        return None
    return int(found[1]), int(found[2]), int(found[3] or 0)


def outdated(core: str | None, server_core: str | None = None) -> bool:
    """True when a device's core is older than the server's. A device that sent no version runs a
    core from before versions were sent, hence older too."""
    theirs, ours = version_key(core), version_key(server_core or CORE_VERSION)
    if ours is None:
        return False
    return theirs is None or theirs < ours


def clean_version(value: str | None) -> str | None:
    if value is None:
        return None
    value = value.strip()
    if _VERSION.match(value):
        return value
    log.warning("inbox: ignored a client version header that is not a version number: %r", value[:40])
    return None


def clean_plugin(value: str | None) -> str | None:
    if value is None:
        return None
    value = value.strip()
    if _PLUGIN.match(value):
        return value
    log.warning("inbox: ignored a plugin header that is not <agent>/<version>: %r", value[:70])
    return None


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def _empty() -> dict[str, Any]:
    return {"devices": {}}


def read(inbox: Path) -> dict[str, Any]:
    """{"devices": {device: {"agents": {agent: facts}, "plugins": {name: facts}}}}; empty when
    nothing has been uploaded yet or the file cannot be read."""
    path = inbox / STATE_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return _empty()
    except (OSError, ValueError, UnicodeDecodeError) as e:
        log.warning("inbox: cannot read %s (%s): device upload facts start afresh", path, e)
        return _empty()
    if not isinstance(data, dict) or not isinstance(data.get("devices"), dict):
        return _empty()
    return data


def _write(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    try:
        os.write(fd, json.dumps(data, indent=1, sort_keys=True).encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


@dataclass
class Received:
    """One accepted upload, as the inbox route saw it."""

    device: str
    agent: str
    changed: bool  # False: the same bytes were there already
    bytes: int
    core_version: str | None
    plugin: str | None


def _table(parent: dict[str, Any], key: str) -> dict[str, Any]:
    """parent[key] as a dict, made afresh when missing or edited into something else by hand."""
    if not isinstance(parent.get(key), dict):
        parent[key] = {}
    return parent[key]


def _count(value: Any) -> int:
    return value if isinstance(value, int) and value >= 0 else 0


def record(inbox: Path, upload: Received) -> None:
    """Add one accepted upload to the device's facts. The caller has made the inbox folder."""
    path = inbox / STATE_FILE
    with FileLock(str(inbox / (STATE_FILE + ".lock")), timeout=LOCK_TIMEOUT_SECONDS, mode=FILE_MODE):
        data = read(inbox)
        device = _table(data["devices"], upload.device)
        facts = _table(_table(device, "agents"), upload.agent)
        at = _now()
        facts["last_upload_at"] = at
        facts["files"], facts["bytes"] = _count(facts.get("files")), _count(facts.get("bytes"))
        if upload.changed:
            facts["files"] += 1
            facts["bytes"] += upload.bytes
            facts["last_change_at"] = at
        facts["core_version"] = upload.core_version
        facts["plugin"] = upload.plugin
        if upload.plugin:
            name, _, version = upload.plugin.partition("/")
            _table(device, "plugins")[name] = {"version": version, "core_version": upload.core_version,
                                               "last_upload_at": at}
        _write(path, data)


def device_facts(data: dict[str, Any], device: str, server_core: str | None = None) -> dict[str, Any]:
    """The facts of one device, ready to show: each agent's last upload, files, bytes, core and
    plugin, and the plugins seen, each with `outdated` said in words by the callers."""
    found = data.get("devices", {}).get(device)
    found = found if isinstance(found, dict) else {}
    server_core = server_core or CORE_VERSION
    agents = []
    for agent, facts in sorted(_table(found, "agents").items()):
        if not isinstance(facts, dict):
            continue
        core = facts.get("core_version")
        agents.append({"agent": agent, "last_upload_at": facts.get("last_upload_at"),
                       "files": _count(facts.get("files")), "bytes": _count(facts.get("bytes")),
                       "core_version": core, "plugin": facts.get("plugin"), "outdated": outdated(core, server_core)})
    plugins = []
    for name, facts in sorted(_table(found, "plugins").items()):
        if not isinstance(facts, dict):
            continue
        core = facts.get("core_version")
        plugins.append({"plugin": f"{name}/{facts.get('version')}", "core_version": core,
                        "last_upload_at": facts.get("last_upload_at"), "outdated": outdated(core, server_core)})
    return {"agents": agents, "plugins": plugins}
