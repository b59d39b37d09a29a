"""Jezero connector type 'inbox': the folders devices upload into (`<inbox>/<device>/<agent>/...`),
each read with the code of the agent's own connector. Registration and options only: the reader
lands with its issue, and check-config already reports a misspelt or mistyped option."""

from jezero.plugin import FolderPath, Options, hookimpl


class InboxOptions(Options):
    """One device's uploads of one agent."""

    device: str  # the device's name, as approved
    agent: str  # the connector type whose layout the uploads mirror ("claude", "codex", ...)
    path: FolderPath | None = None  # the inbox root; default: the library's inbox folder


@hookimpl
def register_connector_types(register):
    register("inbox", None, description="planned: inbox", options=InboxOptions)
