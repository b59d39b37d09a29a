"""One item in full."""

from __future__ import annotations

from typing import Any

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Footer, Header

from jezero.tui.screens.common import (
    Base,
    Plain,
    later_text,
    minute,
)


class ItemScreen(Base):
    """One item in full, as get_item gives it; `o` adds the transcript, `l` what came later."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("o", "original", "Original"),
        Binding("l", "later", "Later"),
    ]

    def __init__(self, item_id: int) -> None:
        super().__init__()
        self.item_id = item_id
        self.with_original = False

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        with VerticalScroll(id="item-box"):
            yield Plain(f"loading item {self.item_id}", id="item")
            yield Plain("", id="item-later")
        yield from self.compose_status()
        yield Footer()

    def on_mount(self) -> None:
        self.load()

    @work(exclusive=True, group="item")
    async def load(self) -> None:
        it = await self.ask(self.app.remote.get_item(self.item_id, include_original=self.with_original))
        if it is None:
            return
        self.query_one("#item", Plain).show(_item_text(it))
        self.query_one("#item-box", VerticalScroll).focus()

    def action_original(self) -> None:
        self.with_original = not self.with_original
        self.load()

    @work(exclusive=True, group="item-later")
    async def action_later(self) -> None:
        answer = await self.ask(self.app.remote.later(self.item_id))
        if answer is None:
            return
        self.query_one("#item-later", Plain).show("\n" + later_text(answer.get("item") or {"id": self.item_id},
                                                                         answer))


def _item_text(it: dict[str, Any]) -> str:
    lines = [f"[{it.get('id')}] {it.get('title', '')}",
             (f"project {it.get('project') or '-'}  source {it.get('source', '')}  agent {it.get('agent', '')}  "
              f"date {minute(it.get('occurred_at'))}"), "", it.get("summary", "")]
    if it.get("questions"):
        lines += ["", "QUESTIONS"] + [f"  - {q}" for q in it["questions"]]
    if it.get("atoms"):
        lines += ["", "ATOMS"] + [f"  {a.get('type', '')}: {a.get('text', '')}" for a in it["atoms"]]
    if it.get("original"):
        lines += ["", "ORIGINAL (redacted)", it["original"]]
        if it.get("original_note"):
            lines.append(it["original_note"])
    return "\n".join(lines)
