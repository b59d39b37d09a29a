"""The terminal app (`jezero` with no command): Home, Search, Timeline, Agents and Agent view.

It reads a server the way an agent does, through the MCP tools with a client key, plus the one
HTTP route agents do not get (the overview), so what a person sees is what an agent with the same
key may see, and a remote server works as well as a local one. Textual is imported only here.

    remote.py   the data: MCP calls and the overview route (one place, so tests can swap it)
    screens/    the five screens and the item screen, one module each
    app.py      the app, its key bindings, how it is started
"""
