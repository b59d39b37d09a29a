"""The shortcut for plain tool calls (jezero/server/lean.py) against the SDK's own path: two real
servers on 127.0.0.1 over the same library, one with the shortcut and one without, get the same
bytes (normal calls, tool errors and hostile requests alike) and give back the same bytes, the
Date header aside. The shortcut must also be taken for the normal calls, or the test proves
nothing."""

from __future__ import annotations

import json
import logging
import re
import socket
import threading
from contextlib import contextmanager

import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from device_support import wait_for
from jezero.server import http_server
from jezero.server.http import MAX_REQUEST_BYTES
from jezero.server.lean import LeanToolCalls
from test_server_http import KEYS, free_port, sample_library, session

MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {}}


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """Two servers over one library: (with the shortcut, without it)."""
    run = sample_library(tmp_path_factory.mktemp("lean"), "Stripe invoice webhook retries ünïcode")
    ports = [free_port(), free_port()]
    servers = [http_server(str(run.config), "127.0.0.1", port, log_level="warning", lean=lean)
               for port, lean in zip(ports, (True, False))]
    with running(servers):
        yield servers, ports


@contextmanager
def running(servers):
    """uvicorn servers, each run in a thread of its own, from when all have started until the block
    ends."""
    for server in servers:
        threading.Thread(target=server.run, daemon=True).start()
    for server in servers:
        wait_for(lambda: server.started, bound=60.0, every=0.02)
    try:
        yield
    finally:
        for server in servers:
            server.should_exit = True


def shortcut(server) -> LeanToolCalls:
    app = server.config.loaded_app if getattr(server.config, "loaded", False) else server.config.app
    while not hasattr(app, "user_middleware"):  # uvicorn's wrappers around the Starlette app
        app = app.app
    found = [m.kwargs["lean"] for m in app.user_middleware if m.kwargs.get("lean") is not None]
    assert found, "the server was built without the shortcut"
    return found[0]


def exchange(port: int, raw: bytes) -> tuple[bytes, list[tuple[bytes, bytes]], bytes]:
    """Send raw bytes (one request, Connection: close) and return the status line, the headers
    without Date, and the body, the server's port in them written PORT."""
    head, _, _ = raw.partition(b"\r\n\r\n")
    declared = re.search(rb"(?im)^content-length: *([0-9]+)", head)
    if declared and int(declared.group(1)) > MAX_REQUEST_BYTES:
        # refused on its declared length before any of the body is read (jezero.server.http):
        # a body sent after that answer would be met by a reset that can lose the answer
        raw = head + b"\r\n\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=60) as s:
        s.sendall(raw)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    data = data.replace(str(port).encode(), b"PORT")
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    headers = [tuple(line.split(b":", 1)) for line in lines[1:]]
    return lines[0], [(k.lower(), v.strip()) for k, v in headers if k.lower() != b"date"], body


def unclocked(response):
    """explain's numbers that move with the clock (an item's age, its recency factor, the score
    made with it, and the fusion's lane weights and shares, which the items lane's scores set)
    masked: the two servers answer a moment apart."""
    status, headers, body = response
    masked = re.sub(rb'(\\?"(?:age_days|recency_factor|score|items|messages|vectors)\\?":)-?[0-9][0-9.e+-]*',
                    rb"\1N", body)
    return status, [h for h in headers if h[0] != b"content-length"], masked


