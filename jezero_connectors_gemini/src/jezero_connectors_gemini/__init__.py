"""Jezero connector type 'gemini': Gemini CLI chat recordings (`~/.gemini/tmp/*/chats`, or under
`$GEMINI_CLI_HOME`)."""

from jezero.plugin import hookimpl

from .connector import GeminiConnector, GeminiOptions, build, discover
from .demo import write_demo

__all__ = ["GeminiConnector", "GeminiOptions", "build", "discover", "register_connector_types", "write_demo"]

DESCRIPTION = "Gemini CLI sessions (~/.gemini/tmp/*/chats, or $GEMINI_CLI_HOME/.gemini)"


@hookimpl
def register_connector_types(register):
    register("gemini", build, description=DESCRIPTION, options=GeminiOptions, discover=discover, demo=write_demo)
