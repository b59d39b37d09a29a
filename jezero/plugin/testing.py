"""A small test kit for plugin authors: build a library from a connector in a temp folder, run
it, search it, all through the real config, pipeline, store and query layer.

    from jezero.plugin.testing import Library

    def test_my_connector_ingests_and_finds(tmp_path):
        with Library(tmp_path, "myagent", {"path": str(FIXTURES)}, plugin=my_plugin) as lib:
            report = lib.run()
            assert report["sessions_written"] == 2 and not report["error"]
            assert lib.search("too many clients")[0]["title"]

`plugin` registers your plugin module for the test when it is not installed (and removes it
afterwards); an installed one is found through its entry point. The library is summarised by
`testing`, a summarizer this kit registers: it needs no model and no other distribution, and
keeps each segment's first prompt as the title and the commands the connector reported (blocks
with `action="shell"`) as atoms, so a test can see what its connector said. Pass
`summarizer="offline"` to use jezero-summarizers' offline summarizer instead.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import TracebackType
from typing import Any

from jezero import plugins
from jezero.hookspecs import hookimpl
from jezero.models import SUMMARY_MAX_CHARS, TITLE_MAX_CHARS, Atom, Segment, Summary, Usage

TESTING_SUMMARIZER = "testing"
_KIT = "jezero.plugin.testing"
_kit_users: list = []  # open libraries that summarise with the kit's summarizer


class _TestingSummarizer:
    name = TESTING_SUMMARIZER
    model = None
    max_in_flight = 1

    def summarize(self, segment: Segment) -> tuple[Summary, Usage]:
        prompts = [b.text for b in segment.blocks if b.role == "user" and b.kind == "text" and b.text.strip()]
        title = " ".join((prompts[0] if prompts else segment.text).split())[:TITLE_MAX_CHARS] or "(empty)"
        commands = list(dict.fromkeys(b.command for b in segment.blocks
                                      if b.kind == "tool_call" and b.action == "shell" and b.command))
        summary = Summary(
            title=title,
            summary=" ".join(segment.text.split())[:SUMMARY_MAX_CHARS] or title,
            questions=[f"What happened in: {title[:80]}?", "Which commands ran?", "What was the outcome?"],
            atoms=[Atom(type="command", text=c[:400]) for c in commands[:12]],
        )
        return summary, Usage()


class _TestingPlugin:
    @hookimpl
    def register_summarizers(self, register):
        register(TESTING_SUMMARIZER, lambda config: _TestingSummarizer(),
                 description="the test kit's summarizer: no model, first prompt as title, commands as atoms")


def _toml(value: Any) -> str:
    return json.dumps(value)  # a JSON string, number, boolean or list of them is valid TOML too


class Library:
    """A config and a library under `folder` with one source `name` of `connector_type`."""

    def __init__(self, folder: str | Path, connector_type: str, options: dict[str, Any] | None = None, *,
                 plugin: object | None = None, name: str = "test-source", summarizer: str = TESTING_SUMMARIZER):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.source = name
        self._registered: list[str] = []
        pm = plugins.get_plugin_manager()
        self._uses_kit = summarizer == TESTING_SUMMARIZER
        if self._uses_kit:
            _kit_users.append(self)
            if pm.get_plugin(_KIT) is None:
                pm.register(_TestingPlugin(), name=_KIT)
        if plugin is not None and not pm.is_registered(plugin):
            self._register(plugin, f"test:{getattr(plugin, '__name__', type(plugin).__name__)}")
        options = ", ".join(f"{k} = {_toml(v)}" for k, v in (options or {}).items())
        self.config_path = self.folder / "config.toml"
        self.config_path.write_text(
            f"[storage]\npath = {_toml(str(self.folder / 'library.sqlite3'))}\n\n"
            f"[ingest]\nsettle_minutes = 0\n\n[summarizer]\nname = {_toml(summarizer)}\n\n"
            f"[[connectors]]\nname = {_toml(name)}\ntype = {_toml(connector_type)}\noptions = {{ {options} }}\n"
        )

    def _register(self, plugin: object, name: str) -> None:
        plugins.get_plugin_manager().register(plugin, name=name)
        self._registered.append(name)

    @property
    def config(self):
        """The loaded config; a ConfigError (with every problem) if it is not valid, as
        `jezero check-config` would report it."""
        from jezero import config as config_mod

        return config_mod.load(self.config_path)

    def problems(self) -> list[str]:
        """What `jezero check-config` says about this library's config (empty when ok)."""
        from jezero import config as config_mod

        try:
            config_mod.load(self.config_path)
        except config_mod.ConfigError as e:
            return [str(p) for p in e.problems]
        return []

    def run(self) -> dict[str, Any]:
        """Ingest the source once; its run report as a dict (sessions_written, items_written,
        warnings, error, ...)."""
        from jezero.ingest.runner import run_connectors

        (report,) = run_connectors(self.config)
        return report.as_dict()

    def search(self, query: str, **filters: Any) -> list[dict[str, Any]]:
        """Items for `query`, best first, as the MCP `search` tool and `jezero search` see them."""
        from jezero.query import search
        from jezero.store import open_readonly

        conn = open_readonly(self.config.library_path())
        try:
            return list(search(conn, query, **filters))
        finally:
            conn.close()

    def close(self) -> None:
        """Remove the plugins this library registered (the kit's summarizer once no open
        library uses it)."""
        pm = plugins.get_plugin_manager()
        for name in reversed(self._registered):
            if pm.get_plugin(name) is not None:
                pm.unregister(name=name)
        self._registered.clear()
        if self._uses_kit and self in _kit_users:
            _kit_users.remove(self)
            if not _kit_users and pm.get_plugin(_KIT) is not None:
                pm.unregister(name=_KIT)

    def __enter__(self) -> "Library":
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


