"""What a hook adds when a session starts: a short protocol, then the project's newest items by
date (no search involved). The app's Agent view shows the same text."""

from __future__ import annotations

from typing import Any, Iterable, Mapping

# How many of the project's newest items a session starts with.
NEWEST_ITEMS = 5

PROTOCOL = """\
Jezero holds summaries of past agent sessions (read-only MCP tools: search, later, timeline, get_item, catalog).
- Search it before non-trivial work; use distinctive words (an error, a file, a tool).
- Before relying on a decision or a number from an item, call later(item_id) for newer work.
- Cite the item ids you use, like [item 42].
- Never guess: if Jezero has nothing, say so.
- There is nothing to save: sessions are summarised after they end."""


def render(project: str | None, items: Iterable[Mapping[str, Any]]) -> str:
    """The protocol, and the project's newest items as [id] date title lines when there are any."""
    lines = [f"[{h.get('id')}] {str(h.get('occurred_at') or '')[:10]} {h.get('title') or ''}".rstrip()
             for h in list(items)[:NEWEST_ITEMS]]
    if not project or not lines:
        return PROTOCOL
    return PROTOCOL + f"\n\nRecent work in project {project}:\n" + "\n".join(lines)
