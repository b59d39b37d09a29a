"""Slowloris against a real server on 127.0.0.1, with both HTTP parsers (httptools, and h11 where
httptools is not installed) and small deadlines: a connection that sends part of a request head
gets 408 and is closed; one that sends nothing is closed; a body that trickles in is cut with 408
and nothing is stored; a connection idle between two requests keeps uvicorn's keep-alive; a
normal client is served all the while. No duration is asserted: each wait is "until it happens",
with a generous bound that only stops a broken server from hanging the test."""

from __future__ import annotations

import hashlib
import json
import re
import select
import socket
import threading

import httpx2
import pytest

from device_support import wait_for
from jezero.server import http_server, parser
from jezero.server.parser import BoundedH11, BoundedHttpTools
from test_server_http import KEYS, client_block, free_port, sample_library

HEAD_SECONDS = 2.0  # small, so the tests wait little; a real head arrives whole long before
BODY_SECONDS = 3.0
BOUND = 60.0  # the most any wait may take before the test calls the server broken


@pytest.fixture(params=["httptools", "h11"], scope="module")
def server(request, tmp_path_factory):
    """A server with the small deadlines and the given parser: (port, library path)."""
    run = sample_library(tmp_path_factory.mktemp(request.param))
    run.write_config(f"\n[server]\nhead_timeout_seconds = {HEAD_SECONDS}\nbody_timeout_seconds = {BODY_SECONDS}\n",
                     client_block("laptop", ["*"]))
    with pytest.MonkeyPatch.context() as patch:
        if request.param == "h11":  # what protocol() gives where httptools is not installed
            patch.setattr(parser, "HttpToolsProtocol", None)
        port = free_port()
        uv = http_server(str(run.config), "127.0.0.1", port, log_level="warning")
    uv.config.timeout_keep_alive = 600  # the keep-alive test's idle connection outlives any wait here
    thread = threading.Thread(target=uv.run, daemon=True)
    thread.start()
    wait_for(lambda: uv.started, bound=BOUND, every=0.02)
    expected = BoundedH11 if request.param == "h11" else BoundedHttpTools
    assert uv.config.http_protocol_class.func is expected
    yield port, run.library
    uv.should_exit = True
    thread.join(10)


SEARCH = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                     "params": {"name": "search", "arguments": {"query": "stripe webhook"}}}).encode()


def head(port: int, body: bytes) -> bytes:
    return (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {KEYS['laptop']}\r\n"
            f"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode()


def normal_search(port: int) -> None:
    """A normal client's search, answered in full."""
    r = httpx2.post(f"http://127.0.0.1:{port}/mcp", content=SEARCH, timeout=BOUND,
                    headers={"Authorization": f"Bearer {KEYS['laptop']}", "Content-Type": "application/json",
                             "Accept": "application/json, text/event-stream"})
    assert r.status_code == 200 and "Stripe webhook signature check" in r.text, r.text[:300]


def connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=BOUND)


def until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection."""
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def one_response(sock: socket.socket) -> bytes:
    """One response (with Content-Length) read off a connection kept open."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536) or pytest.fail(f"closed before a whole response: {data!r}")
    top, _, body = data.partition(b"\r\n\r\n")
    length = int(re.search(rb"(?im)^content-length: *([0-9]+)", top).group(1))
    while len(body) < length:
        body += sock.recv(65536) or pytest.fail("closed in the middle of a response")
    return top + b"\r\n\r\n" + body


def is_closed(sock: socket.socket) -> bool:
    """The server has closed it (what it sent before is read and dropped)."""
    while select.select([sock], [], [], 0)[0]:
        try:
            if sock.recv(65536) == b"":
                return True
        except ConnectionResetError:
            return True
    return False


