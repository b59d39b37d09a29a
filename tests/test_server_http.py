"""The HTTP app on a real uvicorn server on 127.0.0.1, driven by the SDK's streamable HTTP client:
client keys, 401s, keys added, revoked and rotated while the server runs, the overview endpoint
and health."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import socket
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from device_support import wait_for
from jezero.server import http_server, key_digest
from jezero.server.clients import POLL_SECONDS
from jezero.store import ItemRecord, Store

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)
KEYS = {"laptop": "jz_laptop-key", "ci": "jz_ci-key", "newcomer": "jz_newcomer-key"}


@pytest.fixture
def anyio_backend():
    return "asyncio"


def record(n: int, source: str, project: str | None, title: str, days: float) -> ItemRecord:
    return ItemRecord(
        uid=f"{source}:s{n}:0", source=source, agent=source.split("-")[0], session_id=f"s{n}", segment_index=0,
        occurred_at=T0 + timedelta(days=days), title=title, summary=f"{title}. Summary of session {n}.",
        questions=[f"What about {title.lower()}?"], atoms=[{"type": "fact", "text": title}],
        original=f"transcript {n}", content_hash=hashlib.sha256(f"{n}".encode()).hexdigest(),
        summarizer="offline", summary_schema=1, project=project,
    )


def client_block(name: str, sources: list[str]) -> str:
    return (f'\n[[clients]]\nname = "{name}"\nkey_sha256 = "{key_digest(KEYS[name])}"\n'
            f'sources = [{", ".join(json.dumps(s) for s in sources)}]\n')


@dataclass
class Running:
    base: str
    config: Path
    library: Path

    @property
    def mcp(self) -> str:
        return self.base + "/mcp"

    def write_config(self, *blocks: str) -> None:
        # JEZERO_TEST_ENGINE=tantivy: the same tests with that search index engine (default FTS5)
        engine = os.environ.get("JEZERO_TEST_ENGINE", "fts5")
        self.config.write_text(f'[storage]\npath = "{self.library}"\n\n[search]\nengine = "{engine}"\n'
                               + "".join(blocks))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def sample_library(folder, last_title: str = "Stripe invoice webhook retries") -> Running:
    """Four items from four sources in two projects, and a config with two keys: `laptop` reads
    every source, `ci` the `agent-*` ones."""
    library = folder / "library.sqlite3"
    with Store(library) as store:
        store.write([
            record(1, "claude-local", "shop", "Stripe webhook signature check", 0),
            record(2, "agent-ci", "shop", "Stripe webhook test on the CI runner", 1),
            record(3, "codex-local", "billing", "Invoice rounding", 2),
            record(4, "agent-laptop", "billing", last_title, 3),
        ])
    run = Running(base="", config=folder / "config.toml", library=library)
    run.write_config(client_block("laptop", ["*"]), client_block("ci", ["agent-*"]))
    return run


@pytest.fixture
def running(tmp_path):
    run = sample_library(tmp_path)
    port = free_port()
    server = http_server(str(run.config), "127.0.0.1", port, log_level="warning")
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    wait_for(lambda: server.started, bound=60.0, every=0.02)
    run.base = f"http://127.0.0.1:{port}"
    yield run
    server.should_exit = True
    thread.join(10)


def session(url: str, key: str | None):
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx2.AsyncClient(headers=headers, timeout=20)


async def tool(url: str, key: str, name: str, **args):
    async with session(url, key) as h, Client(streamable_http_client(url, http_client=h)) as client:
        result = await client.call_tool(name, args)
        return result


def raw_initialize(url: str, key: str | None) -> httpx2.Response:
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    if key is not None:
        headers["Authorization"] = f"Bearer {key}".strip()
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
    return httpx2.post(url, json=body, headers=headers, timeout=10)


def in_effect(check) -> None:
    """Wait until check() is true. The promise (in effect within a second) is the registry's
    clock rule, tested with a clock the test moves (test_an_edit_is_seen_at_the_first_look_after_the_poll);
    timing it here made a busy machine fail a working server. The bound only stops a broken
    server from hanging the test."""
    wait_for(check, bound=60.0, every=0.02)


# -- keys ------------------------------------------------------------------------------------


def test_requests_without_a_valid_key_get_401(running):
    for key in (None, "", "jz_wrong", KEYS["laptop"] + "x", key_digest(KEYS["laptop"])):
        r = raw_initialize(running.mcp, key)
        assert r.status_code == 401, key
        assert r.headers["www-authenticate"].startswith("Bearer")
        o = httpx2.get(running.base + "/api/v1/overview",
                       headers={"Authorization": f"Bearer {key}".strip()} if key is not None else {})
        assert o.status_code == 401, key
        assert "sources" not in o.text
    assert raw_initialize(running.mcp, KEYS["laptop"]).status_code == 200


def test_health_needs_no_key_and_shows_no_data(running):
    r = httpx2.get(running.base + "/health")
    assert r.status_code == 200
    assert set(r.json()) == {"status", "version"} and r.json()["status"] == "ok"


def test_requests_from_a_foreign_host_are_refused(running):
    # DNS-rebinding protection: a web page cannot reach the local server through another name.
    headers = {"Host": "evil.example:80", "Authorization": f"Bearer {KEYS['laptop']}",
               "Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    r = httpx2.post(running.mcp, content=b"{}", headers=headers)
    assert r.status_code in (400, 403, 421)


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])  # protocol 2026-07-28, and 2025-11-25 with a handshake
async def test_every_tool_over_http(running, mode):
    key = KEYS["laptop"]
    async with session(running.mcp, key) as h, \
            Client(streamable_http_client(running.mcp, http_client=h), mode=mode) as client:
        assert "Never guess" in client.instructions
        tools = (await client.list_tools()).tools
        assert {t.name for t in tools} == {"search", "later", "timeline", "get_item", "catalog", "recall"}
        assert all(t.annotations.read_only_hint and not t.annotations.destructive_hint for t in tools)

        async def ok(name, **args):
            result = await client.call_tool(name, args)
            assert not result.is_error, result.content[0].text
            return result.structured_content

        assert {1, 2, 4} <= {h["id"] for h in (await ok("search", query="stripe webhook"))["items"]}
        later = await ok("later", item_id=1, query="stripe webhook")
        assert later["item"]["id"] == 1 and later["items"]
        assert [h["id"] for h in (await ok("timeline", project="shop"))["items"]] == [2, 1]
        assert (await ok("get_item", item_id=3, include_original=True))["original"] == "transcript 3"
        assert len((await ok("catalog"))["sources"]) == 4
        assert (await ok("recall", query="stripe"))["hits"] == []  # these originals hold no rendered messages
        missing = await client.call_tool("get_item", {"item_id": 99})
        assert missing.is_error and "no item 99 (or not visible to this key)" in missing.content[0].text


@pytest.mark.anyio
async def test_a_key_only_reads_its_sources(running):
    key = KEYS["ci"]
    async with session(running.mcp, key) as h, Client(streamable_http_client(running.mcp, http_client=h)) as client:
        async def sources(name, **args):
            result = await client.call_tool(name, args)
            assert not result.is_error, result.content[0].text
            return result.structured_content

        hits = (await sources("search", query="stripe webhook invoice"))["items"]
        assert hits and {h["source"] for h in hits} <= {"agent-ci", "agent-laptop"}
        assert {h["source"] for h in (await sources("timeline", project="billing"))["items"]} == {"agent-laptop"}
        assert (await sources("timeline", source="claude-local"))["items"] == []
        later = await sources("later", item_id=2)
        assert all(h["source"].startswith("agent-") for h in later["items"])
        cat = await sources("catalog")
        assert {s["name"] for s in cat["sources"]} == {"agent-ci", "agent-laptop"}
        for item_id in (1, 3):
            for name in ("get_item", "later"):
                result = await client.call_tool(name, {"item_id": item_id})
                assert result.is_error and "not visible to this key" in result.content[0].text

    overview = httpx2.get(running.base + "/api/v1/overview", headers={"Authorization": f"Bearer {key}"})
    assert overview.status_code == 200
    assert "claude-local" not in overview.text and "codex-local" not in overview.text
    assert "agent-ci" in overview.text
    full = httpx2.get(running.base + "/api/v1/overview?days=3650",
                      headers={"Authorization": f"Bearer {KEYS['laptop']}"})
    assert full.status_code == 200 and "claude-local" in full.text
    bad = httpx2.get(running.base + "/api/v1/overview?days=soon", headers={"Authorization": f"Bearer {key}"})
    assert bad.status_code == 400


# -- the config changes while the server runs ----------------------------------------------------


def test_an_edit_is_seen_at_the_first_look_after_the_poll(tmp_path, monkeypatch):
    """The "within a second" promise, on a clock the test moves: an edit is not looked for before
    POLL_SECONDS have passed, and is in effect at the first look after; POLL_SECONDS is within
    the second."""
    from jezero.server import clients

    assert POLL_SECONDS <= 1.0
    now = [1000.0]
    monkeypatch.setattr(clients.time, "monotonic", lambda: now[0])
    run = Running(base="", config=tmp_path / "config.toml", library=tmp_path / "library.sqlite3")
    run.write_config(client_block("laptop", ["*"]), client_block("ci", ["agent-*"]))
    registry = clients.ClientRegistry.from_source(str(run.config))
    ci = key_digest(KEYS["ci"])
    assert registry.by_digest(ci) is not None
    run.write_config(client_block("laptop", ["*"]))  # ci revoked
    now[0] += POLL_SECONDS * 0.9
    assert registry.by_digest(ci) is not None  # not looked for yet
    now[0] += POLL_SECONDS * 0.2
    assert registry.by_digest(ci) is None  # the first look after the poll sees it


def test_a_revoked_key_is_refused_without_restart(running):
    assert raw_initialize(running.mcp, KEYS["ci"]).status_code == 200
    running.write_config(client_block("laptop", ["*"]))  # ci's lines deleted
    in_effect(lambda: raw_initialize(running.mcp, KEYS["ci"]).status_code == 401)
    overview = httpx2.get(running.base + "/api/v1/overview", headers={"Authorization": f"Bearer {KEYS['ci']}"})
    assert overview.status_code == 401
    assert raw_initialize(running.mcp, KEYS["laptop"]).status_code == 200


@pytest.mark.anyio
async def test_an_open_session_loses_access_when_its_key_is_revoked(running):
    async with session(running.mcp, KEYS["ci"]) as h, Client(streamable_http_client(running.mcp, http_client=h)) as client:
        assert not (await client.call_tool("timeline", {"project": "shop"})).is_error
        running.write_config(client_block("laptop", ["*"]))
        with pytest.raises(MCPError):  # how the SDK client reports the server's 401
            for _ in range(3000):  # ~60 s at most: only a broken server gets that far
                await client.call_tool("timeline", {"project": "shop"})
                await anyio.sleep(0.02)


def test_a_key_added_while_running_works(running):
    assert raw_initialize(running.mcp, KEYS["newcomer"]).status_code == 401
    running.write_config(client_block("laptop", ["*"]), client_block("ci", ["agent-*"]),
                         client_block("newcomer", ["codex-*"]))
    in_effect(lambda: raw_initialize(running.mcp, KEYS["newcomer"]).status_code == 200)
    overview = httpx2.get(running.base + "/api/v1/overview", headers={"Authorization": f"Bearer {KEYS['newcomer']}"})
    assert overview.status_code == 200 and "codex-local" in overview.text and "agent-ci" not in overview.text


def test_a_rotated_key_takes_over(running):
    old, new = KEYS["ci"], "jz_ci-rotated-key"
    rotated = client_block("ci", ["agent-*"]).replace(key_digest(old), key_digest(new))
    running.write_config(client_block("laptop", ["*"]), rotated)
    in_effect(lambda: raw_initialize(running.mcp, new).status_code == 200)
    assert raw_initialize(running.mcp, old).status_code == 401


def test_a_bad_edit_keeps_the_last_good_clients(running, caplog):
    caplog.set_level(logging.WARNING, logger="jezero.server")
    running.config.write_text(running.config.read_text() + "\n[[clients]\nname = broken\n")
    in_effect(lambda: any("keeping the last good clients" in r.getMessage() for r in caplog.records))
    assert raw_initialize(running.mcp, KEYS["ci"]).status_code == 200
    # A valid edit afterwards is picked up as usual.
    running.write_config(client_block("laptop", ["*"]))
    in_effect(lambda: raw_initialize(running.mcp, KEYS["ci"]).status_code == 401)


def test_an_edit_is_logged_without_waiting_for_a_request(running, caplog):
    caplog.set_level(logging.INFO, logger="jezero.server")
    running.write_config(client_block("laptop", ["*"]), client_block("ci", ["agent-*"]),
                         client_block("newcomer", ["*"]))
    in_effect(lambda: any("added newcomer" in r.getMessage() for r in caplog.records))
