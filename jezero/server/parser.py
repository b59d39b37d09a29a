"""uvicorn's HTTP protocols as `jezero serve` runs them: the C parser (httptools) with the bound on
a request's head that h11 has, and either parser with a deadline on a request's head.

uvicorn parses HTTP with httptools when it is installed, else with h11, its pure-Python parser.
httptools costs 0.3-0.8 ms less CPU per search under 50 clients (benchmarks/load/README.md,
2026-12-01, branch serve), but uvicorn sets no limit on the request line and headers with it:
a client that sends one endless header grows the server's memory by every byte it sends
(200 MB for 200 MB, measured), where h11 refuses a head past `h11_max_incomplete_event_size`
(16 KB) with 400 and closes the connection. `BoundedHttpTools` refuses it the same way, with the
same answer and the same log line, so the parser changes nothing a client can see
(tests/test_server_http_parser.py compares the two parsers byte for byte).

Neither parser bounds the time a head takes: uvicorn's keep-alive timeout covers only the quiet
between two requests, so a connection that sends nothing, or part of a head and then nothing
(slowloris), was held for ever, and enough of them use up the server's file descriptors.
`HeadDeadline` gives each head `head_seconds` (`[server] head_timeout_seconds`), counted from the
connection's start for its first request and from the first byte of each later one: a partial
head then gets 408 and the connection is closed, a connection that never sent a byte is closed
without a word. The quiet between requests stays uvicorn's keep-alive timeout's (`http.KEEP_ALIVE_S`).

`protocol()` is what `jezero serve` gives uvicorn: `BoundedHttpTools`, or `BoundedH11` where
httptools is not installed, with the head deadline.
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import DEFAULT_MAX_INCOMPLETE_EVENT_SIZE, H11Protocol

try:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
except ImportError:  # httptools not installed: uvicorn's h11 it is
    HttpToolsProtocol = None  # type: ignore[assignment,misc]

_TIMEOUT_BODY = b"Request head not received in time."


class HeadDeadline:
    """A deadline on each request's head, for a uvicorn HTTP protocol class (mixed in before it).
    The class says when a head begins (`_head_begins`) and when it is complete (`_head_complete`);
    the deadline starts with the connection too, for a client that sends nothing at all."""

    def __init__(self, *args: Any, head_seconds: float, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.head_seconds = head_seconds
        self.head_timer: asyncio.TimerHandle | None = None
        self.head_begun = False  # some of the current request's head has arrived

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)  # type: ignore[misc]
        self._start_head_clock()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_head_clock()
        super().connection_lost(exc)  # type: ignore[misc]

    def _head_begins(self) -> None:
        self.head_begun = True
        self._start_head_clock()

    def _head_complete(self) -> None:
        self.head_begun = False
        self._stop_head_clock()

    def _start_head_clock(self) -> None:
        if self.head_timer is None:
            self.head_timer = self.loop.call_later(self.head_seconds, self._head_too_late)  # type: ignore[attr-defined]

    def _stop_head_clock(self) -> None:
        if self.head_timer is not None:
            self.head_timer.cancel()
            self.head_timer = None

    def _head_too_late(self) -> None:
        self.head_timer = None
        transport = self.transport  # type: ignore[attr-defined]
        if transport.is_closing():
            return
        cycle = self.cycle  # type: ignore[attr-defined]
        if cycle is not None and not cycle.response_complete:
            # A pipelined head behind a request still being answered: the answer goes out first,
            # whole, and the head is given another term (an answer cut by a 408 would be garbage).
            self._start_head_clock()
            return
        if self.head_begun:
            self.logger.warning("Request head not received in time.")  # type: ignore[attr-defined]
            transport.write(_timeout_response(self.server_state.default_headers))  # type: ignore[attr-defined]
        transport.close()


def _timeout_response(default_headers: list[tuple[bytes, bytes]]) -> bytes:
    """408 and the connection closed, written like uvicorn's own 400 for a bad head."""
    lines = [b"HTTP/1.1 408 Request Timeout"]
    lines += [name + b": " + value for name, value in default_headers]
    lines += [b"content-type: text/plain; charset=utf-8", b"content-length: %d" % len(_TIMEOUT_BODY),
              b"connection: close"]
    return b"\r\n".join(lines) + b"\r\n\r\n" + _TIMEOUT_BODY


class BoundedH11(HeadDeadline, H11Protocol):
    """uvicorn's H11Protocol with the head deadline. h11 reports a head only once it is whole:
    bytes waiting while the client's side is IDLE are a head begun, any other state one complete."""

    def handle_events(self) -> None:  # after new data, and after an answer (pipelined requests)
        super().handle_events()
        if self.conn.their_state is not h11.IDLE:
            self._head_complete()
        elif self.conn.trailing_data[0]:
            self._head_begins()


if HttpToolsProtocol is not None:

    class BoundedHttpTools(HeadDeadline, HttpToolsProtocol):  # type: ignore[misc,valid-type]
        """HttpToolsProtocol refusing a request head (request line and headers) longer than h11
        would take, with the head deadline."""

        def __init__(self, config: Any, *args: Any, **kwargs: Any) -> None:
            super().__init__(config, *args, **kwargs)
            limit = config.h11_max_incomplete_event_size
            self.max_head = limit if limit is not None else DEFAULT_MAX_INCOMPLETE_EVENT_SIZE
            self.head = 0  # bytes received since the current request began, while its head lasts
            self.in_head = True

        def data_received(self, data: bytes) -> None:
            if self.in_head:
                self.head += len(data)
            super().data_received(data)
            if self.in_head and self.head > self.max_head and not self.transport.is_closing():
                # What h11 does ("Receive buffer too long" is its RemoteProtocolError)
                msg = "Invalid HTTP request received."
                self.logger.warning(msg)
                self.send_400_response(msg)

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self._head_begins()

        def on_headers_complete(self) -> None:
            self.in_head = False
            self._head_complete()
            super().on_headers_complete()

        def on_message_complete(self) -> None:
            super().on_message_complete()
            self.in_head, self.head = True, 0  # the next request on this connection


def protocol(head_seconds: float) -> Any:
    """The HTTP protocol `jezero serve` gives uvicorn: `BoundedHttpTools` (or `BoundedH11` without
    httptools), each head given `head_seconds`."""
    cls = BoundedHttpTools if HttpToolsProtocol is not None else BoundedH11
    return functools.partial(cls, head_seconds=head_seconds)
