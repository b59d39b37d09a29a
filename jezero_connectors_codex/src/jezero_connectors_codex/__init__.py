"""Jezero connector type 'codex': OpenAI Codex CLI rollouts (every format generation) from a
Codex home (`$CODEX_HOME`, else `~/.codex`)."""

from jezero.plugin import hookimpl

from .actions import annotate
from .connector import CodexConnector, CodexOptions, build, discover
from .demo import demo

__all__ = ["CodexConnector", "CodexOptions", "build", "register_connector_types"]

DESCRIPTION = "OpenAI Codex CLI sessions ($CODEX_HOME or ~/.codex: sessions/, archived_sessions/, .jsonl.zst)"


@hookimpl
def register_connector_types(register):
    register("codex", build, description=DESCRIPTION, options=CodexOptions, discover=discover, demo=demo,
             normalize=annotate)
