"""uvicorn's HTTP parser: `jezero serve` runs on httptools (the C parser, a dependency since
2026-12-01: 0.3-0.8 ms less CPU per search under 50 clients, benchmarks/load/README.md) with
h11's bound on a request's head (jezero.server.parser), and what goes on the wire is the same as
with h11, uvicorn's pure-Python parser it used before. Two real servers over one library, one
per parser, get the same raw requests (the plain calls and the hostile requests of
test_server_lean, handshake-era calls, an endless header) and must give back the same status,
headers (Date aside) and body."""

from __future__ import annotations

import socket

import pytest
import uvicorn

from jezero.server import http_server
from jezero.server.http import build_http_app
from jezero.server.parser import BoundedHttpTools, protocol
from test_server_http import KEYS, free_port, sample_library
from test_server_lean import NORMAL, call, exchange, hostile, post, running, unclocked


@pytest.fixture(scope="module")
def parsers(tmp_path_factory):
    """Two servers over one library: (h11 port, httptools port)."""
    run = sample_library(tmp_path_factory.mktemp("parsers"), "Stripe invoice webhook retries ünïcode")
    ports = [free_port(), free_port()]
    servers = [uvicorn.Server(uvicorn.Config(build_http_app(str(run.config), host="127.0.0.1"), host="127.0.0.1",
                                             port=port, log_level="warning", access_log=False, lifespan="on",
                                             http=parser, timeout_graceful_shutdown=3))
               for port, parser in zip(ports, ("h11", protocol(head_seconds=10.0)))]
    with running(servers):
        yield run, ports


def test_jezero_serve_runs_on_httptools(parsers):
    run, _ = parsers
    server = http_server(str(run.config), "127.0.0.1", free_port(), log_level="warning")
    server.config.load()
    assert server.config.http_protocol_class.func is BoundedHttpTools


def endless_header(port: int, megabytes: int = 64) -> tuple[int, bytes]:
    """Send a request whose one header never ends; how many MB went out before the server shut
    the connection, and what it answered."""
    sent, answer = 0, b""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        try:
            s.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Endless: ")
            for _ in range(megabytes):
                s.sendall(b"a" * (1 << 20))
                sent += 1
        except OSError:
            pass
        try:
            while chunk := s.recv(65536):
                answer += chunk
        except OSError:
            pass
    return sent, answer


def test_an_endless_header_is_refused_by_both_parsers(parsers):
    """h11 refuses a request head past 16 KB; uvicorn's httptools reads it for ever (the memory
    grows by every byte): BoundedHttpTools refuses it as h11 does, with the same status, body and
    content type, closing the connection (uvicorn's two 400 writers differ in their other headers:
    h11's sends no Content-Length or Server)."""
    _, ports = parsers
    answers = []
    for port in ports:
        sent, answer = endless_header(port)
        assert sent < 64, "the server kept reading an endless header"
        head, _, body = answer.partition(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        assert lines[0] == b"HTTP/1.1 400 Bad Request" and body == b"Invalid HTTP request received."
        headers = dict(line.lower().split(b": ", 1) for line in lines[1:])
        assert headers[b"connection"] == b"close"
        answers.append((lines[0], headers[b"content-type"], body))
    assert answers[0] == answers[1]


@pytest.mark.parametrize("key", ["laptop", "ci"])
def test_plain_calls_get_the_same_bytes_from_both_parsers(parsers, key):
    _, (h11_port, fast_port) = parsers
    for i, (name, arguments) in enumerate(NORMAL):
        for id_ in (i + 1, f"req-{i}"):
            got = exchange(fast_port, post(fast_port, call(name, arguments, id=id_), key=KEYS[key]))
            want = exchange(h11_port, post(h11_port, call(name, arguments, id=id_), key=KEYS[key]))
            if arguments and arguments.get("explain"):
                got, want = unclocked(got), unclocked(want)
            assert got == want, (name, arguments, got[0], want[0], got[2][:300], want[2][:300])


def test_hostile_requests_get_the_same_bytes_from_both_parsers(parsers):
    _, (h11_port, fast_port) = parsers
    for (what, raw_fast), (_, raw_h11) in zip(hostile(fast_port), hostile(h11_port)):
        got, want = exchange(fast_port, raw_fast), exchange(h11_port, raw_h11)
        assert got == want, (what, got, want)


def test_the_handshake_era_protocol_gets_the_same_bytes_from_both_parsers(parsers):
    """Older clients (2025-11-25) take the SDK's whole path; its writer is another one."""
    _, (h11_port, fast_port) = parsers
    for name, arguments in NORMAL[:6]:
        got = exchange(fast_port, post(fast_port, call(name, arguments, meta=None), version="2025-11-25"))
        want = exchange(h11_port, post(h11_port, call(name, arguments, meta=None), version="2025-11-25"))
        if arguments.get("explain"):
            got, want = unclocked(got), unclocked(want)
        assert b"200 OK" in want[0] and b'"result"' in want[2]
        assert got == want, (name, arguments, got, want)
