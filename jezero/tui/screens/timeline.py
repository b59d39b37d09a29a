"""Timeline: a project's or a source's items by date."""

from __future__ import annotations

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import DataTable, Footer, Header, OptionList

from jezero.tui.screens.common import (
    Base,
    fill_options,
    items_table,
    selected_id,
)


class TimelineScreen(Base):
    """A project's or a source's items by date, newest first."""

    BINDINGS = [Binding("r", "refresh", "Refresh"), Binding("enter", "open", "Open", show=False)]

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        with Horizontal():
            yield OptionList(id="scopes")
            yield DataTable(id="items", cursor_type="row")
        yield from self.compose_status()
        yield Footer()

    def on_mount(self) -> None:
        items_table(self.query_one("#items", DataTable), [])
        self.action_refresh()

    @work(exclusive=True, group="catalog")
    async def action_refresh(self) -> None:
        cat = await self.ask(self.app.remote.catalog())
        if cat is None:
            return
        fill_options(self.query_one("#scopes", OptionList),
                     [(f"project {p['name']} ({p['items']})", f"project:{p['name']}") for p in cat.get("projects", [])]
                     + [(f"source {s['name']} ({s['items']})", f"source:{s['name']}") for s in cat.get("sources", [])])

    @on(OptionList.OptionHighlighted, "#scopes")
    def scope_chosen(self, event: OptionList.OptionHighlighted) -> None:
        kind, _, name = (event.option.id or "").partition(":")
        self.load(kind, name)

    @on(OptionList.OptionSelected, "#scopes")
    def scope_entered(self) -> None:
        self.query_one("#items", DataTable).focus()

    @work(exclusive=True, group="timeline")
    async def load(self, kind: str, name: str) -> None:
        answer = await self.ask(self.app.remote.timeline(limit=50, **{kind: name}))
        if answer is None:
            return
        items = answer.get("items", [])
        items_table(self.query_one("#items", DataTable), items)
        self.say(f"{kind} {name}: {len(items)} item(s), newest first")

    @on(DataTable.RowSelected, "#items")
    def selected(self, event: DataTable.RowSelected) -> None:
        self.open_item(int(event.row_key.value))

    def action_open(self) -> None:
        item_id = selected_id(self.query_one("#items", DataTable))
        if item_id is not None:
            self.open_item(item_id)
