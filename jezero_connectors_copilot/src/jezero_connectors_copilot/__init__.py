"""Jezero connector type 'copilot': GitHub Copilot CLI sessions (`~/.copilot/session-state`, or
under `$COPILOT_HOME`)."""

from jezero.plugin import hookimpl

from .connector import CopilotConnector, CopilotOptions, build, discover
from .demo import write_demo

__all__ = ["CopilotConnector", "CopilotOptions", "build", "discover", "register_connector_types", "write_demo"]

DESCRIPTION = "GitHub Copilot CLI sessions (~/.copilot/session-state, or $COPILOT_HOME/session-state)"


@hookimpl
def register_connector_types(register):
    register("copilot", build, description=DESCRIPTION, options=CopilotOptions, discover=discover, demo=write_demo)
