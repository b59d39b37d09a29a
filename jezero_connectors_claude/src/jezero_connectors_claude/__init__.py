"""Jezero connector type 'claude': Claude Code session transcripts (`~/.claude/projects`)."""

from __future__ import annotations

from typing import Any

from jezero.plugin import ConnectorContext, hookimpl

from jezero_connectors_claude.actions import annotate
from jezero_connectors_claude.connector import (AGENT, ClaudeConnector, ClaudeOptions, build_connector, default_root,
                                                discover)
from jezero_connectors_claude.demo import demo

DESCRIPTION = "Claude Code sessions (~/.claude/projects, or $CLAUDE_CONFIG_DIR/projects)"

__all__ = ["AGENT", "ClaudeConnector", "ClaudeOptions", "build", "default_root", "register_connector_types"]


def build(options: dict[str, Any], context: ConnectorContext) -> ClaudeConnector:
    """Options: `path`, a Claude Code store root or its `projects/` folder (default
    `$CLAUDE_CONFIG_DIR/projects` if set, else `~/.claude/projects`). Any other option is a
    ValueError naming it."""
    return build_connector(options, context)


@hookimpl
def register_connector_types(register):
    register("claude", build, description=DESCRIPTION, options=ClaudeOptions, discover=discover, demo=demo,
             normalize=annotate)
