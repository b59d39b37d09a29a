"""`jezero serve --workers 2` with the tantivy engine, end to end: the real command in a
subprocess, real MCP clients (modern and handshake-era) on connections that both worker processes
hold, and writes into the library from another process, as `jezero run` makes them. Each worker
opens the index itself and answers from it (explain names the engine), and after a write no
worker answers from the state before it: the new item is found and the old title is gone on every
connection, whichever process holds it."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from contextlib import AsyncExitStack
from dataclasses import replace
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from jezero.store import Store, engines
from device_support import wait_serving
from jz_support import jezero_command
from test_server_http import KEYS, client_block, free_port, record

pytest.importorskip("jezero_index_tantivy", reason="jezero-index-tantivy is not installed")

WORKERS = 2
MAX_CLIENTS = 60  # connections opened until every worker holds one


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
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
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
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        # (generous: each new process imports the whole server, on a busy shared machine)
        wait_serving(f"http://127.0.0.1:{port}", proc, why=lambda: str(proc.communicate()), bound=240)
        workers = worker_pids(proc.pid)
        assert len(workers) == WORKERS, workers

        async with AsyncExitStack() as stack:
            clients: list[Client] = []
            # Open clients (every other one at the handshake-era protocol) until each worker
            # process holds at least one of their connections; each searches once.
            while len(clients) < MAX_CLIENTS:
                http = await stack.enter_async_context(
                    httpx2.AsyncClient(headers={"Authorization": f"Bearer {KEYS['laptop']}"}, timeout=60))
                mode = "legacy" if len(clients) % 2 else "auto"
                client = await stack.enter_async_context(Client(streamable_http_client(url, http_client=http),
                                                                mode=mode))
                found = await hits(client, "webhook")
                assert {h["id"] for h in found} == {1, 2}
                assert {h["explain"]["candidates"] for h in found} == {"tantivy"}
                clients.append(client)
                if len(clients) >= 4 and all(established_on(w, port) for w in workers):
                    break
            held = {w: established_on(w, port) for w in workers}
            assert all(held.values()), f"a worker holds none of {len(clients)} connections: {held}"
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
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=90)
    assert f"with {WORKERS} processes" in err
    assert "Traceback" not in err, err


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
