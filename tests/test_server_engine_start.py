"""The server opens the configured search index engine when it is built, not in the first search
(loading the plugins took seconds of the first agent's call on a busy machine), and a search
through a real MCP client then answers from that engine."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest
from mcp import Client

from jezero.config import Config
from jezero.server import build_mcp_server
from jezero.store import ItemRecord, Store, engines

NOW = datetime.now(timezone.utc)


@pytest.fixture
def anyio_backend():
    return "asyncio"


def record(n: int, title: str) -> ItemRecord:
    return ItemRecord(uid=f"claude-local:s{n}:0", source="claude-local", agent="claude", session_id=f"s{n}",
                      segment_index=0, occurred_at=NOW - timedelta(days=n), title=title, summary=title,
                      questions=[], atoms=[], original="o", content_hash=f"h{n}", summarizer="t", summary_schema=1,
                      project="shop")


@pytest.mark.anyio
async def test_the_engine_is_open_before_the_first_search(tmp_path):
    pytest.importorskip("jezero_index_tantivy", reason="jezero-index-tantivy is not installed")
    path = tmp_path / "lib.sqlite3"
    with Store(path) as store:
        store.write([record(1, "Webhook signature fails on the staging shop"),
                     *(record(n, f"kettle pigeon walnut {n}") for n in range(2, 12))])
    engines.sync("tantivy", path)
    engines.forget()
    config = Config.model_validate({"storage": {"path": str(path)}, "search": {"engine": "tantivy"}})
    try:
        server = build_mcp_server(config)
        assert ("tantivy", str(path)) in engines._open  # opened at build, no search made yet
        async with Client(server) as client:
            result = await client.call_tool("search", {"query": "webhook signature", "explain": True})
        items = json.loads(result.content[0].text)["items"]
        assert items and items[0]["title"] == "Webhook signature fails on the staging shop"
    finally:
        engines.forget()
