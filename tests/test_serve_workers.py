"""`jezero serve --workers 2` with the tantivy engine, end to end: the real command in a
subprocess, real MCP clients (modern and handshake-era) on connections that both worker processes
hold, and writes into the library from another process, as `jezero run` makes them. Each worker
listens on a socket of its own (SO_REUSEPORT: the kernel spreads new connections over them), so
the clients' connections are shared out rather than gathered on one process; a worker killed is
replaced on the same socket and serves; the port is free once the server stops. Each worker opens
the index itself and answers from it (explain names the engine), and after a write no worker
answers from the state before it: the new item is found and the old title is gone on every
connection, whichever process holds it. Which process serves a connection is read from /proc (its
socket inodes against the kernel's TCP table): nothing about the processes is exposed to clients."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from contextlib import AsyncExitStack
from dataclasses import replace
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from jezero.server import http_server
from jezero.store import Store, engines
from device_support import wait_serving
from jz_support import jezero_command
from test_server_http import KEYS, client_block, free_port, record, sample_library

pytest.importorskip("jezero_index_tantivy", reason="jezero-index-tantivy is not installed")

WORKERS = 2
# Connections opened to see them shared out: each worker must hold at least SPREAD // 8. By the
# kernel's hash a worker gets fewer than 5 of 40 about twice in ten million runs; on one shared
# socket, the process that accepts first takes them (41 and 9 of 50 in the load benchmark).
SPREAD = 40
BOUND_S = 240  # against a hang (each new process imports the whole server on a busy machine), not a timing


@pytest.fixture
def anyio_backend():
    return "asyncio"


def worker_pids(supervisor: int) -> list[int]:
    """uvicorn's worker processes (multiprocessing's spawned children, not its resource tracker)."""
    children = [int(p) for p in Path(f"/proc/{supervisor}/task/{supervisor}/children").read_text().split()]
    return [p for p in children if b"spawn_main" in Path(f"/proc/{p}/cmdline").read_bytes()]


def established_on(pid: int, port: int) -> int:
    """How many established TCP connections on `port` (the server's side) process `pid` holds:
    its socket inodes (/proc/PID/fd) matched with the kernel's table (/proc/net/tcp, tcp6)."""
    inodes = socket_inodes(pid)
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            local, state, inode = fields[1], fields[3], fields[9]
            if state == "01" and int(local.rsplit(":", 1)[1], 16) == port and inode in inodes:
                count += 1
    return count


def socket_inodes(pid: int) -> set[str]:
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    return inodes


def listening_on(pid: int, port: int) -> set[str]:
    """The inodes of the listening TCP sockets on `port` that process `pid` holds."""
    inodes = socket_inodes(pid)
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port and fields[9] in inodes:
                found.add(fields[9])
    return found


def wait_every_worker(base: str, port: int, proc: subprocess.Popen, count: int) -> list[int]:
    """The worker processes once `count` of them have each answered /health on a connection of
    their own (a worker still importing holds its connections unanswered in its queue)."""
    deadline = time.monotonic() + BOUND_S
    answered: set[int] = set()
    while True:
        workers = worker_pids(proc.pid)
        with httpx2.Client(timeout=2) as http:  # a new connection each time, kept open while we look
            try:
                if http.get(base + "/health").status_code == 200:
                    answered |= {w for w in workers if established_on(w, port)}
            except httpx2.TransportError:
                pass
        live = answered & set(workers)
        if len(workers) == count and live == set(workers):
            return workers
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, f"not every worker answered: {answered} of {workers}"
        time.sleep(0.1)


def maps_index(pid: int, folder: Path) -> bool:
    """Whether process `pid` has the index's files mapped (tantivy reads its segments mmapped)."""
    return str(folder) in Path(f"/proc/{pid}/maps").read_text()


async def hits(client: Client, query: str) -> list[dict]:
    result = await client.call_tool("search", {"query": query, "explain": True})
    assert not result.is_error, result.content
    return result.structured_content["items"]


@pytest.mark.anyio
async def test_two_workers_answer_from_tantivy_and_never_from_before_a_write(tmp_path):
    library = tmp_path / "library.sqlite3"
    first = [record(1, "claude-local", "shop", "Stripe webhook signature check", 0),
             record(2, "agent-ci", "shop", "Stripe webhook test on the CI runner", 1),
             record(3, "codex-local", "billing", "Invoice rounding", 2)]
    with Store(library) as store:
        store.write(first)
    engines.sync("tantivy", library)
    engines.forget()
    from jezero_index_tantivy import folder_for

    index_folder = folder_for(library)
    port = free_port()
    config = tmp_path / "config.toml"
    config.write_text(f'[storage]\npath = "{library}"\n\n[search]\nengine = "tantivy"\n\n[server]\nport = {port}\n'
                      + client_block("laptop", ["*"]))
    env = {k: v for k, v in os.environ.items() if not k.startswith("JEZERO_")}
    env.update({"JEZERO_CONFIG": str(config), "HOME": str(tmp_path)})
    proc = subprocess.Popen([*jezero_command(), "serve", "--workers", str(WORKERS), "--log-level", "warning"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    url = base + "/mcp"

    def client_factory(stack: AsyncExitStack):
        async def open_client(mode: str) -> Client:
            http = await stack.enter_async_context(
                httpx2.AsyncClient(headers={"Authorization": f"Bearer {KEYS['laptop']}"}, timeout=60))
            return await stack.enter_async_context(Client(streamable_http_client(url, http_client=http), mode=mode))
        return open_client

    try:
        wait_serving(base, proc, why=lambda: str(proc.communicate()), bound=BOUND_S)
        workers = wait_every_worker(base, port, proc, WORKERS)
        # A listening socket of each worker's own, all held by the supervisor too (a worker's
        # replacement gets its socket): with one shared socket, both would hold the same one.
        own = {w: listening_on(w, port) for w in workers}
        assert all(len(inodes) == 1 for inodes in own.values()), own
        assert len(set().union(*own.values())) == WORKERS, f"the workers share a listening socket: {own}"
        assert set().union(*own.values()) <= listening_on(proc.pid, port)

        async with AsyncExitStack() as stack:
            open_client = client_factory(stack)
            clients: list[Client] = []
            # SPREAD clients, every other one at the handshake-era protocol, each on its own
            # connection, each searching once: the kernel shares the connections out.
            for k in range(SPREAD):
                client = await open_client("legacy" if k % 2 else "auto")
                found = await hits(client, "webhook")
                assert {h["id"] for h in found} == {1, 2}
                assert {h["explain"]["candidates"] for h in found} == {"tantivy"}
                clients.append(client)
            held = {w: established_on(w, port) for w in workers}
            assert all(n >= SPREAD // 8 for n in held.values()), f"{SPREAD} connections not shared out: {held}"
            # each process opened the index itself (its segments are mapped in each)
            assert all(maps_index(w, index_folder) for w in workers)

            async def everyone_sees(query: str, expected: set[int]) -> None:
                for client in clients:
                    found = await hits(client, query)
                    assert {h["id"] for h in found} == expected, (query, found)
                    assert all(h["explain"]["candidates"] == "tantivy" for h in found), found

            await everyone_sees("zebrafish", set())
            # 1. A write that leaves the index to the readers (a writer without the follower):
            # each worker's engine sees the library's head move and catches up before answering.
            with Store(library) as store:
                store.write([record(4, "agent-laptop", "billing", "Zebrafish tank heater logs", 3)])
            await everyone_sees("zebrafish", {4})
            # 2. A write as `jezero run` makes it: the index brought in step under its lock right
            # after the commit. A changed title replaces the old one in every worker.
            with Store(library) as store:
                follow = engines.follower("tantivy", library)
                store.after_write.append(follow)
                store.write([replace(first[0], title="Quokka habitat survey", summary="Quokka habitat survey.",
                                     questions=["Where do quokkas live?"], atoms=[{"type": "fact", "text": "quokka"}],
                                     content_hash="changed-1"),
                             record(5, "agent-laptop", "billing", "Zebrafish feeding schedule", 4)])
            engines.forget()
            await everyone_sees("quokka", {1})
            await everyone_sees("zebrafish", {4, 5})
            await everyone_sees("signature", set())
            for client in clients:
                item = await client.call_tool("get_item", {"item_id": 5})
                assert not item.is_error and json.loads(item.content[0].text)["title"] == "Zebrafish feeding schedule"
            # both processes served the searches after the writes (their connections stayed put)
            assert all(established_on(w, port) for w in workers)

        # 3. A worker killed: the supervisor starts another on the dead one's socket, which then
        # serves its share of new connections, from the index as it is now.
        victim, kept = workers
        os.kill(victim, signal.SIGKILL)
        deadline = time.monotonic() + BOUND_S
        while not (replacement := [w for w in worker_pids(proc.pid) if w not in workers]):
            assert proc.poll() is None and time.monotonic() < deadline, "the killed worker was not replaced"
            time.sleep(0.2)
        workers = wait_every_worker(base, port, proc, WORKERS)
        assert set(workers) == {kept, replacement[0]}
        assert listening_on(replacement[0], port) == own[victim]
        async with AsyncExitStack() as stack:
            open_client = client_factory(stack)
            for k in range(SPREAD):
                client = await open_client("legacy" if k % 2 else "auto")
                found = await hits(client, "zebrafish")
                assert {h["id"] for h in found} == {4, 5} and {h["explain"]["candidates"] for h in found} == {"tantivy"}
                if established_on(replacement[0], port) and k >= 3:
                    break
            assert established_on(replacement[0], port), "the replacement serves no connection"
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=90)
    assert proc.returncode == 0, err
    assert f"with {WORKERS} processes" in err
    assert "Traceback" not in err, err
    # the port is free again: a server could listen on it (as uvicorn binds, TIME_WAIT allowed)
    with socket.socket() as again:
        again.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        again.bind(("127.0.0.1", port))
        again.listen()


def test_established_on_counts_a_process_own_connections():
    """The helper above, against this process's own listening socket and connection."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        with socket.create_connection(("127.0.0.1", port)) as _client:
            conn, _ = server.accept()
            with conn:
                assert established_on(os.getpid(), port) == 1
        time.sleep(0.05)


def test_reuseport_sockets_share_a_port_and_refuse_a_taken_one():
    """The sockets `serve_workers` gives its workers: one port, each its own listening socket;
    a port another server already listens on is refused, as a plain bind would be, rather than
    joined (SO_REUSEPORT lets the same user's sockets share a port)."""
    from jezero.server.http import reuseport_sockets

    sockets = reuseport_sockets("127.0.0.1", 0, 3)
    try:
        assert sockets is not None and len(sockets) == 3
        port = sockets[0].getsockname()[1]
        assert {s.getsockname() for s in sockets} == {("127.0.0.1", port)}
        assert all(s.getsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT) for s in sockets)
        assert listening_on(os.getpid(), port) == {str(os.fstat(s.fileno()).st_ino) for s in sockets}
        with pytest.raises(OSError):
            reuseport_sockets("127.0.0.1", port, 2)  # a second `jezero serve --workers` on the port
    finally:
        for s in sockets or []:
            s.close()
    with socket.socket() as plain:  # a server of one process (uvicorn's own bind)
        plain.bind(("127.0.0.1", 0))
        plain.listen()
        with pytest.raises(OSError):
            reuseport_sockets("127.0.0.1", plain.getsockname()[1], 2)


FALLBACK = """
import logging, sys
from jezero.server import http
logging.basicConfig(level=logging.WARNING)
http.REUSEPORT_SPREADS = False  # as on a system where SO_REUSEPORT does not spread connections
http.serve_workers(sys.argv[1], workers=2, log_level="warning")
"""


@pytest.mark.anyio
async def test_without_reuseport_the_workers_share_one_socket_and_say_so(tmp_path):
    """Where SO_REUSEPORT does not spread connections, the workers share uvicorn's one socket as
    before, and the log says that connections may gather on one process."""
    library = tmp_path / "library.sqlite3"
    with Store(library) as store:
        store.write([record(1, "claude-local", "shop", "Stripe webhook signature check", 0)])
    port = free_port()
    config = tmp_path / "config.toml"
    config.write_text(f'[storage]\npath = "{library}"\n\n[server]\nport = {port}\n' + client_block("laptop", ["*"]))
    env = {k: v for k, v in os.environ.items() if not k.startswith("JEZERO_")}
    env["HOME"] = str(tmp_path)
    proc = subprocess.Popen([sys.executable, "-c", FALLBACK, str(config)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_serving(base, proc, why=lambda: str(proc.communicate()), bound=BOUND_S)
        deadline = time.monotonic() + BOUND_S
        while True:
            workers = worker_pids(proc.pid)
            held = {w: listening_on(w, port) for w in workers}
            if len(workers) == WORKERS and all(held.values()):
                break
            assert proc.poll() is None and time.monotonic() < deadline, held
            time.sleep(0.2)
        assert len(set().union(*held.values())) == 1, held  # one socket, in both
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {KEYS['laptop']}"}, timeout=60) as http:
            async with Client(streamable_http_client(base + "/mcp", http_client=http)) as client:
                result = await client.call_tool("search", {"query": "webhook"})
                assert not result.is_error and [h["id"] for h in result.structured_content["items"]] == [1]
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=90)
    assert "share one listening socket" in err, err
    assert "Traceback" not in err, err


def test_an_idle_connection_outlives_the_sdk_clients_reuse_of_it(tmp_path):
    # The server must not close an idle kept-alive connection while a client may still reuse it:
    # with uvicorn's default (5 s, as long as httpx, the MCP SDK's HTTP client, reuses one) a
    # request sent just under 5 s after the previous one on its connection crossed the server's
    # close and failed with ReadError, raised by the SDK as an ExceptionGroup when the client
    # closed (the test above, under load). `serve --workers` gives uvicorn the same options.
    run = sample_library(tmp_path)
    server = http_server(str(run.config), "127.0.0.1", free_port(), log_level="warning")
    assert server.config.timeout_keep_alive > httpx2.Limits().keepalive_expiry  # the SDK passes no Limits
