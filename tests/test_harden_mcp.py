"""Hostile MCP clients against the real server, a `jezero serve --transport stdio` subprocess and
uvicorn on 127.0.0.1: JSON-RPC shapes that are not requests, ids of every type and size, unknown
methods and tools, arguments of the wrong type, FTS5 operators, NUL bytes, lone surrogates, bad
bytes, nesting past any parser's depth, ids that try a path. Every request gets an answer (a
result or a clear error, never silence), and the requests after it are served as before.
(Sizes and values at the tool boundary: test_hostile_input.py; bodies, keys and headers over
HTTP: test_server_hardening.py.)"""

from __future__ import annotations

import json
import socket
import subprocess

import httpx2
import pytest

from test_server import SAMPLE, stdio_params, write_library
from test_server_http import KEYS, running  # noqa: F401 (fixture)


@pytest.fixture
def config_file(tmp_path):
    library = write_library(tmp_path / "library.sqlite3", SAMPLE)
    path = tmp_path / "config.toml"
    path.write_text(f'[storage]\npath = "{library}"\n')
    return path


def request(id_, method, **params) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": id_, "method": method, "params": params}).encode()


def tool_call(id_, name, **arguments) -> bytes:
    return request(id_, "tools/call", name=name, arguments=arguments)


HELLO = request(1, "initialize", protocolVersion="2025-11-25", capabilities={}, clientInfo={"name": "raw", "version": "1"})
INITIALIZED = b'{"jsonrpc": "2.0", "method": "notifications/initialized"}'
FTS5 = ['"', '"unbalanced', "*", "stripe*", "NEAR(", "NEAR(stripe webhook, 2)", "AND OR NOT", "stripe AND",
        "NOT stripe", "^stripe", "title:stripe", ":", "((stripe", "stripe))", "{title summary}: x", "\x00", "\x00" * 50]

# (what it is, the line, the id its answer must carry: None for an answer to nobody)
HOSTILE: list[tuple[str, bytes, object]] = [
    ("a batch", b"[" + request(10, "tools/list") + b", " + request(11, "tools/list") + b"]", None),
    ("an empty batch", b"[]", None),
    ("a string", b'"tools/list"', None),
    ("null", b"null", None),
    ("a number", b"42", None),
    ("not JSON", b"{'jsonrpc': '2.0'", None),
    ("bad bytes", b'{"jsonrpc": "2.0", "id": 12, "method": "tools/list", "x": "\xff\xfe"}', None),
    ("JSON-RPC 1.0", b'{"jsonrpc": "1.0", "id": 13, "method": "tools/list"}', None),
    ("no jsonrpc", b'{"id": 14, "method": "tools/list"}', None),
    ("params a list", b'{"jsonrpc": "2.0", "id": 15, "method": "tools/call", "params": [1, 2]}', None),
    ("a float id", request(1.5, "tools/list"), None),
    ("an object id", request({"a": 1}, "tools/list"), None),
    ("a list id", request([16], "tools/list"), None),
    ("a true id", request(True, "tools/list"), None),
    ("nesting past the parser's depth", b'{"jsonrpc": "2.0", "id": 17, "method": "tools/list", "params": '
     + b"[" * 100_000 + b"]" * 100_000 + b"}", None),
    ("a huge id", request(10**30, "tools/list"), 10**30),
    ("a negative id", request(-(2**63) - 1, "tools/list"), -(2**63) - 1),
    ("a 10 KB string id", request("i" * 10_000, "tools/list"), "i" * 10_000),
    ("an unknown method", request(20, "tools/destroy"), 20),
    ("params null", b'{"jsonrpc": "2.0", "id": 21, "method": "tools/call", "params": null}', 21),
    ("an unknown tool", tool_call(22, "rm_rf"), 22),
    ("a tool name that is a number", request(23, "tools/call", name=7, arguments={}), 23),
    ("arguments a list", request(24, "tools/call", name="search", arguments=["stripe"]), 24),
    ("an extra argument", tool_call(25, "search", query="stripe", evil="1; DROP TABLE items"), 25),
    ("a query that is a number", tool_call(26, "search", query=123), 26),
    ("a negative limit", tool_call(27, "search", query="stripe", limit=-5), 27),
    ("a huge limit", tool_call(28, "search", query="stripe", limit=10**12), 28),
    ("a 1 MB query", tool_call(29, "search", query="stripe " * 150_000), 29),
    ("half a surrogate pair", b'{"jsonrpc": "2.0", "id": 30, "method": "tools/call", "params": {"name": "search", '
     b'"arguments": {"query": "\\ud800 stripe \\udfff"}}}', None),
    *[(f"FTS5 syntax {q!r}", tool_call(40 + i, "search", query=q), 40 + i) for i, q in enumerate(FTS5)],
    *[(f"get_item {ident!r}", tool_call(70 + i, "get_item", item_id=ident), 70 + i) for i, ident in
      enumerate(["../../etc/passwd", "1/../2", "/etc/passwd", "..\\..\\boot.ini", "%2e%2e%2f1", "1\x00", "file:///etc/passwd"])],
]


def answers_of(stdout: bytes) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines()]


