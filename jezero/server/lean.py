"""A shorter way through the server for the one request agents send most: a `tools/call` POST,
answered as one JSON body, at the modern protocol (2026-07-28) and at the handshake era's
(2025-11-25 and before, with the `initialize` that opens such a client's session).

The SDK's way to that answer passes through eleven ASGI layers (Starlette's error and exception
middleware, authentication, the auth context, the router, the route's auth check, the body limit,
the session manager), then builds per request a Starlette Request, a Connection, a dispatch
context, a ServerRunner, a ServerSession and a Context, walks the tool's input schema for
`x-mcp-header` annotations, runs two middlewares of its own (tracing and the multi-round-trip
state) and unwinds an exit stack under a cancel scope. For Jezero's tools that is about a
millisecond of the event loop's CPU per call, as much as a small query
(benchmarks/load/README.md, 2026-12-01, branch proto).

`LeanToolCalls.answer` takes a request only when it can tell, with the SDK's own checks and
types, that the SDK would dispatch it to the tool: the right route and headers, a valid key, a
body that is one well-formed JSON-RPC request for `tools/call` of a known tool, passing the SDK's
envelope ladder (`classify_inbound_request`) and its validation of the method's params at that
protocol version. It then runs the tool as the SDK does (`Tool.run`: the SDK validates the
arguments and runs the function on a worker thread), turns a failure into the same `isError`
result, shapes the result with the SDK's own serializer (`ServerRunner._serialize`: the
per-version sieve and the server-info stamp) and writes it with the SDK's own writer. Anything
else (another method, a handshake-era version, a bad key, a wrong header, JSON that does not
parse, params the SDK would refuse) goes to the SDK untouched, which gives its own answer and
its own log line. So the bytes on the wire are the SDK's either way; tests/test_server_lean.py
sends the same normal and hostile requests both ways and compares the responses byte for byte.

The handshake era (an `MCP-Protocol-Version` of 2025-11-25 or older, or none) takes the SDK's
stateless legacy path: per request a transport, a memory-stream pair with a router task, a
JSON-RPC dispatcher with its task group, a ServerRunner and a session; ~1.15 ms more CPU a call
than the modern shortcut (benchmarks/load/README.md, 2026-12-01, fifth session). `answer` takes
such a request when it is one `initialize` or one plain `tools/call` of a known tool that this
path would dispatch: the transport's checks (Content-Type as the security middleware and as the
transport each test it, Accept, Host/Origin), the body parsed and validated as the transport does
(`pydantic_core.from_json`, the JSON-RPC message union), the runner's validation of the params at
the version the header names (the spec's default, 2025-03-26, without one); no session is kept
(stateless), so an `Mcp-Session-Id` is ignored as the SDK ignores it. The answer is the runner's
(`_handle_initialize` or the tool, then `_serialize` at that version: the per-version sieve, no
server-info stamp), an exception mapped as the dispatcher maps it, written as the transport writes
it (`model_dump_json(by_alias=True, exclude_unset=True)`, status 200 even for a JSON-RPC error).
Notifications (`notifications/initialized`), `tools/list` and everything else take the SDK's way.

The shortcut is only built when the server is the plain one it was written against: stateless,
JSON responses, the SDK's two default middlewares and no cache hint for tools/call, the tools/call
handler MCPServer's own, every tool a plain function without context, resolvers or
`x-mcp-header` annotations. Otherwise every request takes the SDK's way.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from http import HTTPStatus
from typing import Any, NamedTuple

import pydantic_core
from mcp.server._otel import OpenTelemetryMiddleware
from mcp.server._streamable_http_modern import _write
from mcp.server.auth.middleware.auth_context import auth_context_var
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser, BearerAuthBackend
from mcp.server.connection import Connection
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.request_state import RequestStateBoundary
from mcp.server.runner import ServerRunner, modern_error_data
from mcp.server.streamable_http import CONTENT_TYPE_JSON, check_accept_headers
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import (
    InboundModernRoute,
    classify_inbound_request,
    find_duplicated_routing_header,
    find_invalid_x_mcp_header,
    x_mcp_header_map,
)
from mcp.shared.jsonrpc_dispatcher import handler_exception_to_error_data
from mcp_types import (
    DEFAULT_NEGOTIATED_VERSION,
    CallToolResult,
    ErrorData,
    JSONRPCError,
    JSONRPCRequest,
    JSONRPCResponse,
    TextContent,
    jsonrpc_message_adapter,
)
from mcp_types import methods as _methods
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_MODERN_VERSION, MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

log = logging.getLogger("jezero.server")
# MCPServer's own logger: a failing tool is logged under the same name and words either way.
sdk_log = logging.getLogger("mcp.server.mcpserver.server")
# The dispatcher's, for a handler exception it maps to code 0 on the handshake-era path.
dispatcher_log = logging.getLogger("mcp.shared.jsonrpc_dispatcher")

PATH = "/mcp"
METHOD = "tools/call"
# The params of a plain tool call; a call carrying anything else (the multi-round-trip
# `requestState` or `inputResponses`, a task) takes the SDK's way.
PLAIN_PARAMS = frozenset({"name", "arguments", "_meta"})
INITIALIZE = "initialize"


class LeanToolCalls:
    """Answers plain modern `tools/call` POSTs for `server`; `answer` says whether it did."""

    def __init__(self, server: MCPServer, backend: BearerAuthBackend, security: TransportSecuritySettings | None,
                 *, max_body: int):
        self.server = server
        self.backend = backend
        self.security = security
        self.max_body = max_body
        self.answered = 0  # calls answered here (tests check the shortcut is taken)
        self.answered_handshake = 0  # of which at a handshake-era version
        self.tools = {tool.name: tool for tool in server._tool_manager.list_tools()}
        self.params_type = server._lowlevel_server.get_request_handler(METHOD).params_type
        # Only _serialize is used: it reads the server (cache hints, the server-info stamp), not
        # the connection.
        self.runner = ServerRunner(server._lowlevel_server, Connection.from_envelope(LATEST_MODERN_VERSION, None, None),
                                   None)

    @classmethod
    def for_server(cls, server: MCPServer, backend: BearerAuthBackend | None,
                   security: TransportSecuritySettings | None, *, stateless: bool, json_response: bool,
                   max_body: int) -> "LeanToolCalls | None":
        """The shortcut for this server, or None when the server is not the plain one it knows
        (see the module docstring): then the SDK answers everything."""
        low = server._lowlevel_server
        entry = low.get_request_handler(METHOD)
        tools = server._tool_manager.list_tools()
        plain = (
            stateless and json_response and backend is not None
            and server.settings.auth is not None and not server.settings.auth.required_scopes
            and [type(m) for m in low.middleware] == [OpenTelemetryMiddleware, RequestStateBoundary]
            and not low.cache_hints.get(METHOD)
            and entry is not None and entry.handler == server._handle_call_tool
            and all(not t.is_async and t.context_kwarg is None and not t.resolved_params
                    and find_invalid_x_mcp_header(t.parameters) is None and not x_mcp_header_map(t.parameters)
                    for t in tools)
        )
        if not plain:
            log.info("tools/call takes the SDK's full path (the server is not the plain one the shortcut knows)")
            return None
        return cls(server, backend, security, max_body=max_body)

    async def answer(self, scope: Scope, body: bytes, receive: Receive, send: Send) -> bool:
        """Answer the POST /mcp whose whole body is `body`, if it is a plain tool call (or, in the
        handshake era, an `initialize`); False (nothing sent, nothing changed) to leave it to the
        SDK."""
        try:
            call = await self._plain_call(scope, body)
        except Exception:  # noqa: BLE001 - a check that breaks must never break the request
            log.debug("tools/call shortcut: the checks raised, the SDK answers", exc_info=True)
            return False
        if call is None:
            return False
        token = auth_context_var.set(call.user)  # what get_access_token() reads, as AuthContextMiddleware sets it
        try:
            if call.modern:
                message = await self._run_modern(call)
            else:
                message = await self._run_handshake(call)
        finally:
            auth_context_var.reset(token)
        self.answered += 1  # before the answer goes out: a client that has it sees the count
        if call.modern:
            await _write(message, scope, receive, send)
        else:
            self.answered_handshake += 1
            # StreamableHTTPServerTransport._create_json_response, without a session id (stateless)
            await Response(message.model_dump_json(by_alias=True, exclude_unset=True), status_code=HTTPStatus.OK,
                           headers={"Content-Type": CONTENT_TYPE_JSON})(scope, receive, send)
        return True

    async def _plain_call(self, scope: Scope, body: bytes) -> "_Call | None":
        if scope["path"] != PATH:
            return None  # e.g. /mcp/, which Starlette's router answers with a redirect
        # The headers the SDK reads, each as it reads them: ASGI gives them lowercased. The session
        # manager routes by the first protocol-version header: no header or a handshake-era version
        # takes the stateless legacy path, any other value the modern entry.
        version_header = None
        for key, value in scope["headers"]:
            if key == b"mcp-protocol-version":
                version_header = value.decode("latin-1")
                break
        modern = version_header in MODERN_PROTOCOL_VERSIONS
        if not modern and version_header is not None and version_header not in HANDSHAKE_PROTOCOL_VERSIONS:
            return None  # an unknown version: the modern entry refuses it
        request = Request(scope)
        headers = request.headers
        # Content-Type and Host/Origin as TransportSecurityMiddleware checks them (it logs a refusal,
        # so it is left to do that on the SDK's way).
        content_type = headers.get("content-type")
        if content_type is None or not content_type.lower().startswith("application/json"):
            return None
        if not modern and not _json_content_type(content_type):
            return None  # the legacy transport's own, stricter check (415)
        if self.security is not None and self.security.enable_dns_rebinding_protection:
            if not _allowed(headers.get("host"), self.security.allowed_hosts):
                return None
            origin = headers.get("origin")
            if origin and not _allowed(origin, self.security.allowed_origins):
                return None
        # RequestBodyLimitMiddleware's check of the declared size (the body itself is within the
        # limit: _WholeBody read it).
        declared = headers.get("content-length")
        if declared is not None:
            try:
                if int(declared) > self.max_body:
                    return None
            except ValueError:
                pass
        if not check_accept_headers(request)[0]:
            return None  # JSON responses: only the JSON media type is needed
        # The key, through the SDK's own backend (the 401 is the SDK's to send).
        authenticated = await self.backend.authenticate(request)
        if authenticated is None:
            return None
        _credentials, user = authenticated
        if not isinstance(user, AuthenticatedUser):
            return None
        if modern:
            return self._modern_call(request, body, user)
        return self._handshake_call(body, user, version_header or DEFAULT_NEGOTIATED_VERSION)

    def _modern_call(self, request: Request, body: bytes, user: AuthenticatedUser) -> "_Call | None":
        try:
            decoded = json.loads(body)
        except (ValueError, RecursionError):
            return None
        if not isinstance(decoded, dict) or "id" not in decoded:
            return None
        try:
            req = JSONRPCRequest.model_validate(decoded)
        except ValidationError:
            return None
        params = req.params
        if req.method != METHOD or not isinstance(params, Mapping) or not PLAIN_PARAMS.issuperset(params):
            return None
        if find_duplicated_routing_header(request.headers.items()) is not None:
            return None
        verdict = classify_inbound_request(decoded, headers=dict(request.headers))
        if not isinstance(verdict, InboundModernRoute):
            return None
        try:
            _methods.validate_client_request(METHOD, verdict.protocol_version, params)
        except (KeyError, ValueError, ValidationError):
            return None
        return self._tool_call(True, req.id, verdict.protocol_version, user, params)

    def _handshake_call(self, body: bytes, user: AuthenticatedUser, version: str) -> "_Call | None":
        """A handshake-era request as the stateless legacy path reads it: the body as the transport
        parses and validates it, then the runner's checks of the method's params at `version`."""
        try:
            raw = pydantic_core.from_json(body)
        except ValueError:
            return None  # the transport's parse error
        try:
            message = jsonrpc_message_adapter.validate_python(raw, by_name=False)
        except ValidationError:
            return None
        if not isinstance(message, JSONRPCRequest):
            return None  # a notification or a response: 202, and the dispatcher's
        params = message.params
        if message.method == INITIALIZE:
            try:
                _methods.validate_client_request(INITIALIZE, version, params)
                ServerRunner._negotiate_initialize(params)
            except (KeyError, ValueError, ValidationError):
                return None
            return _Call(False, message.id, version, user, INITIALIZE, None, None, params)
        if message.method != METHOD or not isinstance(params, Mapping) or not PLAIN_PARAMS.issuperset(params):
            return None
        try:
            _methods.validate_client_request(METHOD, version, params)
        except (KeyError, ValueError, ValidationError):
            return None
        return self._tool_call(False, message.id, version, user, params)

    def _tool_call(self, modern: bool, request_id, version: str, user: AuthenticatedUser,
                   params: Mapping[str, Any]) -> "_Call | None":
        # The typed params, as the SDK's dispatch makes them for the handler.
        try:
            typed = self.params_type.model_validate(params, by_name=False)
        except ValidationError:
            return None
        if typed.name not in self.tools:
            return None  # "Unknown tool" is the SDK's to say
        return _Call(modern, request_id, version, user, METHOD, typed.name, typed.arguments or {}, params)

    async def _run_modern(self, call: "_Call") -> JSONRPCResponse | JSONRPCError:
        """The JSON-RPC reply the SDK's modern dispatch gives for this call (MCPServer._handle_call_tool,
        then ServerRunner._serialize, then the modern entry's _to_jsonrpc_response)."""
        try:
            wire = await self._tool_result(call)
        except Exception as exc:
            return JSONRPCError(jsonrpc="2.0", id=call.request_id, error=modern_error_data(exc))
        return JSONRPCResponse(jsonrpc="2.0", id=call.request_id, result=wire)

    async def _run_handshake(self, call: "_Call") -> JSONRPCResponse | JSONRPCError:
        """The reply the stateless legacy path gives: the runner's `initialize` result or tool
        result, and a handler's exception mapped as JSONRPCDispatcher._handle_request maps it."""
        try:
            if call.method == INITIALIZE:
                wire = self.runner._serialize(INITIALIZE, call.version, self.runner._handle_initialize(call.params))
            else:
                wire = await self._tool_result(call)
        except Exception as exc:
            error = handler_exception_to_error_data(exc)
            if error is None:
                dispatcher_log.exception("handler for %r raised", call.method)
                error = ErrorData(code=0, message=str(exc))
            return JSONRPCError(jsonrpc="2.0", id=call.request_id, error=error)
        return JSONRPCResponse(jsonrpc="2.0", id=call.request_id, result=wire)

    async def _tool_result(self, call: "_Call") -> dict[str, Any]:
        """MCPServer._handle_call_tool, then ServerRunner._serialize at the call's version."""
        name = call.name
        try:
            result = await self.tools[name].run(call.arguments, None, convert_result=True)
        except MCPError:
            raise
        except Exception as exc:
            if isinstance(exc, ToolError) and not isinstance(exc, UnexpectedToolError):
                if isinstance(exc.__cause__, ValidationError):
                    fields = sorted({".".join(str(part) for part in err["loc"]) for err in exc.__cause__.errors()})
                    sdk_log.info("Tool %r rejected arguments: %r", name, fields)
                else:
                    sdk_log.info("Tool %r failed: %r", name, str(exc))
            else:
                sdk_log.exception("Tool %r raised an unexpected exception", name)
            result = CallToolResult(content=[TextContent(type="text", text=str(exc))], is_error=True)
        return self.runner._serialize(METHOD, call.version, result)


class _Call(NamedTuple):
    """A request the shortcut answers: which era, and what the SDK's dispatch would pass on."""

    modern: bool
    request_id: Any
    version: str
    user: AuthenticatedUser
    method: str
    name: str | None
    arguments: dict[str, Any] | None
    params: Mapping[str, Any] | None


def _json_content_type(content_type: str) -> bool:
    """StreamableHTTPServerTransport._check_content_type: one of the comma-separated types before
    the first `;` is exactly application/json."""
    return any(part.strip() == CONTENT_TYPE_JSON for part in content_type.split(";")[0].split(","))


def _allowed(value: str | None, allowed: list[str]) -> bool:
    """TransportSecurityMiddleware's Host/Origin match, without its log line."""
    if not value:
        return False
    if value in allowed:
        return True
    return any(pattern.endswith(":*") and value.startswith(pattern[:-2] + ":") for pattern in allowed)