def post(port: int, body: bytes | dict | list | str, *, key: str | None = KEYS["laptop"], method: str | None = None,
         name: str | None = None, version: str | None = MODERN, path: str = "/mcp",
         extra: list[str] = (), content_type: str = "application/json",
         accept: str = "application/json, text/event-stream", host: str | None = None) -> bytes:
    """A POST as the SDK's client sends it (headers from the body unless given)."""
    if not isinstance(body, bytes):
        if isinstance(body, dict) and method is None:
            method = body.get("method")
            params = body.get("params")
            if name is None and isinstance(params, dict) and isinstance(params.get("name"), str):
                name = params["name"]
        body = json.dumps(body).encode()
    head = [f"POST {path} HTTP/1.1", f"Host: {host or f'127.0.0.1:{port}'}", "Connection: close",
            f"Content-Length: {len(body)}"]
    if content_type:
        head.append(f"Content-Type: {content_type}")
    if accept:
        head.append(f"Accept: {accept}")
    if key is not None:
        head.append(f"Authorization: Bearer {key}")
    if version is not None:
        head.append(f"MCP-Protocol-Version: {version}")
    if method is not None:
        head.append(f"Mcp-Method: {method}")
    if name is not None:
        head.append(f"Mcp-Name: {name}")
    head.extend(extra)
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


