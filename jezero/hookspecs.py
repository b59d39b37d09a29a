"""The hooks a Jezero plugin can implement. Five add things through a `register(...)` callback
(so the host can refuse a duplicate name and record which plugin added what); one picks a single
answer (`firstresult`). Every hook is documented, with an example, in hookspecs.md."""

from pluggy import HookimplMarker, HookspecMarker

hookspec = HookspecMarker("jezero")
hookimpl = HookimplMarker("jezero")


@hookspec
def register_connector_types(register):
    """Add connector types: `register(name, build, description="", options=None, discover=None,
    demo=None, normalize=None)`, where `build(options: dict, context: ConnectorContext) -> Connector`. Pass
    `build=None` to declare a type that is planned but not built yet, so check-config can tell it
    from a typo. `options` is a pydantic model class declaring the type's options (check-config
    reports a misspelt or mistyped one); `discover()` returns the options of each store of this
    agent found on this computer (for `jezero up`); `demo(folder, sessions)` writes the made-up
    sessions it is handed (`jezero.plugin.DemoSession`) under `folder` in its agent's format and
    returns the options that read them (for `jezero up --demo`); `normalize(blocks)` sets `action`,
    `command` and `paths` on blocks read back from a stored original, from their tool name and
    text (for `jezero resummarize`)."""


@hookspec
def register_redactors(register):
    """Add redactors: `register(name, redact)`, where `redact(text: str) -> str`. Every registered
    redactor runs, in registration order, on every text before it is hashed, summarised or stored."""


@hookspec
def register_summarizers(register):
    """Add summarizers: `register(name, build, description="")`, where
    `build(config: SummarizerConfig) -> Summarizer`."""


@hookspec
def register_index_engines(register):
    """Add search index engines: `register(name, open, description="")`, where
    `open(library: pathlib.Path) -> IndexEngine` gives the engine for the library file at that
    path (see jezero.plugin.IndexEngine): a derived index kept beside the library that
    answers search's candidate pool (and, with `message_matches`, the messages layer's
    matches), chosen by `[search] engine = "name"`."""


@hookspec
def register_embedders(register):
    """Add embedders for the semantic lane: `register(name, build, description="", prepare=None)`,
    where `build(options: dict) -> Embedder` (see jezero.plugin.Embedder) gives an embedder that
    is ready to use, or raises jezero.plugin.EmbedderNotReady saying which command makes it
    ready; `prepare(options: dict) -> str`, when given, makes the model ready on this computer
    once (fetches or derives it) and returns what it did. Only `prepare` may fetch anything:
    `build` and `embed` never download."""


@hookspec(firstresult=True)
def resolve_project(hints):
    """Name the project of a session from `hints` (a ProjectHints), or return None to let the next
    resolver answer. The first non-None answer wins: configured path rules run first, built-in
    fallbacks (git repository, device, common roots, summarizer guess, default) run last."""