def test_stdio_answers_every_hostile_line_and_goes_on_serving(config_file):
    lines = [HELLO, INITIALIZED]
    for n, (_, line, _) in enumerate(HOSTILE):
        lines += [line, tool_call(1000 + n, "search", query="stripe webhook")]  # a good request after each
    params = stdio_params(config_file)
    proc = subprocess.run([params.command, *params.args], input=b"\n".join(lines) + b"\n", env=params.env,
                          cwd=params.cwd, capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    assert b"Traceback" not in proc.stderr
    answers = answers_of(proc.stdout)
    good = {a["id"]: a for a in answers if a.get("id") in range(1000, 1000 + len(HOSTILE))}
    assert sorted(good) == list(range(1000, 1000 + len(HOSTILE)))
    assert all("Stripe" in a["result"]["content"][0]["text"] for a in good.values())
    rest = [a for a in answers if a.get("id") != 1 and a.get("id") not in good]
    # one answer per hostile line: a batch is refused whole, as one line that is not a message
    assert len(rest) == len(HOSTILE), [(what, a) for (what, *_), a in zip(HOSTILE, rest)]
    by_id = {json.dumps(a["id"]): a for a in rest}
    for what, _, id_ in HOSTILE:
        if id_ is not None:
            assert json.dumps(id_) in by_id, what
    assert all(a["error"]["code"] in (-32700, -32600) and a["error"]["message"] for a in rest if a["id"] is None)
    refused = [a for a in rest if "error" in a and a["error"]["code"] in (-32700, -32600)]
    assert proc.stderr.decode().count("refused a line on stdin") == len(refused)


def test_stdio_refuses_a_request_whose_id_is_not_a_string_or_a_whole_number(config_file):
    """The SDK reads such a line as a notification and never answers it: the client waited for
    ever. It is refused as JSON-RPC says, with a null id."""
    lines = [HELLO, INITIALIZED, request(1.5, "tools/list"), request({"a": 1}, "tools/call", name="search"),
             request(2, "tools/list")]
    params = stdio_params(config_file)
    proc = subprocess.run([params.command, *params.args], input=b"\n".join(lines) + b"\n", env=params.env,
                          cwd=params.cwd, capture_output=True, timeout=120)
    answers = answers_of(proc.stdout)
    refused = [a for a in answers if "error" in a]
    assert [(a["id"], a["error"]["code"]) for a in refused] == [(None, -32600), (None, -32600)]
    assert "string or a whole number" in refused[0]["error"]["message"]
    assert [a["id"] for a in answers if "result" in a] == [1, 2]
    assert proc.stderr.decode().count("refused a line on stdin") == 2


def _post(running, body: bytes, version: str | None) -> httpx2.Response:  # noqa: F811
    headers = {"Authorization": f"Bearer {KEYS['laptop']}", "Accept": "application/json, text/event-stream",
               "Content-Type": "application/json"}
    if version:
        headers["MCP-Protocol-Version"] = version
    return httpx2.post(running.mcp, content=body, headers=headers, timeout=60)


@pytest.mark.parametrize("version", [None, "2025-11-25"])
def test_http_answers_every_hostile_body_and_goes_on_serving(running, version):  # noqa: F811
    for what, body, id_ in HOSTILE:
        r = _post(running, body, version)
        assert r.status_code in (200, 202, 400, 413), (what, r.status_code)
        assert "Traceback" not in r.text and 'File "' not in r.text, what
        if r.status_code == 400:
            assert r.json()["error"]["message"], what
        if id_ is not None and r.status_code == 200:
            assert json.dumps(r.json()["id"]) == json.dumps(id_), what
        ok = _post(running, tool_call(99, "search", query="stripe webhook"), version)
        assert ok.status_code == 200 and "Stripe" in ok.text, what


@pytest.mark.parametrize("version", [None, "2025-11-25", "2026-07-28"])
def test_http_refuses_a_request_whose_id_is_not_a_string_or_a_whole_number(running, version):  # noqa: F811
    """As stdio does: the SDK's older path took such a request for a notification and answered
    202 with no body, so the client waited for an answer that never came."""
    for id_ in (1.5, {"a": 1}, [16], True):
        r = _post(running, request(id_, "tools/list"), version)
        assert r.status_code == 400, (id_, r.status_code, r.text)
        assert r.json()["id"] is None and r.json()["error"]["code"] == -32600, r.text
    missing = _post(running, b'{"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "search"}}', version)
    assert missing.status_code == 400 and "string or a whole number" in missing.json()["error"]["message"]
    assert _post(running, INITIALIZED, version).status_code == 202  # a real notification is accepted as before
    no_key = httpx2.post(running.mcp, content=request(1.5, "tools/list"), timeout=60,
                         headers={"Accept": "application/json, text/event-stream", "Content-Type": "application/json"})
    assert no_key.status_code == 401  # the key is checked first, as for every request
    ok = _post(running, tool_call(99, "search", query="stripe webhook"), None)
    assert ok.status_code == 200 and "Stripe" in ok.text


def _head(running) -> tuple[str, int]:  # noqa: F811
    port = int(running.base.rsplit(":", 1)[1])
    return f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n", port


def test_partial_requests_held_open_do_not_stop_others(running):  # noqa: F811
    """Slowloris: many connections each sending part of a request head, or a head and part of
    its body, and then nothing; and clients that send a whole request and go away before the
    answer. A normal client is served all the while."""
    head, port = _head(running)
    body = tool_call(5, "search", query="stripe webhook")
    full_head = (head + f"Authorization: Bearer {KEYS['laptop']}\r\nContent-Type: application/json\r\n"
                 f"Accept: application/json, text/event-stream\r\nContent-Length: {len(body)}\r\n\r\n").encode()
    held = []
    try:
        for i in range(60):
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall([head.encode() + b"X-Slow: ", full_head, full_head + body[:10]][i % 3])
            held.append(s)
        for _ in range(10):  # a whole request, then gone before the answer
            with socket.create_connection(("127.0.0.1", port)) as s:
                s.sendall(full_head + body)
        for _ in range(3):
            ok = _post(running, tool_call(99, "search", query="stripe webhook"), None)
            assert ok.status_code == 200 and "Stripe" in ok.text
    finally:
        for s in held:
            s.close()
    ok = _post(running, tool_call(99, "search", query="stripe webhook"), None)
    assert ok.status_code == 200 and "Stripe" in ok.text
