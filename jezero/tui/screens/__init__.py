"""The app's screens, one module each; common.py holds what they share. Each screen asks
`self.app.remote` (jezero.tui.remote.Remote) and shows the answer as plain text and tables."""

from jezero.tui.screens.agent_view import AgentViewScreen
from jezero.tui.screens.agents import AgentsScreen
from jezero.tui.screens.home import HomeScreen
from jezero.tui.screens.item import ItemScreen
from jezero.tui.screens.search import SearchScreen
from jezero.tui.screens.timeline import TimelineScreen

__all__ = ["AgentViewScreen", "AgentsScreen", "HomeScreen", "ItemScreen", "SearchScreen", "TimelineScreen"]
