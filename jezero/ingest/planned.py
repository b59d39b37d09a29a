"""Connector types that are planned but not built yet: check-config tells them from a typo."""

from jezero.hookspecs import hookimpl

PLANNED = {
    "gemini": "Gemini CLI sessions (~/.gemini/tmp)",
    "opencode": "OpenCode sessions",
    "cursor": "Cursor agent chats",
    "copilot": "GitHub Copilot CLI sessions",
}


@hookimpl(trylast=True)
def register_connector_types(register):
    for name, description in PLANNED.items():
        register(name, None, description=f"planned: {description}")
