"""PUT /inbox/v1/<agent>/<path>: a device uploads one of its agents' session files.

Only keys whose client entry has `upload = true` may upload, and only into their own folder,
`<inbox>/<client name>/<agent>/<path>`: the device is the key's client, never a part of the URL,
so no path can name another device. The path must be a session file of the agent's store
(jezero.inbox.layouts); it is checked on the raw bytes of the URL too, so an encoded '/', '\\',
'.' or NUL cannot sneak past the decoding. Every refusal is a 4xx with a one-line reason in
`{"error": ...}`; nothing is written for it.

An optional `X-Jezero-Project` header carries the project the device resolved for the session
(the client core runs the same project rules as the server); it is kept beside the file and
beats the summarizer's guess when the session is ingested.

`X-Jezero-Client` (the client core's version) and `X-Jezero-Plugin` (`<agent>/<version>` of the
plugin that sent it) are recorded with every accepted upload, per device and agent, in the inbox's
own record (jezero.inbox.uploads), for the app's Agents screen and `jezero device list`. They
never refuse an upload: a malformed one is logged and left out.

An upload has no deadline as a whole (a big file on a slow link may take long), but it may not
stop: when no byte arrives for `[inbox] upload_idle_seconds`, the device gets 408, the connection
is closed and the partial file is removed, so a stalled device holds neither a connection nor a
half-written file. The file stored before, if any, is left as it was.
"""

from __future__ import annotations

import errno
import logging

import anyio
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response

from jezero.inbox.folder import DeviceFolder, Stored, check_project, remove_abandoned_partials
from jezero.inbox.layouts import Refused, check_path
from jezero.inbox.uploads import Received, clean_plugin, clean_version, record
from jezero.server.clients import ClientRegistry

log = logging.getLogger("jezero.server")

PREFIX = "/inbox/v1/"
PROJECT_HEADER = "x-jezero-project"
CLIENT_HEADER = "x-jezero-client"
PLUGIN_HEADER = "x-jezero-plugin"
# What a device may send: the files are JSON lines, JSON or zstd; anything else is a mistake.
CONTENT_TYPES = {"application/octet-stream", "application/x-ndjson", "application/jsonl", "application/json",
                 "application/zstd", "application/vnd.sqlite3", "application/yaml"}
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_ENCODED = {"%2f": "encoded '/' in path", "%5c": "encoded '\\' in path", "%00": "NUL in path",
            "%2e": "encoded '.' in path"}


def _refusal(status: int, reason: str) -> Response:
    return JSONResponse({"error": reason}, status_code=status)


def _raw_path(request: Request) -> str:
    """The URL path as sent, before any decoding; refuses what decoding could disguise."""
    raw = request.scope.get("raw_path") or request.scope["path"].encode("utf-8")
    raw = raw.split(b"?", 1)[0]
    if b"\x00" in raw:
        raise Refused(400, "NUL in path")
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        raise Refused(400, "non-ASCII bytes in path: store names are plain ASCII") from None
    lowered = text.lower()
    for code, reason in _ENCODED.items():
        if code in lowered:
            raise Refused(400, reason)
    if "%" in text:
        raise Refused(400, "percent-encoded characters in path: store names need none")
    if not text.startswith(PREFIX):
        raise Refused(404, f"uploads go to {PREFIX}<agent>/<path>")
    return text[len(PREFIX):]


_SQLITE_MAGIC = b"SQLite format 3\x00"
_BOM = b"\xef\xbb\xbf"


def _check_body_start(name: str, head: bytes) -> None:
    """A cheap look at the first bytes, so a file of the wrong kind is refused before it lands."""
    if name.endswith(".zst") and not head.startswith(_ZSTD_MAGIC):
        raise Refused(400, "body is not zstd data but the name ends in .zst")
    # A byte order mark first is a JSON file all the same: every connector reads one (json_text);
    # refused here, a device marked the transcript refused for good and never sent it again.
    if name.endswith((".jsonl", ".json")) and head.removeprefix(_BOM).lstrip()[:1] not in (b"{", b"["):
        raise Refused(400, "body is not JSON lines but the name ends in .jsonl/.json")
    if name.endswith(".db") and not head.startswith(_SQLITE_MAGIC):
        raise Refused(400, "body is not an SQLite database but the name ends in .db")


class _Stalled(Exception):
    """No byte of an upload's body arrived within `[inbox] upload_idle_seconds`."""


async def _chunks(request: Request, idle_seconds: float):
    """The body's chunks as they arrive, each wait for the next bounded by `idle_seconds`: a device
    may send as slowly as it likes, but not stop. Raises _Stalled when a wait runs out."""
    stream = request.stream()
    while True:
        with anyio.move_on_after(idle_seconds) as waiting:
            chunk = await anext(stream, None)
        if waiting.cancelled_caught:
            raise _Stalled
        if chunk is None:
            return
        yield chunk