def call(name: str, arguments, *, id=1, meta=META, **params) -> dict:
    p = {"name": name, "arguments": arguments, **params}
    if meta is not None:
        p["_meta"] = meta
    return {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": p}


# Plain calls: the shortcut answers these.
NORMAL = [
    ("search", {"query": "stripe webhook"}),
    ("search", {"query": "stripe", "project": "shop", "limit": 1}),
    ("search", {"query": "webhook", "source": "agent-ci", "explain": True}),
    ("search", {"query": "invoice", "since": "2026-03-02", "lanes": ["items"]}),
    ("search", {"query": "\"webhook signature\""}),
    ("search", {"query": "nothing-matches-this-zzzz"}),
    ("search", {"query": "webhook", "limit": "2"}),  # the SDK coerces it
    ("search", {"query": "stripe", "unknown_argument": 1}),
    ("search", {"query": "stripe", "since": "not a date"}),  # a tool error (isError)
    ("search", {"query": 5}),  # bad arguments: the SDK's validation error (isError)
    ("search", {}),
    ("search", {"query": "x", "lanes": ["bogus"]}),
    ("search", {"query": "x", "limit": "many"}),
    ("get_item", {"item_id": 3, "include_original": True}),
    ("get_item", {"item_id": 99}),
    ("get_item", {"item_id": "3"}),
    ("get_item", {"item_id": -1}),
    ("later", {"item_id": 1, "query": "stripe webhook"}),
    ("later", {"item_id": 4}),
    ("timeline", {"project": "shop"}),
    ("timeline", {}),
    ("recall", {"query": "stripe"}),
    ("recall", {"boolean": "stripe AND ("}),
    ("catalog", {}),
    ("catalog", None),
]


@pytest.mark.parametrize("key", ["laptop", "ci"])
def test_plain_calls_get_the_same_bytes_through_the_shortcut(pair, key):
    (lean_server, _), (lean_port, sdk_port) = pair
    before = shortcut(lean_server).answered
    for i, (name, arguments) in enumerate(NORMAL):
        for id_ in (i + 1, f"req-{i}"):
            raw = post(lean_port, call(name, arguments, id=id_), key=KEYS[key])
            got, want = exchange(lean_port, raw), exchange(sdk_port, post(sdk_port, call(name, arguments, id=id_),
                                                                          key=KEYS[key]))
            if arguments and arguments.get("explain"):
                got, want = unclocked(got), unclocked(want)
            assert got == want, (name, arguments, got[0], want[0], got[2][:300], want[2][:300])
    assert shortcut(lean_server).answered - before == 2 * len(NORMAL)


def hostile(port: int) -> list[tuple[str, bytes]]:
    ok = call("search", {"query": "stripe"})
    big = b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "search", "arguments": {"query": "' \
        + b"x" * (MAX_REQUEST_BYTES + 10) + b'"}}}'
    no_caps = dict(META)
    del no_caps["io.modelcontextprotocol/clientCapabilities"]
    return [
        ("truncated JSON", post(port, b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {', method="tools/call")),
        ("not JSON", post(port, b"hello", method="tools/call")),
        ("a batch", post(port, [ok], method="tools/call", name="search")),
        ("a string", post(port, "tools/call", method="tools/call")),
        ("deep nesting", post(port, b"[" * 100_000 + b"]" * 100_000, method="tools/call")),
        ("a huge integer id", post(port, b'{"jsonrpc": "2.0", "id": ' + b"9" * 5000 + b', "method": "tools/call"}',
                                   method="tools/call")),
        ("an unknown tool", post(port, call("delete_everything", {}))),
        ("no tool name", post(port, {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                     "params": {"arguments": {}, "_meta": META}}, name="search")),
        ("a tool name that is not a string", post(port, call(7, {}), name="7")),
        ("arguments that are a list", post(port, call("search", ["stripe"]))),
        ("arguments that are a string", post(port, call("search", '{"query": "stripe"}'))),
        ("an oversized body", post(port, big, method="tools/call", name="search")),
        ("no key", post(port, ok, key=None)),
        ("a wrong key", post(port, ok, key="jz_wrong")),
        ("an empty key", post(port, ok, key="")),
        ("a Basic header", post(port, ok, key=None, extra=["Authorization: Basic Zm9vOmJhcg=="])),
        ("no protocol version header", post(port, ok, version=None)),
        ("the handshake-era version", post(port, ok, version="2025-11-25")),
        ("an unknown version", post(port, ok, version="2099-01-01")),
        ("the header and the envelope disagree", post(port, call("search", {"query": "stripe"}, meta={
            **META, "io.modelcontextprotocol/protocolVersion": "2025-11-25"}))),
        ("no _meta", post(port, call("search", {"query": "stripe"}, meta=None))),
        ("_meta without capabilities", post(port, call("search", {"query": "stripe"}, meta=no_caps))),
        ("malformed clientInfo", post(port, call("search", {"query": "stripe"}, meta={
            **META, "io.modelcontextprotocol/clientInfo": "me"}))),
        ("no Mcp-Method", post(port, json.dumps(ok).encode(), name="search")),
        ("a wrong Mcp-Method", post(port, ok, method="tools/list")),
        ("a wrong Mcp-Name", post(port, ok, name="get_item")),
        ("no Mcp-Name", post(port, json.dumps(ok).encode(), method="tools/call")),
        ("a duplicated version header", post(port, ok, extra=[f"MCP-Protocol-Version: {MODERN}"])),
        ("an Mcp-Param header", post(port, ok, extra=["Mcp-Param-Query: stripe"])),
        ("a wrong Content-Type", post(port, ok, content_type="text/plain")),
        ("no Content-Type", post(port, ok, content_type="")),
        ("an event stream only", post(port, ok, accept="text/event-stream")),
        ("no Accept", post(port, ok, accept="")),
        ("a wildcard Accept", post(port, ok, accept="*/*")),
        ("a foreign Host", post(port, ok, host="evil.example")),
        ("a foreign Origin", post(port, ok, extra=["Origin: http://evil.example"])),
        ("a local Origin", post(port, ok, extra=[f"Origin: http://127.0.0.1:{port}"])),
        ("a trailing slash", post(port, ok, path="/mcp/")),
        ("another path", post(port, ok, path="/mcpx")),
        ("jsonrpc 1.0", post(port, {**ok, "jsonrpc": "1.0"})),
        ("a null id", post(port, {**ok, "id": None})),
        ("a float id", post(port, {**ok, "id": 1.5})),
        ("a boolean id", post(port, {**ok, "id": True})),
        ("a notification", post(port, {"jsonrpc": "2.0", "method": "tools/call", "params": ok["params"]},
                                name="search")),
        ("requestState", post(port, call("search", {"query": "stripe"}, requestState="forged"))),
        ("inputResponses", post(port, call("search", {"query": "stripe"}, inputResponses={}))),
        ("an unknown method", post(port, {"jsonrpc": "2.0", "id": 1, "method": "prompts/list",
                                          "params": {"_meta": META}})),
        ("tools/list", post(port, {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}})),
    ]


def test_hostile_requests_get_the_same_bytes_either_way(pair, caplog):
    (lean_server, _), (lean_port, sdk_port) = pair
    caplog.set_level(logging.INFO)
    lean_cases, sdk_cases = hostile(lean_port), hostile(sdk_port)
    answered = shortcut(lean_server).answered
    for (what, raw_lean), (_, raw_sdk) in zip(lean_cases, sdk_cases):
        got, want = exchange(lean_port, raw_lean), exchange(sdk_port, raw_sdk)
        assert got == want, (what, got, want)
    # The hostile requests all went the SDK's way, but for the harmless ones it would dispatch:
    # a local Origin, a wildcard Accept and an Mcp-Param header it does not check, and the two
    # that take the handshake-era path (no version header, the handshake-era version), where
    # the enveloped call is dispatched as any other.
    assert shortcut(lean_server).answered - answered == 5


@pytest.mark.anyio
async def test_the_sdk_client_is_answered_by_the_shortcut(pair):
    (lean_server, _), (lean_port, _) = pair
    url = f"http://127.0.0.1:{lean_port}/mcp"
    before = shortcut(lean_server).answered
    async with session(url, KEYS["ci"]) as h, Client(streamable_http_client(url, http_client=h)) as client:
        result = await client.call_tool("search", {"query": "stripe webhook"})
        assert not result.is_error
        assert {hit["id"] for hit in result.structured_content["items"]} == {2, 4}  # ci reads agent-* only
        missing = await client.call_tool("get_item", {"item_id": 1})
        assert missing.is_error and "no item 1 (or not visible to this key)" in missing.content[0].text
    assert shortcut(lean_server).answered - before == 2


# -- the handshake era (2025-11-25 and before): the stateless legacy path ----------------------

HANDSHAKE = "2025-11-25"


def initialize(id=1, version=HANDSHAKE, **params) -> dict:
    p = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "mcp", "version": "0.1.0"}, **params}
    return {"jsonrpc": "2.0", "id": id, "method": "initialize", "params": p}


