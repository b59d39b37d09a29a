"""hookspecs.md is executed, not only read: every example runs as a plugin through the real host,
and every documented signature agrees with jezero/hookspecs.py and with what the host's
`register` callbacks accept."""

from __future__ import annotations

import dataclasses
import inspect
import re
import types
from datetime import datetime, timezone

import pytest

from jezero import hookspecs, plugins
from jezero.models import ConnectorType, EmbedderType, Redactor, SummarizerType
from jezero.plugin import ConnectorContext, ProjectHints, Segment, Session, Summary
from jz_support import REPO

DOC = (REPO / "hookspecs.md").read_text()
REGISTERS = {"register_connector_types": ConnectorType, "register_redactors": Redactor,
             "register_summarizers": SummarizerType, "register_embedders": EmbedderType}


def section(hook: str) -> str:
    return DOC.split(f"## {hook}(")[1].split("\n## ")[0]


def example(hook: str) -> types.ModuleType:
    """The section's python example, run as a plugin module of its own."""
    code = re.search(r"```python\n(.*?)```", section(hook), re.S)[1]
    module = types.ModuleType(f"hookspecs_md_{hook}")
    exec(compile(code, f"hookspecs.md ({hook})", "exec", dont_inherit=True), module.__dict__)
    return module


def params(signature: str) -> list[str]:
    inside = signature[signature.index("(") + 1: signature.rindex(")")]
    return [p.split(":")[0].split("=")[0].strip() for p in inside.split(",") if p.strip()]


@pytest.mark.parametrize("hook", sorted(REGISTERS) + ["resolve_project"])
def test_documented_signatures_match_the_code(hook):
    spec = getattr(hookspecs, hook)
    heading = re.search(rf"^## ({hook}\([^)]*\))", DOC, re.M)[1]
    assert params(heading) == list(inspect.signature(spec).parameters)
    documented = re.search(r"\*\*Signature:\*\* `([^`]+)`", section(hook))[1]
    if hook in REGISTERS:
        accepted = [f.name for f in dataclasses.fields(REGISTERS[hook]) if f.name != "plugin"]
        assert params(documented) == accepted, f"hookspecs.md: {documented} vs the host's {accepted}"
        in_code = re.search(r"`(register\([^`]*\))`", spec.__doc__.replace("\n    ", " "))[1]
        assert params(in_code) == accepted, f"hookspecs.py docstring: {in_code}"
    else:
        assert params(documented) == list(inspect.signature(spec).parameters)
        assert ("firstresult" in section(hook)) == bool(spec.jezero_spec.get("firstresult"))


def test_the_connector_example_runs(register_plugin, tmp_path):
    register_plugin(example("register_connector_types"), "doc-connector")
    foo = plugins.connector_types()["foo"]
    (tmp_path / "s1.jsonl").write_text('{"prompt": "why is CI red?"}\n{"sh": "pytest -x"}\n')
    connector = foo.build({"path": str(tmp_path)}, ConnectorContext(name="foo-local", warn=print))
    (session,) = connector.read({})
    assert [b.action for b in session.blocks] == [None, "shell"] and session.blocks[1].command == "pytest -x"
    assert list(connector.read({session.cursor_key: session.cursor_value})) == []
    with pytest.raises(ValueError, match="unknown option 'pth'"):
        foo.build({"pth": "x"}, ConnectorContext(name="foo-local", warn=print))


def test_the_redactor_example_runs(register_plugin):
    register_plugin(example("register_redactors"), "doc-redactor")
    redact = {r.name: r.redact for r in plugins.redactors()}["employee-ids"]
    assert redact("ask EMP-123456") == "ask [REDACTED:employee-id]"


def test_the_summarizer_example_runs(register_plugin):
    register_plugin(example("register_summarizers"), "doc-summarizer")
    summarizer = plugins.summarizer_types()["shortest"].build(None)
    from jezero.plugin import Block

    blocks = [Block("user", "text", "the export crashes")]
    session = Session(id="s", agent="foo", blocks=blocks, cursor_key="k", cursor_value=1)
    segment = Segment(uid="u", source="foo", session=session, index=0, blocks=blocks, text="",
                      content_hash="", occurred_at=datetime.now(timezone.utc))
    summary, _ = summarizer.summarize(segment)
    assert isinstance(summary, Summary) and summary.title == "the export crashes"


def test_the_embedder_example_runs(register_plugin):
    from jezero.plugin import Embedder

    register_plugin(example("register_embedders"), "doc-embedder")
    embedder = plugins.embedder_types()["letters"].build({})
    assert isinstance(embedder, Embedder) and embedder.dimension == 26
    rows = embedder.embed(["abc", ""])
    assert abs(sum(v * v for v in rows[0]) - 1.0) < 1e-9 and rows[1] == [0.0] * 26


def test_the_resolver_example_runs(register_plugin):
    register_plugin(example("resolve_project"), "doc-resolver")
    hints = ProjectHints(source="s", agent="a", cwd="/src/monorepo/services/billing/api")
    assert plugins.get_plugin_manager().hook.resolve_project(hints=hints) == "svc-billing"
