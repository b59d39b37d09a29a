"""Jezero connector types 'inbox-claude' and 'inbox-codex': the sessions a device uploaded.

A device's uploads sit in `<inbox>/<device>/<agent>/`, laid out exactly like the agent's own store,
so each type here is the agent's own connector pointed at that folder, plus one thing a local
store does not have: the project the device resolved for each session, which it sent with the
upload and which beats the summarizer's guess. `jezero device approve` writes one connector of
each type per device, disabled.
"""

from __future__ import annotations

from typing import Any

from jezero.plugin import ConnectorContext, FolderPath, Options, hookimpl

from jezero_connectors_inbox.connectors import InboxClaude, InboxCodex, build_claude, build_codex

__all__ = ["InboxClaude", "InboxCodex", "register_connector_types"]


class InboxOptions(Options):
    """`path`: the device's folder for this agent, `<inbox>/<device>/<agent>`."""

    path: FolderPath


def _claude(options: dict[str, Any], context: ConnectorContext) -> InboxClaude:
    return build_claude(options, context)


def _codex(options: dict[str, Any], context: ConnectorContext) -> InboxCodex:
    return build_codex(options, context)


@hookimpl
def register_connector_types(register):
    register("inbox-claude", _claude, description="Claude Code sessions uploaded by a device (<inbox>/<device>/claude)",
             options=InboxOptions)
    register("inbox-codex", _codex, description="Codex sessions uploaded by a device (<inbox>/<device>/codex)",
             options=InboxOptions)