@pytest.mark.parametrize("key", ["laptop", "ci"])
def test_handshake_era_calls_get_the_same_bytes_through_the_shortcut(pair, key):
    """Older clients' tool calls (no `_meta` envelope, the version in the header), with an
    `Mcp-Session-Id` or without one (stateless: the SDK ignores it), at every handshake-era
    version and with no version header at all (the spec's default, 2025-03-26)."""
    (lean_server, _), (lean_port, sdk_port) = pair
    before = shortcut(lean_server).answered_handshake
    sent = 0
    for i, (name, arguments) in enumerate(NORMAL):
        for id_, version, extra in ((i + 1, HANDSHAKE, []), (f"req-{i}", HANDSHAKE, ["Mcp-Session-Id: 3f2a9c"]),
                                    (i + 100, "2025-06-18", []), (i + 200, "2024-11-05", []), (i + 300, None, [])):
            if version != HANDSHAKE and i % 3:
                continue  # the other versions on a third of the calls
            body = call(name, arguments, id=id_, meta=None)
            got = exchange(lean_port, post(lean_port, body, key=KEYS[key], version=version, extra=extra))
            want = exchange(sdk_port, post(sdk_port, body, key=KEYS[key], version=version, extra=extra))
            if arguments and arguments.get("explain"):
                got, want = unclocked(got), unclocked(want)
            assert got == want, (name, arguments, version, got[0], want[0], got[2][:300], want[2][:300])
            assert b"200 OK" in want[0], want
            sent += 1
    assert shortcut(lean_server).answered_handshake - before == sent


