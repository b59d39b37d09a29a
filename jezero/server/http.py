"""One ASGI app for everything served over HTTP:

- /mcp                MCP over streamable HTTP; every request carries a client key
- GET /api/v1/overview counts per source, project and day for the app's home screen, the
                       health of each configured connector and the devices that upload (last
                       upload, client core and plugin versions), for any valid key and only its
                       sources (kept out of MCP so agents do not get a sixth tool to choose from)
- GET /health          no key, no data: status and version, for monitors
- PUT /inbox/v1/...    a device uploads a session file, for keys with upload = true
                       (jezero/server/inbox.py)

A missing, wrong or revoked key gets 401 on /mcp and on the overview. On a local address both
refuse a Host or Origin that is not local (DNS rebinding: a web page the user visits must not
reach the server through the browser). On any other address those checks are off and traffic is
plain HTTP: `http_server` warns, and the docs say to put a TLS reverse proxy in front.

A request whose id is neither a string nor a whole number (or missing) gets JSON-RPC's -32600
with a null id, as over stdio: the SDK took it for a notification and answered 202, no body.

GET /mcp (the optional server-to-client event stream) answers 405: a read-only server has
nothing to push, and a stream held open would outlive its key's revocation and hold a
connection per idle client.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import socket
import sys
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
import uvicorn
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.applications import Starlette
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.config import STARTUP_FAILURE
from uvicorn.supervisors.multiprocess import Multiprocess, Process
from uvicorn.supervisors.multiprocess import logger as uvicorn_log

from jezero import __version__, devices
from jezero import query as q
from jezero.config import Config
from jezero.inbox.uploads import server_core_version
from jezero.server import parser
from jezero.server.clients import POLL_SECONDS, ClientRegistry
from jezero.server.inbox import add_inbox_route
from jezero.server.lean import LeanToolCalls
from jezero.server.library import ConnectionMode, Library
from jezero.server.mcp_app import REFUSED_ID, build_mcp_server, request_without_id
from jezero.store import StoreError

log = logging.getLogger("jezero.server")

OVERVIEW_DEFAULT_DAYS = 30
OVERVIEW_MAX_DAYS = 366
# Every request Jezero serves is a small JSON tool call (a query is at most 4,000 characters);
# the SDK's default of 4 MiB let a client make the server parse megabytes per request.
MAX_REQUEST_BYTES = 256 * 1024
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


def local_only(host: str) -> TransportSecuritySettings | None:
    """The Host/Origin check for a server on a local address (None elsewhere): the same lists
    the SDK would use, given explicitly so /mcp and the overview share them."""
    if host not in LOCAL_HOSTS:
        return None
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*", "127.0.0.1", "localhost", "[::1]"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*",
                         "http://127.0.0.1", "http://localhost", "http://[::1]"],
    )


class _NoEventStream:
    """Answer GET /mcp with 405 (see the module docstring); everything else passes through."""

    def __init__(self, app: ASGIApp, path: str = "/mcp"):
        self.app, self.path = app, path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "GET" and scope["path"].rstrip("/") == self.path:
            response = Response("this server sends no event stream; POST requests only", status_code=405,
                                headers={"Allow": "POST, DELETE"})
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)


class _WholeBody:
    """Read a POST /mcp body whole before the SDK sees the request. A client that goes away
    half-way through its body is dropped here, quietly: the SDK logged each one as an error with
    a full traceback and answered it a 500, so a client opening and abandoning connections made
    the server spend its time on tracebacks while real requests waited (benchmarks/faults). A
    body past MAX_REQUEST_BYTES gets 413 before it is read further, and one declared past it
    (Content-Length) before any of it is read: a client that declares a huge body and sends none
    is not waited for. A body not in whole within `body_seconds` of its head (`[server]
    body_timeout_seconds`) gets 408 and the connection is closed: a client that trickles its body
    a byte at a time no longer holds a connection for ever (slowloris; the head has its own
    deadline, jezero.server.parser). A plain tool call is then answered by `lean` when given
    (jezero.server.lean: the same bytes, less of the SDK's work)."""

    def __init__(self, app: ASGIApp, *, body_seconds: float, path: str = "/mcp",
                 lean: LeanToolCalls | None = None):
        self.app, self.path, self.lean, self.body_seconds = app, path, lean, body_seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"].rstrip("/") != self.path:
            await self.app(scope, receive, send)
            return
        if _declared_length(scope) > MAX_REQUEST_BYTES:  # refused before any of it is read
            await Response("request body too large", status_code=413)(scope, receive, send)
            return
        chunks, size, whole = [], 0, False
        with anyio.move_on_after(self.body_seconds):
            while size <= MAX_REQUEST_BYTES:
                message = await receive()
                if message["type"] == "http.disconnect":
                    return  # nobody is left to answer
                chunk = message.get("body", b"")
                size += len(chunk)
                chunks.append(chunk)
                if not message.get("more_body", False):
                    whole = True
                    break
        if size > MAX_REQUEST_BYTES:
            await Response("request body too large", status_code=413)(scope, receive, send)
            return
        if not whole:
            log.warning("an MCP request body was not in whole within %s s: answered 408", self.body_seconds)
            await Response("request body not received in time", status_code=408,
                           headers={"Connection": "close"})(scope, receive, send)
            return
        body = b"".join(chunks)
        delivered = False

        async def replay() -> dict:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # after the body: only a disconnect can come

        if self.lean is not None and await self.lean.answer(scope, body, replay, send):
            return
        if _names_a_request_without_id(body):
            send = _refusing_acceptance(send)
        await self.app(scope, replay, send)


def _names_a_request_without_id(body: bytes) -> bool:
    """The body, read as the SDK reads it, is a request whose id it cannot read (mcp_app's
    request_without_id): the SDK would accept it as a notification, 202 and no body."""
    try:
        message = types.jsonrpc_message_adapter.validate_json(body, by_name=False)
    except ValueError:  # not a message at all: the SDK's own 400
        return False
    return request_without_id(message)


def _refusing_acceptance(send: Send) -> Send:
    """`send` with the SDK's 202 for a request it took for a notification replaced by JSON-RPC's
    -32600 (400, a null id), as stdio and the modern path answer. The SDK still decides first, so
    a missing key still gets its 401, a foreign Host its 421."""
    refusal = JSONResponse({"jsonrpc": "2.0", "error": {"code": types.INVALID_REQUEST, "message": REFUSED_ID},
                            "id": None}, status_code=400)
    replaced = False

    async def refusing(message) -> None:
        nonlocal replaced
        if message["type"] == "http.response.start" and message["status"] == 202:
            replaced = True
            log.warning("refused a request: %s", REFUSED_ID)
            await send({"type": "http.response.start", "status": 400, "headers": refusal.raw_headers})
            await send({"type": "http.response.body", "body": refusal.body})
        elif not replaced:  # (the 202's own body is dropped)
            await send(message)

    return refusing


def _declared_length(scope: Scope) -> int:
    """The request's Content-Length, or 0 when it gives none or one that is not a number (the
    body's own size is then checked as it arrives)."""
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return 0
    return 0


def _unauthorized() -> Response:
    # The same answer and header as the SDK gives on /mcp, so a client handles both alike.
    return JSONResponse(
        {"error": "invalid_token", "error_description": "Authentication required"},
        status_code=401,
        headers={"WWW-Authenticate": 'Bearer error="invalid_token", error_description="Authentication required"'},
    )


def build_http_app(
    source: ClientRegistry | Config | str | os.PathLike | None = None,
    *,
    host: str = "127.0.0.1",
    stateless: bool = True,
    json_response: bool = True,
    connections: ConnectionMode = "thread",
    readers: int | None = None,
    lean: bool = True,
) -> Starlette:
    """The ASGI app (MCP at /mcp, the overview, health) for a config path, `Config` or registry.

    host: the address it will be served on; for 127.0.0.1, localhost and ::1 the SDK also
        refuses requests whose Host or Origin is not local (DNS-rebinding protection).
    stateless / json_response: each MCP request is answered on its own, as one JSON body, with
        no session kept on the server. A read-only server has nothing to keep between requests,
        and it is measurably faster (benchmarks/load/README.md).
    connections / readers: see jezero.server.library.
    lean: answer plain tool calls at the modern protocol without most of the SDK's per-request
        machinery (jezero.server.lean; same bytes on the wire). False: the SDK answers all.
    """
    registry = ClientRegistry.from_source(source)
    library = Library.for_config(registry.config(), mode=connections, readers=readers)
    server = build_mcp_server(registry, http=True, library=library)
    security = local_only(host)
    origin_check = TransportSecurityMiddleware(security)

    @server.custom_route("/health", methods=["GET"])
    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok", "version": __version__})

    @server.custom_route("/api/v1/overview", methods=["GET"])
    async def overview(request: Request) -> Response:
        refused = await origin_check.validate_request(request)
        if refused is not None:
            return refused
        # Custom routes are outside the SDK's auth wrapper, but its middleware has already
        # verified the key (if any) for the whole app: only the check is left to do here.
        user = request.scope.get("user")
        if not isinstance(user, AuthenticatedUser):
            return _unauthorized()
        client = registry.by_name(user.access_token.client_id)
        if client is None:
            return _unauthorized()
        try:
            days = int(request.query_params.get("days", OVERVIEW_DEFAULT_DAYS))
        except ValueError:
            return JSONResponse({"error": "days must be a whole number"}, status_code=400)
        days = max(1, min(days, OVERVIEW_MAX_DAYS))
        allowed = list(client.sources)
        try:
            data = await anyio.to_thread.run_sync(_overview, library, allowed, days, registry.config())
        except q.QueryError as e:
            return JSONResponse({"error": str(e)}, status_code=400)
        except LookupError as e:
            return JSONResponse({"error": str(e)}, status_code=503)
        return JSONResponse(data)

    add_inbox_route(server, registry)
    app = server.streamable_http_app(stateless_http=stateless, json_response=json_response, host=host,
                                     transport_security=security, max_request_body_size=MAX_REQUEST_BYTES)
    app.add_middleware(_NoEventStream)
    shortcut = None
    if lean:
        backend = next((m.kwargs.get("backend") for m in app.user_middleware if m.cls is AuthenticationMiddleware), None)
        shortcut = LeanToolCalls.for_server(server, backend, security, stateless=stateless,
                                            json_response=json_response, max_body=MAX_REQUEST_BYTES)
    app.add_middleware(_WholeBody, lean=shortcut, body_seconds=registry.config().server.body_timeout_seconds)
    _watch_config(app, registry)
    return app


def _watch_config(app: Starlette, registry: ClientRegistry) -> None:
    """Also look at the config in the background while the app runs. Requests already see an edit
    within POLL_SECONDS; this makes the log say "reloaded" (or "keeping the last good clients")
    right after the edit, even when no request comes."""
    inner = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(app_):
        async with inner(app_) as state, anyio.create_task_group() as tasks:
            async def watch():
                while True:
                    await anyio.sleep(POLL_SECONDS)
                    await anyio.to_thread.run_sync(registry.refresh)

            tasks.start_soon(watch)
            try:
                yield state
            finally:
                tasks.cancel_scope.cancel()

    app.router.lifespan_context = lifespan


def _overview(library: Library, allowed: list[str], days: int, config: Config) -> dict[str, Any]:
    try:
        with library.reader() as conn:
            data = q.overview(conn, allowed=allowed, days=days)
            data["connectors"] = _connector_health(conn, allowed, config)
    except StoreError:
        raise LookupError("the library does not exist yet on the server: nothing has been ingested") from None
    # The devices that upload, limited like the items to the inbox sources this key may read,
    # and the client core this server ships, which their cores are compared with.
    data["devices"] = devices.uploads(config, allowed)
    data["client_core_version"] = server_core_version()
    return data


def _connector_health(conn, allowed: list[str], config: Config) -> list[dict[str, Any]]:
    """The health of the configured connectors this key may read (the app's "alive?" column):
    the same judgement as `jezero health`, read from the server's own record."""
    from jezero.config import source_allowed
    from jezero.monitor.health import check, read_states

    names = [c.name for c in config.connectors if source_allowed(c.name, allowed)]
    return [c.as_dict() for c in check(config, read_states(conn), names=names).connectors]


def http_server(
    source: ClientRegistry | Config | str | os.PathLike | None = None,
    host: str | None = None,
    port: int | None = None,
    *,
    log_level: str = "info",
    **app_options: Any,
) -> uvicorn.Server:
    """A uvicorn server for the app, not started: `.run()` blocks; in a thread, poll `.started`
    and set `.should_exit = True` to stop it. host and port default to the config's [server]."""
    registry = ClientRegistry.from_source(source)
    settings = registry.config().server
    host = host or settings.host
    port = port or settings.port
    if host not in LOCAL_HOSTS:
        log.warning("serving on %s: other machines can reach it, over plain HTTP (keys and items travel "
                    "unencrypted) and without the Host/Origin checks of a local address; put a TLS reverse "
                    "proxy in front (README, \"Safety and limits\")", host)
    app = build_http_app(registry, host=host, **app_options)
    return uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level=log_level, **_uvicorn_options(settings)))


