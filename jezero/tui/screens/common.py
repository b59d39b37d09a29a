"""What the screens share. Each screen asks `self.app.remote` (jezero.tui.remote.Remote) and shows the
answer as plain text and tables: words, not colours, carry every state (OK, FAILING, STALE...),
so the app reads the same over SSH, in a monochrome terminal or in a screenshot."""

from __future__ import annotations

from collections.abc import Awaitable, Iterable
from typing import Any, TypeVar

from rich.text import Text
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import DataTable, OptionList, Static
from textual.widgets.option_list import Option

from jezero.tui.remote import RemoteError

# Typing pauses this long before the search runs: one search per word, not per key.
SEARCH_DELAY_SECONDS = 0.25
# Block characters of rising height for the per-day row (no colour needed to read it).
BARS = " ▁▂▃▄▅▆▇█"

T = TypeVar("T")


def day(stamp: str | None) -> str:
    return (stamp or "")[:10] or "-"


def minute(stamp: str | None) -> str:
    return (stamp or "")[:16].replace("T", " ") or "never"


def bars(counts: list[int]) -> str:
    top = max(counts or [0])
    if not top:
        return BARS[0] * len(counts)
    return "".join(BARS[0] if n == 0 else BARS[max(1, round(n / top * (len(BARS) - 1)))] for n in counts)


def add_row(table: DataTable, *cells: str, key: str) -> None:
    table.add_row(*(Text(c) for c in cells), key=key)


class Plain(Static):
    """A Static whose text is never read as markup."""

    def show(self, text: str) -> None:
        self.update(Text(text))


class Base(Screen):
    """What every screen shares: header, footer, a status line for errors."""

    def compose_status(self) -> ComposeResult:
        yield Plain("", id="status", classes="status")

    def say(self, text: str) -> None:
        self.query_one("#status", Plain).show(text)

    def failed(self, e: RemoteError) -> None:
        self.say(f"error: {e}")

    async def ask(self, call: Awaitable[T]) -> T | None:
        """The remote's answer, or None once the status line says why there is none."""
        try:
            return await call
        except RemoteError as e:
            self.failed(e)
            return None

    def open_item(self, item_id: int) -> None:
        from jezero.tui.screens.item import ItemScreen  # the item screen is a Base too

        self.app.push_screen(ItemScreen(item_id))


def fill_options(options: OptionList, entries: Iterable[tuple[str, str]]) -> None:
    """Replace the list's options with (label, id) pairs; highlight the first and focus the list."""
    options.clear_options()
    for label, key in entries:
        options.add_option(Option(Text(label), id=key))
    if options.option_count:
        options.highlighted = 0
        options.focus()


def items_table(table: DataTable, rows: list[dict[str, Any]], *, score: bool = False) -> None:
    table.clear(columns=True)
    # The title last: it is the one column that may be clipped by a narrow terminal.
    columns = ["id", "date", "project", "source"] + (["score"] if score else []) + ["title"]
    table.add_columns(*columns)
    for h in rows:
        cells = [str(h.get("id")), day(h.get("occurred_at")), h.get("project") or "-", h.get("source") or ""]
        if score:
            cells.append(f"{h.get('score', 0):.2f}")
        add_row(table, *cells, h.get("title") or "", key=str(h.get("id")))


def selected_id(table: DataTable) -> int | None:
    if not table.row_count:
        return None
    key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key
    return int(key.value) if key and key.value else None


def later_text(item: dict[str, Any], answer: dict[str, Any]) -> str:
    heading = ("NEWER ON THIS SUBJECT" if answer.get("matched_by") == "subject"
               else "NEWER IN THIS PROJECT (by date, not by subject)")
    lines = [f"Later than [{item['id']}] {item.get('title', '')}", heading]
    for h in answer.get("items", []):
        lines.append(f"  [{h['id']}] {day(h.get('occurred_at'))} {h.get('title', '')}")
    if answer.get("note"):
        lines.append(answer["note"])
    return "\n".join(lines)