def test_the_initialize_handshake_gets_the_same_bytes_through_the_shortcut(pair):
    (lean_server, _), (lean_port, sdk_port) = pair
    before = shortcut(lean_server).answered_handshake
    cases = [
        (initialize(), None),  # the SDK's client: no version header on initialize
        (initialize(), HANDSHAKE),
        (initialize(id="init-7", version="2025-03-26"), "2025-03-26"),
        (initialize(version="2024-11-05"), None),
        (initialize(version="1999-01-01"), None),  # an unknown offer: the server counters with its latest
        (initialize(version="2026-07-28"), HANDSHAKE),  # a modern version offered in the handshake
        (initialize(capabilities={"roots": {"listChanged": True}, "sampling": {}}), HANDSHAKE),
        (initialize(_meta={"progressToken": 5}), HANDSHAKE),
        (initialize(clientInfo={"name": "ünï", "version": "1", "title": "Ü"}), HANDSHAKE),
    ]
    for body, version in cases:
        got = exchange(lean_port, post(lean_port, body, version=version))
        want = exchange(sdk_port, post(sdk_port, body, version=version))
        assert got == want, (body, version, got, want)
        assert b"200 OK" in want[0] and b'"protocolVersion"' in want[2], want
    assert shortcut(lean_server).answered_handshake - before == len(cases)