# How long the server keeps an idle kept-alive connection open. uvicorn's default, 5 s, is exactly
# how long httpx (the MCP SDK's HTTP client) reuses an idle connection: a request sent just under
# 5 s after the previous one could cross the server's close and fail with ReadError, which the SDK
# raises as an ExceptionGroup when the client closes (tests/test_serve_workers.py, under load).
# Longer than the clients' own limit (httpx 5 s, Node's fetch 4 s), the client lets go first.
KEEP_ALIVE_S = 15


def _uvicorn_options(settings) -> dict[str, Any]:
    """What every uvicorn server of `jezero serve` runs with, one process or several."""
    return {"access_log": False, "lifespan": "on", "timeout_graceful_shutdown": 3, "timeout_keep_alive": KEEP_ALIVE_S,
            "http": parser.protocol(settings.head_timeout_seconds)}


def serve_http(
    source: ClientRegistry | Config | str | os.PathLike | None = None,
    host: str | None = None,
    port: int | None = None,
    **options: Any,
) -> None:
    """Serve MCP, the overview and health over HTTP until interrupted."""
    http_server(source, host, port, **options).run()


# How long a worker process may take to answer the supervisor's ping before it is replaced.
# uvicorn's 5 s is shorter than a new process takes to import the server on a busy two-core
# machine (load average 15): every worker was killed while starting, over and over.
WORKER_HEALTHCHECK_S = 60.0

