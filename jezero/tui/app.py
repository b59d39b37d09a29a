"""The Jezero app: five screens over one server, switched with one key each."""

from __future__ import annotations

from textual.app import App
from textual.binding import Binding

from jezero.tui.remote import Remote
from jezero.tui.screens import AgentsScreen, AgentViewScreen, HomeScreen, SearchScreen, TimelineScreen

CSS = """
.heading { text-style: bold; margin-top: 1; }
.status { height: 1; }
#totals { margin-bottom: 0; }
#per-day { margin-top: 1; }
DataTable { height: auto; }
HomeScreen VerticalScroll { height: 1fr; }
HomeScreen DataTable { width: 100%; overflow-x: hidden; overflow-y: hidden; }
#results { height: 1fr; max-height: 100%; }
#detail-box { height: 10; border-top: solid $foreground 30%; }
#items { height: 1fr; max-height: 100%; width: 1fr; }
#agents { height: auto; max-height: 100%; }
#scopes, AgentViewScreen #projects { width: 32; height: 1fr; }
#agent-view { width: 1fr; }
#item-box { height: 1fr; }
"""


class JezeroApp(App):
    """`remote` is where the data comes from; `where` is shown in the title bar."""

    TITLE = "Jezero"
    CSS = CSS
    MODES = {"home": HomeScreen, "search": SearchScreen, "timeline": TimelineScreen, "agents": AgentsScreen,
             "agent-view": AgentViewScreen}
    DEFAULT_MODE = "home"
    BINDINGS = [
        Binding("h", "switch_mode('home')", "Home"),
        Binding("s", "switch_mode('search')", "Search"),
        Binding("t", "switch_mode('timeline')", "Timeline"),
        Binding("a", "switch_mode('agents')", "Agents"),
        Binding("v", "switch_mode('agent-view')", "Agent view"),
        Binding("q", "quit", "Quit"),
        Binding("ctrl+c", "quit", "Quit", show=False, priority=True),
    ]

    def __init__(self, remote: Remote, where: str | None = None):
        super().__init__()
        self.remote = remote
        self.sub_title = where or remote.base