def handshake_hostile(port: int) -> list[tuple[str, bytes, bool]]:
    """Odd and hostile handshake-era requests: (what, raw request, answered by the shortcut)."""
    ok = call("search", {"query": "stripe"}, meta=None)
    big = b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "search", "arguments": {"query": "' \
        + b"x" * (MAX_REQUEST_BYTES + 10) + b'"}}}'
    v = HANDSHAKE

    def p(body, **kw):
        kw.setdefault("version", v)
        return post(port, body, **kw)

    return [
        ("truncated JSON", p(b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {'), False),
        ("not JSON", p(b"hello"), False),
        ("an empty body", p(b""), False),
        ("a batch", p([ok]), False),
        ("a batch holding an initialize", p([initialize()]), False),
        ("a string", p("tools/call"), False),
        ("deep nesting", p(b"[" * 100_000 + b"]" * 100_000), False),
        ("a huge integer id", p(b'{"jsonrpc": "2.0", "id": ' + b"9" * 5000 + b', "method": "tools/call"}'), False),
        ("a duplicated key", p(b'{"jsonrpc": "2.0", "id": 1, "id": "two", "method": "tools/call", '
                               b'"params": {"name": "get_item", "arguments": {"item_id": 3}}}'), True),
        ("an unknown tool", p(call("delete_everything", {}, meta=None)), False),
        ("no tool name", p({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"arguments": {}}}), False),
        ("a tool name that is not a string", p(call(7, {}, meta=None)), False),
        ("arguments that are a list", p(call("search", ["stripe"], meta=None)), False),
        ("arguments that are a string", p(call("search", '{"query": "stripe"}', meta=None)), False),
        ("no params", p({"jsonrpc": "2.0", "id": 1, "method": "tools/call"}), False),
        ("an oversized body", p(big), False),
        ("no key", p(ok, key=None), False),
        ("a wrong key", p(ok, key="jz_wrong"), False),
        ("a Basic header", p(ok, key=None, extra=["Authorization: Basic Zm9vOmJhcg=="]), False),
        ("a wrong Content-Type", p(ok, content_type="text/plain"), False),
        ("an upper-case Content-Type", p(ok, content_type="Application/JSON"), False),
        ("a Content-Type that only starts with JSON's", p(ok, content_type="application/json-patch+json"), False),
        ("a Content-Type with a charset", p(ok, content_type="application/json; charset=utf-8"), True),
        ("no Content-Type", p(ok, content_type=""), False),
        ("an event stream only", p(ok, accept="text/event-stream"), False),
        ("no Accept", p(ok, accept=""), False),
        ("a wildcard Accept", p(ok, accept="*/*"), True),
        ("a foreign Host", p(ok, host="evil.example"), False),
        ("a foreign Origin", p(ok, extra=["Origin: http://evil.example"]), False),
        ("a local Origin", p(ok, extra=[f"Origin: http://127.0.0.1:{port}"]), True),
        ("a trailing slash", p(ok, path="/mcp/"), False),
        ("jsonrpc 1.0", p({**ok, "jsonrpc": "1.0"}), False),
        ("a null id", p({**ok, "id": None}), False),
        ("a float id", p({**ok, "id": 1.5}), False),
        ("a boolean id", p({**ok, "id": True}), False),
        ("a notification", p({"jsonrpc": "2.0", "method": "tools/call", "params": ok["params"]}), False),
        ("notifications/initialized", p({"jsonrpc": "2.0", "method": "notifications/initialized"}), False),
        ("a response", p({"jsonrpc": "2.0", "id": 1, "result": {}}), False),
        ("requestState", p(call("search", {"query": "stripe"}, meta=None, requestState="forged")), False),
        ("a task", p(call("search", {"query": "stripe"}, meta=None, task={"ttl": 1000})), False),
        ("the modern envelope under a handshake header", p(call("search", {"query": "stripe"})), True),
        ("a progress token", p(call("search", {"query": "stripe"}, meta={"progressToken": "t1"})), True),
        ("a wrong Mcp-Method and Mcp-Name", p(ok, method="tools/list", name="get_item"), True),
        ("an Mcp-Session-Id of odd bytes", p(ok, extra=["Mcp-Session-Id: a b\tc"]), True),
        ("a handshake version, then a modern one", p(ok, extra=[f"MCP-Protocol-Version: {MODERN}"]), True),
        ("a modern version, then a handshake one", p(ok, version=MODERN, extra=[f"MCP-Protocol-Version: {v}"]),
         False),
        ("an unknown version", p(ok, version="2099-01-01"), False),
        ("a lower-case version value", p(ok, version="2025-11-25 "), False),
        ("an unknown method", p({"jsonrpc": "2.0", "id": 1, "method": "prompts/list"}), False),
        ("tools/list", p({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}), False),
        ("ping", p({"jsonrpc": "2.0", "id": 1, "method": "ping"}), False),
        ("initialize without params", p({"jsonrpc": "2.0", "id": 1, "method": "initialize"}), False),
        ("initialize without a version", p({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                            "params": {"capabilities": {}, "clientInfo": {"name": "a", "version": "1"}}}),
         False),
        ("initialize with capabilities that are a string", p(initialize(capabilities="all")), False),
        ("initialize with the modern envelope", p(initialize(_meta=META)), True),
        ("initialize as a notification", p({"jsonrpc": "2.0", "method": "initialize",
                                            "params": initialize()["params"]}), False),
    ]


def test_hostile_handshake_era_requests_get_the_same_bytes_either_way(pair, caplog):
    (lean_server, _), (lean_port, sdk_port) = pair
    caplog.set_level(logging.INFO)
    lean_cases, sdk_cases = handshake_hostile(lean_port), handshake_hostile(sdk_port)
    for (what, raw_lean, taken), (_, raw_sdk, _) in zip(lean_cases, sdk_cases):
        before = shortcut(lean_server).answered
        got, want = exchange(lean_port, raw_lean), exchange(sdk_port, raw_sdk)
        assert got == want, (what, got, want)
        assert shortcut(lean_server).answered - before == taken, (what, got)


@pytest.mark.anyio
async def test_a_handshake_era_sdk_client_is_answered_by_the_shortcut(pair):
    """The SDK's own client at 2025-11-25: its initialize and its tool calls take the shortcut;
    its notifications/initialized and tools/list (it reads the tools' output schemas) the SDK."""
    (lean_server, _), (lean_port, _) = pair
    url = f"http://127.0.0.1:{lean_port}/mcp"
    before = shortcut(lean_server).answered_handshake
    async with session(url, KEYS["ci"]) as h, Client(streamable_http_client(url, http_client=h), mode="legacy") as client:
        result = await client.call_tool("search", {"query": "stripe webhook"})
        assert not result.is_error
        assert {hit["id"] for hit in result.structured_content["items"]} == {2, 4}  # ci reads agent-* only
        missing = await client.call_tool("get_item", {"item_id": 1})
        assert missing.is_error and "no item 1 (or not visible to this key)" in missing.content[0].text
    assert shortcut(lean_server).answered_handshake - before == 3  # initialize and the two calls