def assert_timed_out(answer: bytes, body: bytes) -> None:
    status, _, rest = answer.partition(b"\r\n")
    assert status == b"HTTP/1.1 408 Request Timeout", answer[:300]
    assert re.search(rb"(?im)^connection: close\r$", rest), answer[:300]
    assert answer.endswith(body), answer[-300:]


def test_a_partial_head_gets_408_and_is_closed(server):
    port, _ = server
    with connect(port) as sock:
        sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        assert_timed_out(until_closed(sock), b"Request head not received in time.")


def test_a_partial_head_after_a_whole_request_gets_408(server):
    """The deadline starts again with the next request's first byte on a kept connection."""
    port, _ = server
    with connect(port) as sock:
        sock.sendall(head(port, SEARCH) + SEARCH)
        assert one_response(sock).startswith(b"HTTP/1.1 200")
        sock.sendall(head(port, SEARCH)[:40])
        assert_timed_out(until_closed(sock), b"Request head not received in time.")


def test_a_silent_connection_is_closed_without_an_answer(server):
    port, _ = server
    with connect(port) as sock:
        assert until_closed(sock) == b""


def library_state(library) -> str:
    return hashlib.sha256(library.read_bytes()).hexdigest()


def trickle(sock: socket.socket, data: bytes, stop: threading.Event) -> None:
    """Send `data` a byte at a time, a tenth of a second apart, until the server answers (or
    closes) or `stop`: a client that never stops sending is cut by the body's deadline alone."""
    for i in range(len(data)):
        if stop.is_set() or select.select([sock], [], [], 0.1)[0]:
            return
        try:
            sock.sendall(data[i:i + 1])
        except OSError:
            return


def test_a_trickling_body_is_cut_with_408_and_nothing_changes(server):
    port, library = server
    before = library_state(library)
    # a long query: trickled at 10 bytes a second it would take minutes
    body = json.dumps({"jsonrpc": "2.0", "id": 8, "method": "tools/call",
                       "params": {"name": "search", "arguments": {"query": "stripe " * 300}}}).encode()
    stop = threading.Event()
    with connect(port) as sock:
        sock.sendall(head(port, body) + body[:20])
        sender = threading.Thread(target=trickle, args=(sock, body[20:], stop), daemon=True)
        sender.start()
        try:
            answer = until_closed(sock)
        finally:
            stop.set()
            sender.join(BOUND)
    assert_timed_out(answer, b"request body not received in time")
    assert library_state(library) == before
    normal_search(port)


def test_an_idle_kept_connection_keeps_uvicorns_keep_alive(server):
    """Between two requests the connection is idle, not in a head: it lasts as long as uvicorn's
    keep-alive (600 s here), past the head deadline, shown passed by another connection's 408."""
    port, _ = server
    with connect(port) as kept:
        kept.sendall(head(port, SEARCH) + SEARCH)
        assert one_response(kept).startswith(b"HTTP/1.1 200")
        with connect(port) as slow:  # opened after `kept` went idle: its deadline passes later
            slow.sendall(b"POST /mcp HTTP/1.1\r\n")
            assert_timed_out(until_closed(slow), b"Request head not received in time.")
        kept.sendall(head(port, SEARCH) + SEARCH)
        answer = one_response(kept)
        assert answer.startswith(b"HTTP/1.1 200") and b"Stripe webhook signature check" in answer


def test_a_normal_client_is_served_while_slow_connections_are_open(server):
    port, library = server
    before = library_state(library)
    slow = []
    try:
        for i in range(45):  # a third each: silent, a partial head, a whole head and part of its body
            sock = connect(port)
            sock.sendall([b"", b"POST /mcp HTTP/1.1\r\nX-Slow: ", head(port, SEARCH) + SEARCH[:10]][i % 3])
            slow.append(sock)
        for _ in range(3):
            normal_search(port)
        wait_for(lambda: all(is_closed(sock) for sock in slow), bound=BOUND, every=0.1)
    finally:
        for sock in slow:
            sock.close()
    normal_search(port)
    assert library_state(library) == before
