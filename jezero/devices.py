"""Devices: computers that upload their agents' sessions into the inbox, each with its own key.

A device makes its key itself (`jezero_client.py init`) and shows only the key's SHA-256 digest;
the admin approves that digest here. Approving, revoking and rotating are edits to the config
file (a `[[clients]]` entry with `upload = true`, named after the device), written in one atomic
step so a running server, which re-reads the file within a second, never sees half an edit.
Approval also adds the device's inbox connectors, disabled, for the admin to enable.

The file is edited in place (tomlkit), so the admin's comments and layout survive; an edit that
would leave the config invalid is refused and nothing is written.
"""

from __future__ import annotations

import os
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import tomlkit
from filelock import FileLock

from jezero import config as config_mod
from jezero.client_core import DEVICE_NAME
from jezero.config import Config

# DEVICE_NAME: the device name is a client name and part of its source names (inbox-<device>-codex,
# at most 64 characters), hence shorter than a client name may be. It is the client core's rule,
# which `jezero_client.py init` checks on the device, so a name init takes is one approve takes.
DIGEST = re.compile(r"^[0-9a-f]{64}$")
# Inbox agent folder -> the connector type that reads it (jezero_connectors_inbox).
INBOX_TYPES = {"claude": "inbox-claude", "codex": "inbox-codex", "gemini": "inbox-gemini", "copilot": "inbox-copilot",
               "opencode": "inbox-opencode"}


class DeviceError(Exception):
    """A one-line reason the edit was not made."""


def source_name(device: str, agent: str) -> str:
    return f"inbox-{device}-{agent}"


def _check_name(name: str) -> None:
    if not DEVICE_NAME.match(name):
        raise DeviceError(f"invalid device name {name!r}: letters, digits, '.', '_' or '-' (at most 48)")


def _check_digest(digest: str) -> str:
    digest = digest.strip().lower()
    if not DIGEST.match(digest):
        raise DeviceError("the digest must be 64 hex characters, as `jezero_client.py init` prints it")
    return digest


def _table(**values) -> tomlkit.items.Table:
    table = tomlkit.table()
    for key, value in values.items():
        table.add(key, value)
    return table


def _append(doc: tomlkit.TOMLDocument, key: str, table: tomlkit.items.Table) -> None:
    found = doc.get(key)
    if found is None:
        aot = tomlkit.aot()
        aot.append(table)
        doc.add(key, aot)
    elif isinstance(found, tomlkit.items.AoT):
        if len(found) and not found[-1].as_string().endswith("\n\n"):
            found[-1].add(tomlkit.nl())  # a blank line between the last entry and the new one
        found.append(table)
    else:  # written inline, `clients = [{...}]`: keep that style
        inline = tomlkit.inline_table()
        inline.update(table.unwrap())
        found.append(inline)


def _entries(doc: tomlkit.TOMLDocument, key: str) -> list:
    found = doc.get(key)
    return list(found) if found is not None else []


def edit_config(path: Path, change: Callable[[tomlkit.TOMLDocument], None]) -> Config:
    """Apply `change` to the config file, check the result, and replace the file in one step."""
    with FileLock(str(path) + ".lock", timeout=10):
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        doc = tomlkit.parse(text)
        change(doc)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
        try:
            tmp.write_text(tomlkit.dumps(doc), encoding="utf-8")
            if path.exists():
                os.chmod(tmp, path.stat().st_mode & 0o777)
            try:
                config = config_mod.load(tmp)
            except config_mod.ConfigError as e:
                problems = "; ".join(str(p) for p in e.problems)
                raise DeviceError(f"the config would not be valid, nothing written: {problems}") from None
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
    config._path = path
    return config


def _installed_inbox_types() -> set[str]:
    from jezero import plugins

    types = plugins.connector_types()
    return {name for name in INBOX_TYPES.values() if name in types and types[name].build is not None}


@dataclass
class Approval:
    device: str
    config: Path
    connectors: list[str] = field(default_factory=list)  # the inbox connectors added (disabled)
    missing_types: list[str] = field(default_factory=list)  # inbox types not installed here


def approve(path: Path, name: str, digest: str, sources: list[str] | None = None) -> Approval:
    """Add the device as a client that may upload, and its inbox connectors, disabled."""
    _check_name(name)
    digest = _check_digest(digest)
    current = config_mod.load(path) if path.exists() else Config()
    inbox = current.inbox_path()
    for client in current.clients:
        if client.name == name:
            raise DeviceError(f"a client named {name!r} exists already: to give it a new key, "
                              f"`jezero device rotate {name} DIGEST`")
        if client.key_sha256 == digest:
            raise DeviceError(f"this key is already the key of client {client.name!r}")
    installed = _installed_inbox_types()
    result = Approval(name, path, missing_types=sorted(set(INBOX_TYPES.values()) - installed))
    existing = {c.name for c in current.connectors}

    def change(doc):
        _append(doc, "clients", _table(name=name, key_sha256=digest, sources=sources or ["*"], upload=True))
        for agent, type_name in INBOX_TYPES.items():
            source = source_name(name, agent)
            if type_name not in installed or source in existing:
                continue
            options = tomlkit.inline_table()
            options.update({"path": str(inbox.absolute() / name / agent)})
            _append(doc, "connectors", _table(name=source, type=type_name, enabled=False, options=options))
            result.connectors.append(source)

    edit_config(path, change)
    return result


