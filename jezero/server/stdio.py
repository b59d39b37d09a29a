"""MCP over stdin/stdout for one local agent: the SDK's transport, with two gaps closed around it.

- A line that is not a JSON-RPC message gets JSON-RPC's own error reply (-32700 for text that is
  not JSON, -32600 for JSON that is not a request, notification or response), with the line's id
  where one can be read, and a warning on stderr. The SDK drops such a line without a word, so a
  client waits for an answer that never comes.
- A request whose id is neither a string nor a whole number (`1.5`, `{}`, `[1]`) is read by the
  SDK as a notification, which is never answered: it gets -32600 with a null id, and a warning.
- At the end of input, the requests already read are answered before the server stops (bounded
  by DRAIN_SECONDS). The SDK cancels them, so a client that writes its requests and closes stdin
  (a script, a pipe) loses the answers.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import anyio
import mcp_types as types
from mcp.server.stdio import stdio_server
from mcp.shared._context_streams import create_context_streams
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from jezero.server.mcp_app import REFUSED_ID, request_without_id

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

log = logging.getLogger(__name__)

# How long requests still being answered may hold the server open after the client closed stdin.
DRAIN_SECONDS = 30.0


def serve(server: MCPServer) -> None:
    anyio.run(_serve, server)


async def _serve(server: MCPServer) -> None:
    lowlevel = server._lowlevel_server
    async with stdio_server() as (wire_in, wire_out):
        to_server, server_in = create_context_streams[SessionMessage | Exception](0)
        server_out, from_server = create_context_streams[SessionMessage](0)
        pending: set[str | int] = set()
        answered = anyio.Event()

        async def inbound() -> None:
            nonlocal answered
            async with to_server:
                async for item in wire_in:
                    if isinstance(item, Exception):
                        await wire_out.send(SessionMessage(_refusal(item)))
                        continue
                    if request_without_id(item.message):
                        await wire_out.send(SessionMessage(_refused_id()))
                        continue
                    if isinstance(item.message, types.JSONRPCRequest):
                        pending.add(item.message.id)
                    await to_server.send(item)
                with anyio.move_on_after(DRAIN_SECONDS):
                    while pending:
                        await answered.wait()
                        answered = anyio.Event()

        async def outbound() -> None:
            async for item in from_server:
                if isinstance(item.message, (types.JSONRPCResponse, types.JSONRPCError)):
                    pending.discard(item.message.id)
                    answered.set()
                await wire_out.send(item)

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(inbound)
            tasks.start_soon(outbound)
            async with server_out:
                await lowlevel.run(server_in, server_out, lowlevel.create_initialization_options())
        await wire_out.aclose()


def _refused_id() -> types.JSONRPCError:
    log.warning("refused a line on stdin: %s", REFUSED_ID)
    return types.JSONRPCError(jsonrpc="2.0", id=None, error=types.ErrorData(code=types.INVALID_REQUEST, message=REFUSED_ID))


def _refusal(error: Exception) -> types.JSONRPCError:
    """JSON-RPC's answer to a line that is not a message, with the line's id if it has one."""
    details = error.errors() if isinstance(error, ValidationError) else []
    if any(d["type"] == "json_invalid" for d in details):
        code, message = types.PARSE_ERROR, "Parse error: the line is not JSON"
    else:
        code, message = types.INVALID_REQUEST, "Invalid request: not a JSON-RPC request, notification or response"
    ids = [d["input"].get("id") for d in details if isinstance(d.get("input"), dict)]
    line_id = next((i for i in ids if isinstance(i, (str, int)) and not isinstance(i, bool)), None)
    log.warning("refused a line on stdin: %s", message)
    return types.JSONRPCError(jsonrpc="2.0", id=line_id, error=types.ErrorData(code=code, message=message))
