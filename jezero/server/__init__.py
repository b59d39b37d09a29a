"""The read-only server: MCP tools over the query layer, on stdio or streamable HTTP, with client
keys and the overview endpoint.

- clients.py   the configured clients, re-read within a second of the config changing
- auth.py      client keys: made once, stored as SHA-256 digests, verified per request
- library.py   read-only connections for the worker threads
- shape.py     compact answers with a hard size cap
- mcp_app.py   the six tools and the instructions (build_mcp_server)
- inbox.py     PUT /inbox/v1/<agent>/<path>: devices upload their session files
- http.py      the ASGI app: /mcp, /api/v1/overview, /health, /inbox/v1 (build_http_app, serve_http)
- lean.py      plain tool calls at the modern protocol answered with less of the SDK's per-request work

The names below are imported on first use, so `import jezero.server` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "build_mcp_server": "jezero.server.mcp_app",
    "serve_stdio": "jezero.server.mcp_app",
    "INSTRUCTIONS": "jezero.server.mcp_app",
    "build_http_app": "jezero.server.http",
    "http_server": "jezero.server.http",
    "serve_http": "jezero.server.http",
    "ClientRegistry": "jezero.server.clients",
    "Library": "jezero.server.library",
    "new_key": "jezero.server.auth",
    "key_digest": "jezero.server.auth",
    "client_toml": "jezero.server.auth",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'jezero.server' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