def _device_entry(doc, name: str):
    for entry in _entries(doc, "clients"):
        if entry.get("name") == name:
            if not entry.get("upload", False):
                raise DeviceError(f"client {name!r} is not a device (it has no upload = true): edit the config "
                                  "by hand, or use `jezero new-token`")
            return entry
    raise DeviceError(f"no device named {name!r} in the config")


def revoke(path: Path, name: str) -> None:
    """Remove the device's client entry: its key stops working within a second. Its inbox
    connectors and uploaded files stay (what was uploaded can still be ingested)."""
    _check_name(name)
    if not path.exists():
        raise DeviceError(f"no config at {path}")

    def change(doc):
        entry = _device_entry(doc, name)
        clients = doc["clients"]
        index = next(i for i, e in enumerate(clients) if e is entry or e.get("name") == name)
        del clients[index]
        if not len(clients):
            del doc["clients"]

    edit_config(path, change)


def rotate(path: Path, name: str, digest: str) -> None:
    """Give the device a new key (made on the device with `init --new-key`); the old one stops."""
    _check_name(name)
    digest = _check_digest(digest)
    if not path.exists():
        raise DeviceError(f"no config at {path}")

    def change(doc):
        entry = _device_entry(doc, name)
        for other in _entries(doc, "clients"):
            if other.get("key_sha256") == digest and other.get("name") != name:
                raise DeviceError(f"this key is already the key of client {other.get('name')!r}")
        entry["key_sha256"] = digest

    edit_config(path, change)


def devices(config: Config) -> list[dict]:
    """Every device (a client with upload = true): its key digest, sources, inbox connectors, the
    files in its inbox folder, and what the inbox recorded of its uploads: per agent the last
    upload, files, bytes, client core and plugin versions, and the plugins seen (`uploads`)."""
    from jezero.inbox import uploads as upload_facts

    inbox = config.inbox_path()
    recorded = upload_facts.read(inbox)
    found = []
    for client in config.clients:
        if not client.upload:
            continue
        connectors = [{"name": c.name, "type": c.type, "enabled": c.enabled} for c in config.connectors
                      if c.name in {source_name(client.name, a) for a in INBOX_TYPES}]
        files, newest, size = 0, 0.0, 0
        for folder, dirs, names in os.walk(inbox / client.name):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            for n in names:
                if n.startswith("."):
                    continue
                try:
                    st = os.stat(os.path.join(folder, n))
                except OSError:
                    continue
                files += 1
                size += st.st_size
                newest = max(newest, st.st_mtime)
        found.append({
            "name": client.name, "key_sha256": client.key_sha256, "sources": list(client.sources),
            "connectors": connectors, "folder": str(inbox / client.name), "files": files, "bytes": size,
            "last_upload_at": datetime.fromtimestamp(newest, timezone.utc).isoformat(timespec="seconds") if newest else None,
            **upload_facts.device_facts(recorded, client.name),
        })
    return found


def uploads(config: Config, allowed: list[str] | None = None) -> list[dict]:
    """Each device that is approved or has uploaded, with what the inbox recorded of its uploads
    (jezero.inbox.uploads): per agent the last upload, files and bytes, core and plugin versions,
    and the plugins seen, each flagged `outdated` when its core is older than the server's.
    `allowed`: a key's source globs; a device's agent is listed only when the key may read its
    inbox source (inbox-<device>-<agent>), and a device only with at least one such agent."""
    from jezero.config import source_allowed
    from jezero.inbox import uploads as upload_facts

    data = upload_facts.read(config.inbox_path())
    approved = {c.name for c in config.clients if c.upload}
    found = []
    for name in sorted(approved | set(data["devices"])):
        facts = upload_facts.device_facts(data, name)
        for agent in facts["agents"]:
            agent["source"] = source_name(name, agent["agent"])
        if allowed is not None:
            facts["agents"] = [a for a in facts["agents"] if source_allowed(a["source"], allowed)]
            agents = [a["agent"] for a in facts["agents"]] or list(INBOX_TYPES)
            if not any(source_allowed(source_name(name, a), allowed) for a in agents):
                continue
        found.append({"device": name, "approved": name in approved, **facts})
    return found
