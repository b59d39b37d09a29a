"""Jezero connector types 'inbox-claude', 'inbox-codex', 'inbox-gemini', 'inbox-copilot' and
'inbox-opencode': the sessions a device uploaded.

A device's uploads sit in `<inbox>/<device>/<agent>/`, laid out exactly like the agent's own store,
so each type here is the agent's own connector pointed at that folder, plus one thing a local
store does not have: the project the device resolved for each session, which it sent with the
upload and which beats the summarizer's guess. `jezero device approve` writes one connector of
each type per device, disabled.
"""

from __future__ import annotations

from jezero.plugin import FolderPath, Options, hookimpl

from jezero_connectors_inbox.connectors import (
    InboxClaude,
    InboxCodex,
    InboxCopilot,
    InboxGemini,
    InboxOpenCode,
    build_claude,
    build_codex,
    build_copilot,
    build_gemini,
    build_opencode,
)

__all__ = ["InboxClaude", "InboxCodex", "InboxCopilot", "InboxGemini", "InboxOpenCode", "register_connector_types"]


class InboxOptions(Options):
    """`path`: the device's folder for this agent, `<inbox>/<device>/<agent>`."""

    path: FolderPath


@hookimpl
def register_connector_types(register):
    register("inbox-claude", build_claude, description="Claude Code sessions uploaded by a device (<inbox>/<device>/claude)",
             options=InboxOptions)
    register("inbox-codex", build_codex, description="Codex sessions uploaded by a device (<inbox>/<device>/codex)",
             options=InboxOptions)
    register("inbox-gemini", build_gemini,
             description="Gemini CLI chats uploaded by a device (<inbox>/<device>/gemini)", options=InboxOptions)
    register("inbox-copilot", build_copilot,
             description="Copilot CLI sessions uploaded by a device (<inbox>/<device>/copilot)", options=InboxOptions)
    register("inbox-opencode", build_opencode,
             description="OpenCode's store uploaded by a device (<inbox>/<device>/opencode)", options=InboxOptions)
