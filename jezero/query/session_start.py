"""What a hook adds when a session starts: the protocol, then the project's newest items by date
(no search). The text comes from the client core that the hooks run (jezero/client_core.py, a
copy of clients/core/jezero_client.py), so the app's Agent view shows exactly what they inject."""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from jezero.client_core import NEWEST_ITEMS, PROTOCOL, session_start_text

__all__ = ["NEWEST_ITEMS", "PROTOCOL", "render"]


def render(project: str | None, items: Iterable[Mapping[str, Any]]) -> str:
    """The protocol, and the project's newest items as [id] date title lines when there are any."""
    return session_start_text(project, list(items))
