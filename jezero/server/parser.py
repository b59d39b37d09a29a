"""uvicorn's C HTTP parser (httptools), with the bound on a request's head that h11 has.

uvicorn parses HTTP with httptools when it is installed, else with h11, its pure-Python parser.
httptools costs 0.3-0.8 ms less CPU per search under 50 clients (benchmarks/load/README.md,
2026-12-01, branch serve), but uvicorn sets no limit on the request line and headers with it:
a client that sends one endless header grows the server's memory by every byte it sends
(200 MB for 200 MB, measured), where h11 refuses a head past `h11_max_incomplete_event_size`
(16 KB) with 400 and closes the connection. `BoundedHttpTools` refuses it the same way, with the
same answer and the same log line, so the parser changes nothing a client can see
(tests/test_server_http_parser.py compares the two parsers byte for byte).

`protocol()` is what `jezero serve` gives uvicorn: this class, or "h11" where httptools is not
installed.
"""

from __future__ import annotations

from typing import Any

from uvicorn.protocols.http.h11_impl import DEFAULT_MAX_INCOMPLETE_EVENT_SIZE

try:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
except ImportError:  # httptools not installed: uvicorn's h11 it is
    HttpToolsProtocol = None  # type: ignore[assignment,misc]


if HttpToolsProtocol is not None:

    class BoundedHttpTools(HttpToolsProtocol):  # type: ignore[misc,valid-type]
        """HttpToolsProtocol refusing a request head (request line and headers) longer than h11
        would take."""

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

        def on_headers_complete(self) -> None:
            self.in_head = False
            super().on_headers_complete()

        def on_message_complete(self) -> None:
            super().on_message_complete()
            self.in_head, self.head = True, 0  # the next request on this connection


def protocol() -> Any:
    """The HTTP protocol `jezero serve` runs: `BoundedHttpTools`, or "h11" without httptools."""
    return BoundedHttpTools if HttpToolsProtocol is not None else "h11"
