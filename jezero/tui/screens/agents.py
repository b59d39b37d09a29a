"""Agents: who brings items in, and whether each is current."""

from __future__ import annotations

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Footer, Header

from jezero.tui.remote import AgentRow
from jezero.tui.screens.common import (
    Base,
    Plain,
    add_row,
    day,
    minute,
)


def health(r: AgentRow) -> str:
    """The row's state in words: the connector's health, then OUTDATED when the device's core is
    older than the server's (no colour carries it)."""
    words = [r.status.upper()] if r.status else []
    if not r.uploaded:
        words.append("NO UPLOAD YET")
    if r.outdated or r.outdated_plugins:
        words.append("OUTDATED")
    return " ".join(words) or "-"


def outdated_lines(rows: list[AgentRow], ours: str | None) -> list[str]:
    """One line per outdated device agent or plugin, saying what is old and what to do."""
    lines = []
    for r in rows:
        if r.outdated:
            core = f"core {r.core_version}" if r.core_version else "a core that does not say its version"
            lines.append(f"OUTDATED {r.device}/{r.agent}: its last upload came with {core}, older than the "
                         f"server's {ours or '?'}" + (f" (plugin {r.plugin})" if r.plugin else ""))
        for plugin in r.outdated_plugins:
            if plugin != r.plugin or not r.outdated:
                lines.append(f"OUTDATED {r.device}: plugin {plugin} carries an older core than the server's "
                             f"{ours or '?'}")
    return lines


class AgentsScreen(Base):
    """Each agent that brings items in: each device and agent that uploads through the inbox (last
    upload, client core and plugin versions, outdated ones flagged in words), then the server's own
    connectors. Rows come from Remote.agents()."""

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
        found = await self.ask(self.app.remote.agents())
        if found is None:
            return
        rows = found.rows
        table = self.query_one("#agents", DataTable)
        table.clear(columns=True)
        table.add_columns("device", "agent", "source", "items", "last item", "last upload", "last run", "core",
                          "plugin", "health")
        for i, r in enumerate(rows):
            uploaded = minute(r.last_upload_at) if r.device not in ("server", "?") else "-"
            add_row(table, r.device, r.agent, r.source, str(r.items), day(r.last_item_at), uploaded,
                    minute(r.last_run_at), r.core_version or "-", r.plugin or "-", health(r), key=f"{i}:{r.source}")
        ours = found.client_core_version
        note = [f"This server ships client core {ours or '?'}; a device whose plugins carry an older one is "
                "flagged OUTDATED. Device 'server': the connectors the server runs itself."]
        note += outdated_lines(rows, ours)
        self.query_one("#agents-note", Plain).show("\n".join(note))
        outdated = sum(1 for r in rows if r.outdated or r.outdated_plugins)
        self.say(f"{len(rows)} agent(s)" + (f", {outdated} outdated" if outdated else ""))
