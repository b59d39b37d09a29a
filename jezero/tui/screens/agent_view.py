"""Agent view: exactly what the hooks add to a new session."""

from __future__ import annotations

from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.timer import Timer
from textual.widgets import Footer, Header, Input, OptionList

from jezero.query import first_prompt, session_start
from jezero.tui.remote import RemoteError
from jezero.tui.screens.common import (
    SEARCH_DELAY_SECONDS,
    Base,
    Plain,
    fill_options,
)


class AgentViewScreen(Base):
    """Exactly what the hooks inject: at session start the protocol and the project's newest
    items; on the first prompt the related items the first-prompt rule keeps."""

    BINDINGS = [Binding("r", "refresh", "Refresh"), Binding("escape", "focus_projects", "Projects")]

    def __init__(self) -> None:
        super().__init__()
        self._timer: Timer | None = None
        self.project: str | None = None

    def action_focus_projects(self) -> None:
        self.query_one("#projects", OptionList).focus()

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        with Horizontal():
            yield OptionList(id="projects")
            with Vertical(id="agent-view"):
                yield Input(placeholder="the session's first message", id="first-message")
                yield VerticalScroll(Plain("", id="injected"))
        yield from self.compose_status()
        yield Footer()

    def on_mount(self) -> None:
        self.action_refresh()

    @work(exclusive=True, group="projects")
    async def action_refresh(self) -> None:
        cat = await self.ask(self.app.remote.catalog())
        if cat is None:
            return
        fill_options(self.query_one("#projects", OptionList), [(p["name"], p["name"]) for p in cat.get("projects", [])])

    @on(OptionList.OptionHighlighted, "#projects")
    def project_chosen(self, event: OptionList.OptionHighlighted) -> None:
        self.project = event.option.id
        self.compute()

    @on(OptionList.OptionSelected, "#projects")
    def project_entered(self) -> None:
        self.query_one("#first-message", Input).focus()

    @on(Input.Changed, "#first-message")
    def typed(self) -> None:
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(SEARCH_DELAY_SECONDS, self.compute)

    def compute(self) -> None:
        self.inject(self.project, self.query_one("#first-message", Input).value)

    @work(exclusive=True, group="inject")
    async def inject(self, project: str | None, message: str) -> None:
        try:
            newest = (await self.app.remote.timeline(project=project, limit=session_start.NEWEST_ITEMS)).get("items", []) \
                if project else []
            arguments = first_prompt.search_arguments(message)  # exactly what the hook asks
            hits = (await self.app.remote.call("search", **arguments)).get("items", []) if arguments else []
        except RemoteError as e:
            self.failed(e)
            return
        related = first_prompt.render(first_prompt.related(message, hits))
        words = first_prompt.prompt_words(message)
        text = ("AT SESSION START\n\n" + session_start.render(project, newest) + "\n\nON THE FIRST PROMPT\n\n"
                + (related or f"(nothing: {_why_nothing(words, hits)})"))
        self.query_one("#injected", Plain).show(text)
        self.say(f"project {project}: distinctive words {', '.join(words) or 'none'}")


def _why_nothing(words: list[str], hits: list[dict[str, Any]]) -> str:
    if len(words) < first_prompt.MIN_SHARED_WORDS:
        return "fewer than two distinctive words"
    if not hits:
        return "the search found nothing"
    return "no result shares two whole words with the message in its title or summary"
