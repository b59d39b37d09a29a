"""Every hook, used through a real plugin registered for the test; and the documentation check:
a hook missing from hookspecs.md, or without a test here, fails."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from jezero import hookimpl, hookspecs, plugins
from jezero.config import Config
from jezero.models import ConnectorContext, ProjectHints, Summary, Usage

REPO = Path(__file__).resolve().parents[1]


def hook_names() -> list[str]:
    return [name for name, fn in inspect.getmembers(hookspecs, inspect.isfunction)
            if hasattr(fn, "jezero_spec")]


def test_every_hook_is_documented_and_tested():
    doc = (REPO / "hookspecs.md").read_text()
    this = Path(__file__).read_text()
    names = hook_names()
    assert len(names) == 6
    for name in names:
        assert re.search(rf"^## {name}\(", doc, re.M), f"{name} is not documented in hookspecs.md"
        section = doc.split(f"## {name}(")[1].split("\n## ")[0]
        for part in ("**Signature:**", "**Arguments:**", "**Returns:**", "**When:**", "```python"):
            assert part in section, f"hookspecs.md: {name} lacks {part}"
        assert f"def test_hook_{name}(" in this, f"{name} has no test_hook_{name} in tests/test_hooks.py"


def test_hook_register_connector_types(register_plugin):
    class Foo:
        def __init__(self, options, context):
            self.options, self.context = options, context

    class Plugin:
        @hookimpl
        def register_connector_types(self, register):
            register("foo", Foo, description="Foo sessions")

    register_plugin(Plugin(), "foo-plugin")
    types = plugins.connector_types()
    assert types["foo"].plugin == "foo-plugin" and types["foo"].description == "Foo sessions"
    built = types["foo"].build({"path": "/x"}, ConnectorContext(name="foo-local", warn=print))
    assert built.options == {"path": "/x"} and built.context.name == "foo-local"


def test_hook_register_redactors(register_plugin):
    class Plugin:
        @hookimpl
        def register_redactors(self, register):
            register("employee-ids", lambda text: re.sub(r"\bEMP-\d{6}\b", "[REDACTED:employee-id]", text))

    register_plugin(Plugin(), "emp")
    found = {r.name: r for r in plugins.redactors()}
    assert list(found)[0] == "builtin"  # built-in first, then plugins in registration order
    assert found["employee-ids"].redact("by EMP-123456 today") == "by [REDACTED:employee-id] today"


def test_hook_register_summarizers(register_plugin):
    class Shortest:
        name, model, max_in_flight = "shortest", None, 1

        def summarize(self, segment):
            return Summary(title="t", summary="s", questions=["a", "b", "c"]), Usage()

    class Plugin:
        @hookimpl
        def register_summarizers(self, register):
            register("shortest", lambda config: Shortest(), description="first line")

    register_plugin(Plugin(), "shortest")
    from jezero.ingest.pipeline import build_summarizer

    summarizer = build_summarizer(Config.model_validate({"summarizer": {"name": "shortest"}}))
    assert summarizer.name == "shortest"


def test_hook_resolve_project(register_plugin):
    class Plugin:
        @hookimpl
        def resolve_project(self, hints):
            if hints.cwd and "/monorepo/services/" in hints.cwd:
                return "svc-" + hints.cwd.split("/monorepo/services/")[1].split("/")[0]
            return None

    register_plugin(Plugin(), "monorepo")
    pm = plugins.get_plugin_manager()
    ask = lambda **kw: pm.hook.resolve_project(hints=ProjectHints(source="s", agent="a", **kw))  # noqa: E731
    assert ask(cwd="/x/monorepo/services/billing/api") == "svc-billing"
    # configured rules still answer first; the built-in fallbacks still answer last
    rule = [("/x/monorepo/*", "mono")]
    assert ask(cwd="/x/monorepo/services/billing/api", rules=rule) == "mono"
    assert ask(cwd="/elsewhere", summarizer_guess="guess") == "guess"
    assert ask(cwd="/elsewhere", default_project="dflt") == "dflt"


def test_hook_register_index_engines(register_plugin, tmp_path):
    from datetime import datetime, timezone

    from jezero.config import SearchConfig
    from jezero.query import search
    from jezero.store import ItemRecord, Store, engines, open_readonly

    asked = []

    class Titles:  # the example of hookspecs.md
        def __init__(self, library):
            self.library = library

        def candidates(self, conn, request):
            asked.append(request)
            found = {}
            for term in request.terms:
                for item_id, at, source in conn.execute(
                        "SELECT id, occurred_at, source FROM items WHERE instr(lower(title), lower(?))", (term.text,)):
                    if request.sources is None or source in request.sources:
                        found[item_id] = (item_id, found.get(item_id, (0, 0.0))[1] + 1.0, at)
            return sorted(found.values(), key=lambda c: (-c[1], -c[0]))[: request.pool]

        def catch_up(self, rebuild=False):
            return 0

    class Plugin:
        @hookimpl
        def register_index_engines(self, register):
            register("titles", Titles, description="title substrings")

    register_plugin(Plugin(), "titles-plugin")
    kinds = plugins.index_engines()
    assert kinds["titles"].plugin == "titles-plugin" and kinds["fts5"].open is None
    when = datetime(2025, 1, 1, tzinfo=timezone.utc)
    with Store(tmp_path / "lib.sqlite3") as store:
        ids = store.write([ItemRecord(uid=f"s:{i}:0", source="s", agent="a", session_id=str(i), segment_index=0,
                                      occurred_at=when, title=t, summary="the same summary", questions=[], atoms=[],
                                      original="o", content_hash=str(i), summarizer="t", summary_schema=1)
                           for i, t in enumerate(["Kafka lag", "Kafka and Kafka Connect", "Redis"])])
    engines.forget()
    try:
        with open_readonly(tmp_path / "lib.sqlite3") as conn:
            hits = search(conn, "kafka connect", options=SearchConfig(engine="titles"), now=when, explain=True)
        assert [h["id"] for h in hits] == [ids[1], ids[0]] and hits[0]["explain"]["candidates"] == "titles"
        assert [t.text for t in asked[0].terms] == ["kafka", "connect"] and asked[0].pool == 200
        assert engines.sync("titles", tmp_path / "lib.sqlite3") == 0
    finally:
        engines.forget()


def test_hook_register_embedders(register_plugin):
    from jezero.plugin import Embedder, EmbedderNotReady

    prepared = []

    class Letters:
        model_id = "letters-v1"
        dimension = 26

        def embed(self, texts, *, query=False):
            return [[float(t.count(chr(97 + i))) for i in range(26)] for t in texts]

    def build(options):
        if not options.get("ready"):
            raise EmbedderNotReady("run `jezero embed prepare` first")
        return Letters()

    class Plugin:
        @hookimpl
        def register_embedders(self, register):
            register("letters", build, description="letter counts", prepare=lambda options: prepared.append(options) or "ok")

    register_plugin(Plugin(), "letters-plugin")
    kind = plugins.embedder_types()["letters"]
    assert kind.plugin == "letters-plugin" and kind.description == "letter counts"
    assert kind.prepare({"x": 1}) == "ok" and prepared == [{"x": 1}]
    embedder = kind.build({"ready": True})
    assert isinstance(embedder, Embedder) and embedder.embed(["abba"])[0][:2] == [2.0, 2.0]
    try:
        kind.build({})
    except EmbedderNotReady as e:
        assert "jezero embed prepare" in str(e)
    else:
        raise AssertionError("an embedder that is not ready must say so")
