"""The app's screens. Each one asks `self.app.remote` (jezero.tui.remote.Remote) and shows the
answer as plain text and tables: words, not colours, carry every state (OK, FAILING, STALE...),
so the app reads the same over SSH, in a monochrome terminal or in a screenshot."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import DataTable, Footer, Header, Input, OptionList, Static
from textual.widgets.option_list import Option

from jezero.query import first_prompt, session_start
from jezero.tui.remote import RemoteError

# Typing pauses this long before the search runs: one search per word, not per key.
SEARCH_DELAY_SECONDS = 0.25
# Block characters of rising height for the per-day row (no colour needed to read it).
BARS = " ▁▂▃▄▅▆▇█"


def day(stamp: str | None) -> str:
    return (stamp or "")[:10] or "-"


def minute(stamp: str | None) -> str:
    return (stamp or "")[:16].replace("T", " ") or "never"


def bars(counts: list[int]) -> str:
    top = max(counts or [0])
    if not top:
        return BARS[0] * len(counts)
    return "".join(BARS[0] if n == 0 else BARS[max(1, round(n / top * (len(BARS) - 1)))] for n in counts)


def plain(text: str) -> Text:
    """Text shown as is: titles and summaries hold brackets that must not be read as markup."""
    return Text(text)


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

    def open_item(self, item_id: int) -> None:
        self.app.push_screen(ItemScreen(item_id))


def _items_table(table: DataTable, rows: list[dict[str, Any]], *, score: bool = False) -> None:
    table.clear(columns=True)
    # The title last: it is the one column that may be clipped by a narrow terminal.
    columns = ["id", "date", "project", "source"] + (["score"] if score else []) + ["title"]
    table.add_columns(*columns)
    for h in rows:
        cells = [str(h.get("id")), day(h.get("occurred_at")), h.get("project") or "-", h.get("source") or ""]
        if score:
            cells.append(f"{h.get('score', 0):.2f}")
        add_row(table, *cells, h.get("title") or "", key=str(h.get("id")))


def _selected_id(table: DataTable) -> int | None:
    if not table.row_count:
        return None
    key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key
    return int(key.value) if key and key.value else None


# ----------------------------------------------------------------------------------------------


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
        try:
            data = await self.app.remote.overview()
        except RemoteError as e:
            self.failed(e)
            return
        self.show(data)

    def show(self, data: dict[str, Any]) -> None:
        health = {c["name"]: c for c in data.get("connectors", [])}
        problems = sum(1 for c in health.values() if c.get("status") not in ("ok", "disabled"))
        self.query_one("#totals", Plain).show(
            f"{data.get('total', 0)} items, {data.get('recent', 0)} in the last {data.get('days')} days; "
            + (f"{problems} source(s) need attention" if problems else "every source healthy"))
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


def _first_problem(c: dict[str, Any]) -> str:
    problems = c.get("problems") or []
    return f"{problems[0]['kind']}: {problems[0]['detail']}"[:60] if problems else ""


# ----------------------------------------------------------------------------------------------


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
        _items_table(self.query_one("#results", DataTable), [], score=True)
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
            _items_table(table, [], score=True)
            self.say("")
            return
        try:
            answer = await self.app.remote.search(query, explain=explain)
        except RemoteError as e:
            self.failed(e)
            return
        self.hits = answer.get("items", [])
        _items_table(table, self.hits, score=True)
        self.say(answer.get("note") or f"{len(self.hits)} item(s)")
        self.show_detail()

    @on(DataTable.RowHighlighted, "#results")
    def highlighted(self) -> None:
        self.show_detail()

    @on(DataTable.RowSelected, "#results")
    def selected(self, event: DataTable.RowSelected) -> None:
        self.open_item(int(event.row_key.value))

    def current(self) -> dict[str, Any] | None:
        item_id = _selected_id(self.query_one("#results", DataTable))
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
        try:
            answer = await self.app.remote.later(h["id"])
        except RemoteError as e:
            self.failed(e)
            return
        self.query_one("#detail", Plain).show(_later_text(h, answer))


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


def _later_text(item: dict[str, Any], answer: dict[str, Any]) -> str:
    heading = ("NEWER ON THIS SUBJECT" if answer.get("matched_by") == "subject"
               else "NEWER IN THIS PROJECT (by date, not by subject)")
    lines = [f"Later than [{item['id']}] {item.get('title', '')}", heading]
    for h in answer.get("items", []):
        lines.append(f"  [{h['id']}] {day(h.get('occurred_at'))} {h.get('title', '')}")
    if answer.get("note"):
        lines.append(answer["note"])
    return "\n".join(lines)


# ----------------------------------------------------------------------------------------------


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
        _items_table(self.query_one("#items", DataTable), [])
        self.action_refresh()

    @work(exclusive=True, group="catalog")
    async def action_refresh(self) -> None:
        try:
            cat = await self.app.remote.catalog()
        except RemoteError as e:
            self.failed(e)
            return
        scopes = self.query_one("#scopes", OptionList)
        scopes.clear_options()
        for p in cat.get("projects", []):
            scopes.add_option(Option(Text(f"project {p['name']} ({p['items']})"), id=f"project:{p['name']}"))
        for s in cat.get("sources", []):
            scopes.add_option(Option(Text(f"source {s['name']} ({s['items']})"), id=f"source:{s['name']}"))
        if scopes.option_count:
            scopes.highlighted = 0
            scopes.focus()

    @on(OptionList.OptionHighlighted, "#scopes")
    def scope_chosen(self, event: OptionList.OptionHighlighted) -> None:
        kind, _, name = (event.option.id or "").partition(":")
        self.load(kind, name)

    @on(OptionList.OptionSelected, "#scopes")
    def scope_entered(self) -> None:
        self.query_one("#items", DataTable).focus()

    @work(exclusive=True, group="timeline")
    async def load(self, kind: str, name: str) -> None:
        try:
            answer = await self.app.remote.timeline(limit=50, **{kind: name})
        except RemoteError as e:
            self.failed(e)
            return
        items = answer.get("items", [])
        _items_table(self.query_one("#items", DataTable), items)
        self.say(f"{kind} {name}: {len(items)} item(s), newest first")

    @on(DataTable.RowSelected, "#items")
    def selected(self, event: DataTable.RowSelected) -> None:
        self.open_item(int(event.row_key.value))

    def action_open(self) -> None:
        item_id = _selected_id(self.query_one("#items", DataTable))
        if item_id is not None:
            self.open_item(item_id)


# ----------------------------------------------------------------------------------------------


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


# ----------------------------------------------------------------------------------------------


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
        try:
            cat = await self.app.remote.catalog()
        except RemoteError as e:
            self.failed(e)
            return
        projects = self.query_one("#projects", OptionList)
        projects.clear_options()
        for p in cat.get("projects", []):
            projects.add_option(Option(Text(p["name"]), id=p["name"]))
        if projects.option_count:
            projects.highlighted = 0
            projects.focus()

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
            query = first_prompt.search_query(message)
            hits = (await self.app.remote.search(query, limit=first_prompt.SEARCH_LIMIT)).get("items", []) \
                if query else []
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


# ----------------------------------------------------------------------------------------------


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
        try:
            it = await self.app.remote.get_item(self.item_id, include_original=self.with_original)
        except RemoteError as e:
            self.failed(e)
            return
        self.query_one("#item", Plain).show(_item_text(it))
        self.query_one("#item-box", VerticalScroll).focus()

    def action_original(self) -> None:
        self.with_original = not self.with_original
        self.load()

    @work(exclusive=True, group="item-later")
    async def action_later(self) -> None:
        try:
            answer = await self.app.remote.later(self.item_id)
        except RemoteError as e:
            self.failed(e)
            return
        self.query_one("#item-later", Plain).show("\n" + _later_text(answer.get("item") or {"id": self.item_id},
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
