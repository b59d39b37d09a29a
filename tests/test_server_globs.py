"""Property: whatever the library and whatever a client's source patterns, no tool and no overview
ever hands that client an item of a source outside its patterns, and every item inside them stays
reachable.

The reference is `fnmatch.fnmatchcase`, the case-sensitive glob the config documents for
`[[clients]] sources`.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

import anyio
import httpx2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client

from jezero.config import Config
from jezero.server import build_http_app, build_mcp_server, key_digest
from jezero.store import ItemRecord, Store

SOURCES = ["claude-local", "codex-local", "agent-ci", "agent-laptop", "inbox-anna", "Inbox-Ben", "web"]
PROJECTS = ["shop", "billing", "infra", None]
WORDS = ["stripe", "webhook", "docker", "invoice", "migration", "deploy", "rounding", "cache"]
PATTERNS = ["*", "agent-*", "*-local", "claude-*", "inbox-?nna", "[ac]*", "[!a]*", "Inbox-*", "inbox-*", "web",
            "codex-local", "nothing-*", "*a*", "?eb", "AGENT-*"]
T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
KEY = "jz_property-key"

items_strategy = st.lists(
    st.tuples(st.sampled_from(SOURCES), st.sampled_from(PROJECTS),
              st.lists(st.sampled_from(WORDS), min_size=2, max_size=4), st.integers(0, 60)),
    min_size=1, max_size=14,
)
patterns_strategy = st.lists(
    st.one_of(st.sampled_from(PATTERNS), st.text(alphabet="acdegiklnorw-*?[]!", min_size=1, max_size=6)),
    min_size=0, max_size=3,
)


def allowed(source: str, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatchcase(source, p) for p in patterns)


def build(folder: Path, items, patterns) -> tuple[Config, dict[int, tuple[str, str | None]]]:
    """A library of these items and a config with one client "c" of these patterns; returns the
    config and each stored item's (source, project) by id."""
    records = []
    for n, (source, project, words, day) in enumerate(items, 1):
        title = " ".join(words).capitalize()
        records.append(ItemRecord(
            uid=f"{source}:s{n}:0", source=source, agent="agent", session_id=f"s{n}", segment_index=0,
            occurred_at=T0 + timedelta(days=day, minutes=n), title=title, summary=f"{title} in {project}.",
            questions=[f"{words[0]}?"], atoms=[{"type": "fact", "text": words[-1]}], original=title,
            content_hash=hashlib.sha256(str(n).encode()).hexdigest(), summarizer="offline", summary_schema=1,
            project=project,
        ))
    library = folder / "library.sqlite3"
    with Store(library) as store:
        ids = store.write(records)
    cfg = Config.model_validate({
        "storage": {"path": str(library)},
        "clients": [{"name": "c", "key_sha256": key_digest(KEY), "sources": patterns}],
    })
    return cfg, {i: (r.source, r.project) for i, r in zip(ids, records)}


async def check_tools(cfg: Config, stored: dict[int, tuple[str, str | None]], patterns: list[str]) -> None:
    sources = {i: source for i, (source, _) in stored.items()}
    visible = {i for i, s in sources.items() if allowed(s, patterns)}

    def check(hits):
        for h in hits:
            assert allowed(h["source"], patterns), (h, patterns)
            assert sources[h["id"]] == h["source"]

    async with Client(build_mcp_server(cfg, client="c")) as client:
        async def answer(tool, **args):
            result = await client.call_tool(tool, args)
            return None if result.is_error else result.structured_content

        seen = set()
        for source in SOURCES:
            timeline = await answer("timeline", source=source, limit=50)
            check(timeline["items"])
            seen |= {h["id"] for h in timeline["items"]}
        for project in PROJECTS[:-1]:
            check((await answer("timeline", project=project, limit=50))["items"])
        assert seen == visible
        for word in WORDS[:4]:
            check((await answer("search", query=word, limit=50))["items"])
        for item_id, source in sources.items():
            item = await answer("get_item", item_id=item_id)
            assert (item is not None) == (item_id in visible), (item_id, source, patterns)
            if item is not None:
                assert item["source"] == source
            later = await answer("later", item_id=item_id)
            assert (later is not None) == (item_id in visible)
            if later is not None:
                check(later["items"])
        catalog = await answer("catalog")
        assert {s["name"] for s in catalog["sources"]} == {sources[i] for i in visible}
        for project in catalog["projects"]:
            assert all(allowed(s, patterns) for s in project.get("sources", [])), project
            # Counts leak nothing either: only the items this client can read are counted.
            reachable = sum(1 for i in visible if stored[i][1] == project["name"])
            assert project["items"] == reachable, (project, patterns)


async def check_overview(cfg: Config, patterns: list[str]) -> None:
    app = build_http_app(cfg)
    transport = httpx2.ASGITransport(app=app)
    async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
        r = await http.get("/api/v1/overview?days=3650", headers={"Authorization": f"Bearer {KEY}"})
        assert r.status_code == 200, r.text
        names = set(_strings(r.json())) & set(SOURCES)
        assert all(allowed(n, patterns) for n in names), (names, patterns)
        refused = await http.get("/api/v1/overview", headers={"Authorization": "Bearer jz_other"})
        assert refused.status_code == 401


def _strings(data):
    if isinstance(data, str):
        yield data
    elif isinstance(data, dict):
        for k, v in data.items():
            yield k
            yield from _strings(v)
    elif isinstance(data, list):
        for v in data:
            yield from _strings(v)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(items=items_strategy, patterns=patterns_strategy)
def test_no_tool_returns_a_source_outside_the_patterns(items, patterns):
    with tempfile.TemporaryDirectory() as folder:
        cfg, stored = build(Path(folder), items, patterns)
        anyio.run(check_tools, cfg, stored, patterns)
        anyio.run(check_overview, cfg, patterns)


def test_the_overview_counts_only_visible_items(tmp_path):
    items = [("agent-ci", "shop", ["stripe", "webhook"], 1), ("claude-local", "shop", ["stripe", "cache"], 2),
             ("claude-local", "billing", ["invoice", "rounding"], 3)]
    cfg, _ = build(tmp_path, items, ["agent-*"])

    async def run():
        transport = httpx2.ASGITransport(app=build_http_app(cfg))
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            r = await http.get("/api/v1/overview?days=3650", headers={"Authorization": f"Bearer {KEY}"})
            return r.json()

    data = anyio.run(run)
    text = json.dumps(data)
    assert "claude-local" not in text and "billing" not in text