# `jezero serve --workers 0`: one process per core, at most this many. One process tops out near
# one core (the GIL: its reader threads and the event loop take turns), so on two cores two
# processes served 1.4x the searches of one (benchmarks/load/README.md, 2026-12-01); each holds
# its own caches, so the memory grows with the count.
MAX_DEFAULT_WORKERS = 4


def default_workers() -> int:
    return max(1, min(os.cpu_count() or 1, MAX_DEFAULT_WORKERS))


def worker_readers(workers: int) -> int:
    """The readers of each of `workers` processes when not given: the cores shared out, one at
    least (two processes of one reader each beat two of two on two cores: fewer threads taking
    turns at each process's GIL)."""
    return max(1, (os.cpu_count() or 1) // workers)


# How `serve_workers` hands each worker process what to build (uvicorn starts them from an import
# string, so nothing but the environment passes).
_WORKER_ENV = "JEZERO_SERVE_WORKER"


def serve_workers(
    config_path: str | os.PathLike,
    host: str | None = None,
    port: int | None = None,
    *,
    workers: int,
    log_level: str = "info",
    **app_options: Any,
) -> None:
    """Serve with `workers` processes on one port (`run_workers`: on Linux each its own listening
    socket, elsewhere one shared), each a whole server over the same library file: a request
    needs nothing another process holds (stateless HTTP, read-only connections), and each
    process watches the config for its own clients and devices, so a new, revoked or rotated key
    takes effect in all of them within POLL_SECONDS. More processes scale the protocol's Python
    work past one core's GIL; each keeps its own connections, readers and index engine."""
    registry = ClientRegistry.from_source(config_path)
    settings = registry.config().server
    host = host or settings.host
    port = port or settings.port
    if host not in LOCAL_HOSTS:
        log.warning("serving on %s: other machines can reach it, over plain HTTP; put a TLS reverse proxy in "
                    "front (README, \"Safety and limits\")", host)
    if app_options.get("readers") is None:
        app_options["readers"] = worker_readers(workers)
    os.environ[_WORKER_ENV] = json.dumps({"config": str(config_path), "host": host, "options": app_options,
                                          "log_level": log_level})
    run_workers(uvicorn.Config("jezero.server.http:worker_app", factory=True, host=host, port=port,
                               workers=workers, log_level=log_level, timeout_worker_healthcheck=WORKER_HEALTHCHECK_S,
                               **_uvicorn_options(settings)))


# Whether sockets bound with SO_REUSEPORT to one port share its connections out (Linux 3.9 on).
# macOS and the BSDs accept the option but do not spread (FreeBSD's SO_REUSEPORT_LB does; not
# used, untested here).
REUSEPORT_SPREADS = sys.platform.startswith("linux") and hasattr(socket, "SO_REUSEPORT")


def run_workers(config: uvicorn.Config) -> None:
    """uvicorn's supervisor over `config.workers` processes of `config.app` (an import string),
    as `uvicorn.run` would start it, but on Linux with a listening socket of its own for each
    worker (`reuseport_sockets`), so that the kernel spreads new connections over the processes.

    uvicorn binds one socket and every worker accepts from it. The kernel then hands a new
    connection to whichever process takes it first, and keep-alive clients stay where they
    landed: at 50 clients, one of two workers was left with 0-5 connections in 4 of 12 runs
    (benchmarks/load/README.md, 2026-12-02; with a socket each, 19-31 every time). Sockets bound
    with SO_REUSEPORT to the same address and port each get their own queue, and Linux picks the
    queue of each new connection by a hash of its addresses and ports (the same user's sockets
    only). The supervisor holds the sockets, listening from the start;
    worker i accepts from socket i, and its replacement, if it dies, from the same one. So a
    connection's process is its hash's from the first moment: one that arrives while its worker
    is still starting (or being replaced) waits in that queue, instead of landing on whichever
    process was up first and staying there (with the sockets listening only once their worker
    did, the first run had all 50 clients on the worker that had imported faster). Elsewhere
    (other systems accept SO_REUSEPORT without spreading, or send every connection to one socket)
    the workers share one socket as before, with a note in the log. Everything else is uvicorn's: the ping that replaces a hung or dead
    worker, SIGINT/SIGTERM stopping all, SIGHUP replacing each in turn."""
    if config.uds is not None or config.fd is not None:
        raise ValueError("run_workers serves a host and port")
    try:
        sockets = reuseport_sockets(config.host, config.port, config.workers, backlog=config.backlog)
    except OSError as e:  # the port is taken, or the address is not this machine's: as uvicorn says it
        uvicorn_log.error("[Errno %s] error while attempting to bind on address %r: %s", e.errno,
                          (config.host, config.port), (e.strerror or str(e)).lower())
        raise SystemExit(STARTUP_FAILURE) from None
    if sockets is None:
        Multiprocess(config, sockets=[config.bind_socket()]).run()
        return
    config.port = sockets[0].getsockname()[1]
    uvicorn_log.info(
        "Uvicorn running on http://%s:%d with %d processes, a listening socket each (Press CTRL+C to quit)",
        f"[{config.host}]" if ":" in config.host else config.host, config.port, len(sockets))
    supervisor = _SocketPerWorker(config, sockets)
    try:
        supervisor.run()
    finally:
        for sock in supervisor.slots:
            sock.close()


def reuseport_sockets(host: str, port: int, count: int, *, backlog: int = 2048) -> list[socket.socket] | None:
    """`count` sockets bound to host:port with SO_REUSEPORT and listening, or None (logged)
    where SO_REUSEPORT does not spread connections: anything but Linux, or a kernel without it.
    Port 0: the first socket's port for all. An OSError if the port is taken.

    Another server already on the port makes the first, plain bind fail, as it would without
    SO_REUSEPORT: a second `jezero serve` on the same port is refused, not silently given half
    of this one's connections (the kernel lets the same user's SO_REUSEPORT sockets share)."""
    if not REUSEPORT_SPREADS:
        log.warning("several processes share one listening socket here (no SO_REUSEPORT spreading on %s): "
                    "connections may gather on one process", sys.platform)
        return None
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family) as probe:  # refused if anything holds the port (as uvicorn's own bind)
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind((host, port))
        port = probe.getsockname()[1]
    sockets: list[socket.socket] = []
    try:
        for _ in range(count):
            sockets.append(_reuseport_socket(family, host, port, backlog))
    except OSError as e:
        for sock in sockets:
            sock.close()
        if e.errno not in (errno.ENOPROTOOPT, errno.EINVAL, errno.EOPNOTSUPP):
            raise
        log.warning("several processes share one listening socket (SO_REUSEPORT refused: %s): connections may "
                    "gather on one process", e)
        return None
    return sockets


