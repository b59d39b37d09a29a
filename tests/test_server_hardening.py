"""The HTTP server against a hostile page, a hostile client and a revoked key (issue 10, part of
defect 7): the overview checks Host and Origin like /mcp; no event stream outlives a key; bodies
are bounded; no capabilities advertised that the server lacks; a public address warns."""

from __future__ import annotations

import logging

import httpx2
import pytest
from mcp import Client

from jezero.server import build_mcp_server, http_server
from jezero.server.http import MAX_REQUEST_BYTES
from test_server_http import KEYS, client_block, raw_initialize, running  # noqa: F401 (fixture)


@pytest.fixture
def anyio_backend():
    return "asyncio"


def _auth(extra: dict | None = None) -> dict:
    return {"Authorization": f"Bearer {KEYS['laptop']}", **(extra or {})}


def test_the_overview_refuses_a_foreign_host_or_origin(running):  # noqa: F811
    url = running.base + "/api/v1/overview"
    assert httpx2.get(url, headers=_auth()).status_code == 200
    assert httpx2.get(url, headers=_auth({"Host": "evil.example"})).status_code == 421
    assert httpx2.get(url, headers=_auth({"Origin": "http://evil.example"})).status_code == 403
    local_page = _auth({"Origin": running.base})
    assert httpx2.get(url, headers=local_page).status_code == 200


def test_no_event_stream_is_opened_so_none_outlives_a_revoked_key(running):  # noqa: F811
    headers = _auth({"Accept": "text/event-stream"})
    r = httpx2.get(running.mcp, headers=headers, timeout=5)
    assert r.status_code == 405
    assert raw_initialize(running.mcp, KEYS["laptop"]).status_code == 200  # POST still works


def test_an_oversized_body_is_refused_before_it_is_parsed(running):  # noqa: F811
    body = b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "search", "arguments": {"query": "' \
        + b"x" * (MAX_REQUEST_BYTES + 10) + b'"}}}'
    headers = _auth({"Accept": "application/json, text/event-stream", "Content-Type": "application/json"})
    r = httpx2.post(running.mcp, content=body, headers=headers, timeout=10)
    assert r.status_code == 413


def test_a_declared_oversized_body_is_refused_without_waiting_for_it(running):  # noqa: F811
    # The client declares more than the limit and sends nothing: it used to be waited for, its
    # connection held until it went away.
    import socket
    from urllib.parse import urlsplit

    url = urlsplit(running.mcp)
    with socket.create_connection((url.hostname, url.port), timeout=30) as sock:
        sock.sendall((f"POST {url.path} HTTP/1.1\r\nHost: {url.netloc}\r\n"
                      f"Authorization: Bearer {KEYS['laptop']}\r\nContent-Type: application/json\r\n"
                      f"Accept: application/json, text/event-stream\r\n"
                      f"Content-Length: {MAX_REQUEST_BYTES + 1}\r\n\r\n").encode())
        reply = sock.recv(4096)  # the 30 s timeout only guards against a hang
    assert reply.startswith(b"HTTP/1.1 413")


@pytest.mark.anyio
async def test_only_the_tools_capability_is_advertised(tmp_path):
    from jezero.config import Config

    async with Client(build_mcp_server(Config.model_validate({"storage": {"path": str(tmp_path / "l")}}))) as c:
        caps = c.server_capabilities
        assert caps.tools is not None
        assert caps.prompts is None and caps.resources is None


def test_a_public_address_warns_about_tls(tmp_path, caplog):
    config = tmp_path / "c.toml"
    config.write_text(f'[storage]\npath = "{tmp_path / "l.sqlite3"}"\n')
    with caplog.at_level(logging.WARNING, logger="jezero.server"):
        http_server(str(config), "0.0.0.0", 9)
    assert any("TLS reverse proxy" in r.getMessage() for r in caplog.records)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="jezero.server"):
        http_server(str(config), "127.0.0.1", 9)
    assert not any("TLS" in r.getMessage() for r in caplog.records)


def test_abandoned_half_sent_bodies_are_dropped_quietly(running, caplog):  # noqa: F811
    # Each one used to be an ERROR with a full traceback and a 500 to nobody: a client opening and
    # abandoning connections kept the server busy logging while real requests waited.
    import json
    import socket

    caplog.set_level(logging.INFO)
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": "search", "arguments": {"query": "webhook"}}}).encode()
    port = int(running.base.rsplit(":", 1)[1])
    head = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {KEYS['laptop']}\r\n"
            f"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode()
    sockets = []
    for i in range(30):
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(head + body[: i * len(body) // 30])
        if i % 2:
            s.shutdown(socket.SHUT_WR)  # half-closed: no more body will come
        sockets.append(s)
    for s in sockets:
        s.close()
    headers = _auth({"Accept": "application/json, text/event-stream", "Content-Type": "application/json"})
    r = httpx2.post(running.mcp, content=body, headers=headers, timeout=60)
    assert r.status_code == 200 and "Stripe" in r.text
    assert not [rec for rec in caplog.records if rec.levelno >= logging.ERROR], \
        [rec.getMessage() for rec in caplog.records if rec.levelno >= logging.ERROR][:3]