def add_inbox_route(server, registry: ClientRegistry) -> None:
    """Mount the upload route on the MCP server's HTTP app (same port, same keys), after removing
    what uploads cut by a killed server left in the inbox."""
    config = registry.config()
    files, size = remove_abandoned_partials(config.inbox_path(), config.inbox.upload_idle_seconds)
    if files:
        log.warning("inbox: removed %d partial upload file(s) (%d bytes) that a server stopped mid-upload left "
                    "in %s", files, size, config.inbox_path())

    @server.custom_route(PREFIX + "{path:path}", methods=["PUT"])
    async def upload(request: Request) -> Response:
        try:
            return await _upload(request, registry)
        except Refused as e:
            if e.status >= 500:
                log.warning("inbox: %s", e.reason)
            return _refusal(e.status, e.reason)


def _not_stored(e: OSError) -> Refused:
    """The inbox's disk failed the upload (full, read-only, ...): an answer the device sends again
    after (5xx), and one warning line here. Before, a 500 with a traceback logged per upload."""
    full = e.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC))
    return Refused(507 if full else 500, f"the inbox cannot store the upload now ({e.strerror or e}): "
                   "nothing of it was kept, and the device sends it again")


async def _upload(request: Request, registry: ClientRegistry) -> Response:
    # The SDK's middleware has verified the key (if any) for the whole app; only the check is left.
    user = request.scope.get("user")
    client = registry.by_name(user.access_token.client_id) if isinstance(user, AuthenticatedUser) else None
    if client is None:
        return JSONResponse({"error": "invalid_token", "error_description": "Authentication required"},
                            status_code=401, headers={"WWW-Authenticate": 'Bearer error="invalid_token"'})
    if not client.upload:
        raise Refused(403, f"client {client.name!r} may not upload (its [[clients]] entry has no upload = true)")
    agent, _, path = _raw_path(request).partition("/")
    parts = check_path(agent, path)
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type not in CONTENT_TYPES:
        raise Refused(415, f"content type {content_type or 'missing'!r} not accepted (send application/octet-stream)")
    project = request.headers.get(PROJECT_HEADER)
    if project is not None:
        check_project(project)
    config = registry.config()
    cap = config.inbox.max_upload_bytes
    declared = request.headers.get("content-length")
    if declared is not None:
        if not declared.isdigit():
            raise Refused(400, "Content-Length is not a number")
        if int(declared) > cap:
            raise Refused(413, f"body larger than the inbox's cap of {cap} bytes ([inbox] max_upload_mb)")
    folder = DeviceFolder(config.inbox_path(), client.name)
    try:
        receiving = await anyio.to_thread.run_sync(folder.receive, agent, parts, cap)
    except OSError as e:
        raise _not_stored(e) from None
    relative = "/".join([agent, *parts])
    idle = config.inbox.upload_idle_seconds
    head = b""
    try:
        async for chunk in _chunks(request, idle):
            if len(head) < 64:
                head += chunk[:64]
                if len(head) >= 64:
                    _check_body_start(parts[-1], head)
            receiving.write(chunk)
        if receiving.size == 0:
            raise Refused(400, "empty body: nothing to store")
        _check_body_start(parts[-1], head)
        if declared is not None and int(declared) != receiving.size:
            raise Refused(400, "body shorter than its Content-Length")
        stored: Stored = await anyio.to_thread.run_sync(receiving.finish)
    except ClientDisconnect:
        receiving.abort()
        raise Refused(400, "the upload was cut off before its end") from None
    except _Stalled:
        receiving.abort()
        log.warning("inbox: %s sent no byte of %s for %s s ([inbox] upload_idle_seconds): abandoned, answered 408",
                    client.name, relative, idle)
        return JSONResponse({"error": f"no byte of the upload arrived for {idle} s ([inbox] upload_idle_seconds)"},
                            status_code=408, headers={"Connection": "close"})
    except OSError as e:
        receiving.abort()
        raise _not_stored(e) from None
    except BaseException:
        receiving.abort()
        raise
    if project is not None:
        try:
            await anyio.to_thread.run_sync(folder.write_hint, agent, parts, project)
        except OSError as e:  # the file is stored; the next upload of it writes its hint again
            log.warning("inbox: could not keep the project hint of %s's %s: %s", client.name, relative, e)
    received = Received(client.name, agent, stored.changed, stored.bytes,
                        clean_version(request.headers.get(CLIENT_HEADER)), clean_plugin(request.headers.get(PLUGIN_HEADER)))
    try:
        await anyio.to_thread.run_sync(record, folder.inbox, received)
    except (OSError, TimeoutError) as e:  # the file is stored; only the facts about it are missing
        log.warning("inbox: could not record the upload of %s in %s: %s", client.name, folder.inbox, e)
    if stored.changed:
        log.info("inbox: %s stored %s (%d bytes)", client.name, relative, stored.bytes)
    return JSONResponse({"stored": relative, "bytes": stored.bytes, "sha256": stored.sha256,
                         "changed": stored.changed})
