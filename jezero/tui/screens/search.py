"""Search: live as you type, the score explained on demand, later one key away."""

from __future__ import annotations

from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.timer import Timer
from textual.widgets import DataTable, Footer, Header, Input

from jezero.tui.screens.common import (
    SEARCH_DELAY_SECONDS,
    Base,
    Plain,
    items_table,
    later_text,
    selected_id,
)


class SearchScreen(Base):
    """Live search; the score explained on demand; `later` one key away; an item in full."""

    BINDINGS = [
        Binding("slash", "focus_query", "Query"),
        Binding("e", "explain", "Explain score"),
        Binding("l", "later", "Later"),
        Binding("enter", "open", "Open", show=False),
        Binding("escape", "focus_results", "Results", show=False),
        Binding("down", "focus_results", "Results", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._timer: Timer | None = None
        self.hits: list[dict[str, Any]] = []
        self.explained = False

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        yield Input(placeholder="search past work: two to five distinctive words", id="query")
        yield DataTable(id="results", cursor_type="row")
        yield VerticalScroll(Plain("", id="detail"), id="detail-box")
        yield from self.compose_status()
        yield Footer()

    def on_mount(self) -> None:
        items_table(self.query_one("#results", DataTable), [], score=True)
        self.query_one("#query", Input).focus()

    @on(Input.Changed, "#query")
    def typed(self, event: Input.Changed) -> None:
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(SEARCH_DELAY_SECONDS, self.run_search)

    @on(Input.Submitted, "#query")
    def submitted(self) -> None:
        if self._timer is not None:
            self._timer.stop()
        self.run_search()
        self.action_focus_results()

    def run_search(self) -> None:
        self.search(self.query_one("#query", Input).value.strip(), self.explained)

    @work(exclusive=True, group="search")
    async def search(self, query: str, explain: bool) -> None:
        table = self.query_one("#results", DataTable)
        if len(query) < 3:
            self.hits = []
            items_table(table, [], score=True)
            self.say("")
            return
        answer = await self.ask(self.app.remote.search(query, explain=explain))
        if answer is None:
            return
        self.hits = answer.get("items", [])
        items_table(table, self.hits, score=True)
        self.say(answer.get("note") or f"{len(self.hits)} item(s)")
        self.show_detail()

    @on(DataTable.RowHighlighted, "#results")
    def highlighted(self) -> None:
        self.show_detail()

    @on(DataTable.RowSelected, "#results")
    def selected(self, event: DataTable.RowSelected) -> None:
        self.open_item(int(event.row_key.value))

    def current(self) -> dict[str, Any] | None:
        item_id = selected_id(self.query_one("#results", DataTable))
        return next((h for h in self.hits if h.get("id") == item_id), None)

    def show_detail(self) -> None:
        h = self.current()
        detail = self.query_one("#detail", Plain)
        if h is None:
            detail.show("")
            return
        text = f"[{h['id']}] {h.get('title', '')}\n{h.get('summary', '')}"
        if self.explained and h.get("explain"):
            text += "\n\nScore: " + _explanation(h["explain"])
        detail.show(text)

    def action_focus_query(self) -> None:
        self.query_one("#query", Input).focus()

    def action_focus_results(self) -> None:
        self.query_one("#results", DataTable).focus()

    def action_open(self) -> None:
        h = self.current()
        if h:
            self.open_item(h["id"])

    def action_explain(self) -> None:
        self.explained = not self.explained
        self.run_search()

    @work(exclusive=True, group="later")
    async def action_later(self) -> None:
        h = self.current()
        if h is None:
            return
        answer = await self.ask(self.app.remote.later(h["id"]))
        if answer is None:
            return
        self.query_one("#detail", Plain).show(later_text(h, answer))


def _explanation(explain: dict[str, Any]) -> str:
    parts = []
    for key, value in explain.items():
        if isinstance(value, float):
            value = f"{value:.4g}"
        elif isinstance(value, (list, dict)):
            value = ", ".join(map(str, value)) if isinstance(value, list) else \
                ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in value.items())
        parts.append(f"{key} = {value}")
    return "\n  ".join([""] + parts)
