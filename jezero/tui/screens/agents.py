"""Agents: who brings items in, and whether each is current."""

from __future__ import annotations

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Footer, Header

from jezero.tui.remote import RemoteError
from jezero.tui.screens.common import (
    Base,
    Plain,
    add_row,
    day,
    minute,
)


class AgentsScreen(Base):
    """Each agent that brings items in: where it runs, its last upload and run, whether it is
    current. Rows come from Remote.agents()."""

    BINDINGS = [Binding("r", "refresh", "Refresh")]

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        yield DataTable(id="agents", cursor_type="row")
        yield Plain("", id="agents-note")
        yield from self.compose_status()
        yield Footer()

    def on_mount(self) -> None:
        self.action_refresh()

    @work(exclusive=True, group="agents")
    async def action_refresh(self) -> None:
        try:
            rows = await self.app.remote.agents()
        except RemoteError as e:
            self.failed(e)
            return
        table = self.query_one("#agents", DataTable)
        table.clear(columns=True)
        table.add_columns("device", "agent", "source", "items", "last item", "last run", "core", "health")
        for r in rows:
            flag = r.status.upper() or "-"
            if r.outdated_plugins:
                flag += " OUTDATED: " + ", ".join(r.outdated_plugins)
            add_row(table, r.device, r.agent, r.source, str(r.items), day(r.last_item_at), minute(r.last_run_at),
                          r.core_version or "-", flag, key=r.source)
        self.query_one("#agents-note", Plain).show(
            "device 'server': connectors the server runs itself. Devices uploading through the inbox are "
            "listed with their client core and plugin versions once they upload.")
        self.say(f"{len(rows)} agent(s)")