def _reuseport_socket(family: int, host: str, port: int, backlog: int) -> socket.socket:
    sock = socket.socket(family)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn's: TIME_WAIT does not block
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((host, port))
        sock.listen(backlog)  # in the kernel's group, hashed to, from now on (the worker listens again)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


class _SocketPerWorker(Multiprocess):
    """uvicorn's Multiprocess (0.54) with worker i on socket i: where uvicorn hands every new
    process the one shared socket, this hands it its slot's. The loops below are uvicorn's own
    (`init_processes`, `keep_subprocess_alive`, `restart_all`, SIGTTIN/SIGTTOU), changed only in
    which socket a process gets; tests/test_serve_workers.py kills a worker and checks its
    replacement serves on the same socket."""

    def __init__(self, config: uvicorn.Config, sockets: list[socket.socket]):
        super().__init__(config, sockets=[])
        self.slots = list(sockets)
        self.family = sockets[0].family

    def _process(self, idx: int):
        return Process(self.config, [self.slots[idx]])

    def init_processes(self) -> None:
        for idx in range(self.processes_num):
            process = self._process(idx)
            process.start()
            self.processes.append(process)

    def keep_subprocess_alive(self) -> None:
        if self.should_exit.is_set():
            return
        for idx, process in enumerate(self.processes):
            if process.is_alive(timeout=self.config.timeout_worker_healthcheck):
                continue
            process.kill()  # hung, or dead already
            process.join()
            if process.exitcode == STARTUP_FAILURE:  # would fail the same way on every restart
                uvicorn_log.error(f"Child process [{process.pid}] failed to start, stopping the parent process.")
                self.should_exit.set()
                return
            if self.should_exit.is_set():
                return
            uvicorn_log.info(f"Child process [{process.pid}] died")
            process = self._process(idx)
            process.start()
            self.processes[idx] = process

    def restart_all(self) -> None:
        for idx, old_process in enumerate(self.processes):
            if self.should_exit.is_set():
                return
            new_process = self._process(idx)  # on the same socket: both accept from it a moment
            new_process.start()
            if not new_process.wait_until_ready(self.config.timeout_worker_healthcheck, self.should_exit):
                new_process.kill()
                new_process.join()
                if not self.should_exit.is_set():
                    uvicorn_log.error(f"New child process [{new_process.pid}] was not ready in time; "
                                 f"keeping worker [{old_process.pid}] and aborting the restart.")
                return
            old_process.terminate()
            old_process.join()
            self.processes[idx] = new_process

    def handle_ttin(self) -> None:
        uvicorn_log.info("Received SIGTTIN, increasing the number of processes.")
        try:
            self.slots.append(_reuseport_socket(self.family, self.config.host, self.config.port,
                                                self.config.backlog))
        except OSError as e:
            uvicorn_log.error(f"no socket for another process: {e}")
            return
        self.processes_num += 1
        process = self._process(len(self.processes))
        process.start()
        self.processes.append(process)

    def handle_ttou(self) -> None:
        uvicorn_log.info("Received SIGTTOU, decreasing number of processes.")
        if self.processes_num <= 1:
            uvicorn_log.info("Already reached one process, cannot decrease the number of processes anymore.")
            return
        self.processes_num -= 1
        process = self.processes.pop()
        process.terminate()
        process.join()
        self.slots.pop().close()  # its queue goes with it (connections waiting there are reset)


def worker_app() -> Starlette:
    """The app of one `serve_workers` process, from what the supervisor put in the environment."""
    given = json.loads(os.environ[_WORKER_ENV])
    # A new process: jezero's own messages (a config reloaded, a bad edit) go to stderr as in
    # the parent (`jezero serve` configured logging there).
    logging.basicConfig(level=given["log_level"].upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("mcp").setLevel(logging.WARNING)
    from jezero.server.process import tune_gc

    tune_gc()  # as `jezero serve` does in its own process
    return build_http_app(given["config"], host=given["host"], **given["options"])
