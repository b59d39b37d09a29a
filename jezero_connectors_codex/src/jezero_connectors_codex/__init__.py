"""Jezero connector type 'codex': OpenAI Codex CLI rollouts (every format generation) from a
Codex home (`$CODEX_HOME`, else `~/.codex`)."""

from jezero import hookimpl

from .connector import CodexConnector, build

__all__ = ["CodexConnector", "build", "register_connector_types"]

DESCRIPTION = "OpenAI Codex CLI sessions ($CODEX_HOME or ~/.codex: sessions/, archived_sessions/, .jsonl.zst)"


@hookimpl
def register_connector_types(register):
    register("codex", build, description=DESCRIPTION)