def demo_library(folder: str | Path, connector_type: str, *, plugin: object | None = None,
                 summarizer: str = TESTING_SUMMARIZER) -> Library:
    """A library fed by the connector type's own demo writer (`register(..., demo=...)`) with
    the demo sessions of `jezero up --demo`: checks that the writer and the reader agree."""
    from jezero.demo import demo_sessions

    folder = Path(folder)
    pm = plugins.get_plugin_manager()
    registered = plugin is not None and not pm.is_registered(plugin)
    if registered:
        pm.register(plugin, name="test:demo-writer")
    try:
        ctype = plugins.connector_types()[connector_type]
        options = ctype.demo(folder / "sessions", demo_sessions())
    finally:
        if registered:
            pm.unregister(name="test:demo-writer")
    return Library(folder, connector_type, options, plugin=plugin, summarizer=summarizer)


class HashingEmbedder:
    """An embedder for tests of the semantic lane: no model, deterministic. Each word and each
    character trigram of a word is hashed into one of `dimension` buckets, signed by another bit
    of its hash; the row is L2-normalised. Texts sharing words or word fragments come out near
    each other; it knows nothing of meaning (a paraphrase in other words is not near). Needs numpy.

    `model_id` carries the dimension and `salt`, so two settings never pass for one model.
    `delay` (seconds per call) paces a test that must catch a run in the middle."""

    def __init__(self, dimension: int = 256, *, salt: str = "", delay: float = 0.0):
        self.dimension = int(dimension)
        self.salt = salt
        self.delay = float(delay)
        self.model_id = f"hashing-v1-{self.dimension}" + (f"-{salt}" if salt else "")
        self.calls = 0

    def embed(self, texts, *, query: bool = False):
        import hashlib
        import re
        import time

        import numpy as np

        self.calls += 1
        if self.delay:
            time.sleep(self.delay)
        rows = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for r, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                padded = f"<{word}>"
                for feature in [word, *(padded[i:i + 3] for i in range(len(padded) - 2))]:
                    h = int.from_bytes(hashlib.blake2b((self.salt + feature).encode(), digest_size=8).digest(), "big")
                    rows[r, h % self.dimension] += 1.0 if (h >> 32) & 1 else -1.0
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        return np.divide(rows, norms, out=np.zeros_like(rows), where=norms > 0)


HASHING_EMBEDDER = "hashing"


class HashingEmbedderPlugin:
    """Registers the embedder "hashing" (HashingEmbedder; options: dimension, salt, delay)."""

    @hookimpl
    def register_embedders(self, register):
        register(HASHING_EMBEDDER, lambda options: HashingEmbedder(**options),
                 description="hashed words and trigrams, for tests: no model")


__all__ = ["HASHING_EMBEDDER", "HashingEmbedder", "HashingEmbedderPlugin", "Library", "TESTING_SUMMARIZER",
           "demo_library"]
