"""Home: what the library holds and whether each source is alive."""

from __future__ import annotations

from typing import Any

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Footer, Header

from jezero.tui.screens.common import (
    Base,
    Plain,
    add_row,
    bars,
    day,
    minute,
)


class HomeScreen(Base):
    """What the library holds and whether each source is alive."""

    BINDINGS = [Binding("r", "refresh", "Refresh")]

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        with VerticalScroll():
            yield Plain("", id="totals")
            yield Plain("Sources", classes="heading")
            yield DataTable(id="sources", cursor_type="row")
            yield Plain("Projects", classes="heading")
            yield DataTable(id="projects", cursor_type="row")
            yield Plain("", id="per-day")
        yield from self.compose_status()
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#sources", DataTable).add_columns("source", "items", "recent", "last item", "health",
                                                          "last success", "problem")
        self.query_one("#projects", DataTable).add_columns("project", "items", "recent", "last item")
        self.action_refresh()

    @work(exclusive=True, group="home")
    async def action_refresh(self) -> None:
        data = await self.ask(self.app.remote.overview())
        if data is None:
            return
        self.show(data)

    def show(self, data: dict[str, Any]) -> None:
        health = {c["name"]: c for c in data.get("connectors", [])}
        problems = sum(1 for c in health.values() if c.get("status") not in ("ok", "disabled"))
        self.query_one("#totals", Plain).show(
            f"{data.get('total', 0)} items, {data.get('recent', 0)} in the last {data.get('days')} days; "
            + (f"{problems} source(s) need attention" if problems else "every source healthy")
            + _devices_line(data.get("devices") or []))
        sources = self.query_one("#sources", DataTable)
        sources.clear()
        seen = set()
        for s in data.get("sources", []):
            c = health.get(s["name"], {})
            seen.add(s["name"])
            add_row(sources, s["name"], str(s["items"]), str(s["recent"]), day(s.get("last_at")),
                            (c.get("status") or "not configured").upper(), minute(c.get("last_success_at"))
                            if c else "-", _first_problem(c), key=s["name"])
        for name, c in health.items():  # configured, nothing stored yet
            if name not in seen:
                add_row(sources, name, "0", "0", "-", c.get("status", "").upper(), minute(c.get("last_success_at")),
                                _first_problem(c), key=name)
        projects = self.query_one("#projects", DataTable)
        projects.clear()
        for p in data.get("projects", []):
            add_row(projects, p["name"], str(p["items"]), str(p["recent"]), day(p.get("last_at")), key=p["name"])
        _fit(sources)
        _fit(projects)
        per_day = data.get("per_day", [])
        if per_day:
            counts = [d["items"] for d in per_day]
            self.query_one("#per-day", Plain).show(
                f"Items per day, {per_day[0]['day']} .. {per_day[-1]['day']} (highest {max(counts)}):\n"
                f"|{bars(counts)}|")
        self.say("")


def _fit(table: DataTable) -> None:
    """As tall as its rows: a home screen of short tables, no scrolling inside each."""
    table.styles.height = table.row_count + 1


def _devices_line(devices: list[dict[str, Any]]) -> str:
    """How many devices upload and how many carry an older client core (details on Agents)."""
    if not devices:
        return ""
    late = sum(1 for d in devices if any(a.get("outdated") for a in d.get("agents", []))
               or any(p.get("outdated") for p in d.get("plugins", [])))
    uploading = sum(1 for d in devices if d.get("agents"))
    return (f"\n{len(devices)} device(s), {uploading} of them uploading; "
            + (f"{late} OUTDATED (see Agents)" if late else "every client core current"))


def _first_problem(c: dict[str, Any]) -> str:
    problems = c.get("problems") or []
    return f"{problems[0]['kind']}: {problems[0]['detail']}"[:60] if problems else ""
