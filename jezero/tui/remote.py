"""Everything the app reads, in one class: the MCP tools over streamable HTTP with a client key,
and GET /api/v1/overview with the same key.

Each call opens its own MCP session: the server is stateless (each request stands alone), and a
session held across the app's workers would tie the connection to one asyncio task.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

# A person waits for these; a search that takes longer than this is an answer in itself.
TIMEOUT_SECONDS = 20


class RemoteError(Exception):
    """A call the server refused or could not answer, with a one-line reason."""


@dataclass
class AgentRow:
    """One agent that brings items in, as the Agents screen shows it."""

    device: str  # the computer it runs on ("server" for the server's own connectors)
    agent: str  # the connector type: claude, codex, ...
    source: str
    items: int
    last_item_at: str | None
    last_run_at: str | None
    last_success_at: str | None
    status: str  # ok, warning, failing, stale, disabled, or "" when unknown
    core_version: str | None = None  # the client core a device sent with its last upload
    outdated_plugins: tuple[str, ...] = ()  # "<agent>/<version>" of the device's plugins with an older core
    plugin: str | None = None  # "<agent>/<version>" of the plugin that sent the last upload
    last_upload_at: str | None = None
    outdated: bool = False  # the core of its last upload is older than the server's (or was not sent)
    uploaded: bool = True  # False: an approved device that has not uploaded yet


@dataclass
class Agents:
    rows: list[AgentRow]
    client_core_version: str | None  # the core the server ships: a device's older core is outdated


class Remote:
    def __init__(self, url: str, key: str):
        """url: the server's MCP endpoint (http://host:port/mcp); key: a client key."""
        self.url = url.rstrip("/")
        self.base = self.url.removesuffix("/mcp")
        self.key = key

    def _http(self) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(headers={"Authorization": f"Bearer {self.key}"}, timeout=TIMEOUT_SECONDS)

    async def call(self, tool: str, **args: Any) -> dict[str, Any]:
        args = {k: v for k, v in args.items() if v is not None}
        try:
            async with self._http() as h, Client(streamable_http_client(self.url, http_client=h)) as client:
                result = await client.call_tool(tool, args)
        except RemoteError:
            raise
        except Exception as e:  # connection refused, 401, a broken proxy: one line for the status bar
            raise RemoteError(_reason(e, self.url)) from None
        if result.is_error:
            text = " ".join(getattr(c, "text", "") for c in result.content)
            raise RemoteError(text or f"{tool} failed")
        return dict(result.structured_content or {})

    async def search(self, query: str, *, project: str | None = None, source: str | None = None,
                     limit: int | None = None, explain: bool = False) -> dict[str, Any]:
        return await self.call("search", query=query, project=project, source=source, limit=limit,
                               explain=explain or None)

    async def later(self, item_id: int, query: str | None = None) -> dict[str, Any]:
        return await self.call("later", item_id=item_id, query=query)

    async def timeline(self, *, project: str | None = None, source: str | None = None,
                       limit: int | None = None) -> dict[str, Any]:
        return await self.call("timeline", project=project, source=source, limit=limit)

    async def get_item(self, item_id: int, include_original: bool = False) -> dict[str, Any]:
        return await self.call("get_item", item_id=item_id, include_original=include_original or None)

    async def catalog(self) -> dict[str, Any]:
        return await self.call("catalog")

    async def overview(self, days: int = 30) -> dict[str, Any]:
        try:
            async with self._http() as h:
                resp = await h.get(self.base + "/api/v1/overview", params={"days": days})
        except Exception as e:
            raise RemoteError(_reason(e, self.base)) from None
        if resp.status_code == 401:
            raise RemoteError("the server refused this client key (401)")
        if resp.status_code != 200:
            try:
                detail = resp.json().get("error", "")
            except ValueError:
                detail = resp.text[:200]
            raise RemoteError(f"overview: HTTP {resp.status_code} {detail}".strip())
        return resp.json()

    async def agents(self) -> Agents:
        """Who brings items in, from the overview, and the client core version the server ships.
        First each device and agent that uploads through the inbox (last upload, the core and
        plugin versions it sent, its inbox source's items and connector health), then the
        server's own connectors, then sources whose connector is no longer configured."""
        data = await self.overview()
        sources = {s["name"]: s for s in data.get("sources", [])}
        connectors = {c["name"]: c for c in data.get("connectors", [])}
        rows = []
        for d in data.get("devices", []):
            rows += _device_rows(d, sources, connectors)
        for name, c in connectors.items():
            if any(r.source == name for r in rows):
                continue
            s = sources.get(name, {})
            rows.append(AgentRow("server", c["type"], name, s.get("items", 0), s.get("last_at"),
                                 c.get("last_run_at"), c.get("last_success_at"), c.get("status", "")))
        known = {r.source for r in rows}
        for name, s in sources.items():  # items from a source no longer configured
            if name not in known:
                rows.append(AgentRow("?", "?", name, s.get("items", 0), s.get("last_at"), None, None, ""))
        return Agents(rows, data.get("client_core_version"))


def _device_rows(device: dict[str, Any], sources: dict[str, Any], connectors: dict[str, Any]) -> list[AgentRow]:
    """One row per agent a device uploads for. An outdated plugin is shown on the row of the agent
    it serves (plugin "codex/0.1.0" on the codex row), else on the device's first row."""
    agents = device.get("agents", [])
    if not agents:
        return [AgentRow(device["device"], "-", "-", 0, None, None, None, "", uploaded=False)]
    names = {a["agent"] for a in agents}
    late = [p for p in device.get("plugins", []) if p.get("outdated")]
    rows = []
    for i, a in enumerate(agents):
        s, c = sources.get(a["source"], {}), connectors.get(a["source"], {})
        mine = tuple(p["plugin"] for p in late if p["plugin"].partition("/")[0] == a["agent"]
                     or (i == 0 and p["plugin"].partition("/")[0] not in names))
        rows.append(AgentRow(device["device"], a["agent"], a["source"], s.get("items", 0), s.get("last_at"),
                             c.get("last_run_at"), c.get("last_success_at"), c.get("status", ""),
                             core_version=a.get("core_version"), outdated_plugins=mine, plugin=a.get("plugin"),
                             last_upload_at=a.get("last_upload_at"), outdated=bool(a.get("outdated"))))
    return rows


def _reason(e: BaseException, url: str) -> str:
    # anyio wraps failures in exception groups; the first leaf says what happened.
    while isinstance(e, BaseExceptionGroup) and e.exceptions:
        e = e.exceptions[0]
    text = str(e) or type(e).__name__
    if "401" in text:
        return "the server refused this client key (401)"
    if "connect" in text.lower() or isinstance(e, OSError):
        return f"cannot reach {url}: is `jezero serve` (or `jezero up`) running?"
    return f"{type(e).__name__}: {text}"[:300]
