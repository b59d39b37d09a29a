"""The whole HTTP app (`build_http_app`) in this process, one request at a time, no socket: what a
request costs the server in CPU, without uvicorn, the clients or other requests around it.

    .venv/bin/python benchmarks/load/inprocess.py --engine tantivy --tool search --requests 800
    .venv/bin/python benchmarks/load/inprocess.py --tool get_item --profile prof.out   # cProfile
    PYTHONPATH=/path/to/other/checkout .venv/bin/python benchmarks/load/inprocess.py ...  # its code

Each request is the exact bytes of bench.py's RawClient (headers, body, protocol 2026-07-28; --legacy 2025-11-25),
alternating the two client keys, through the ASGI app with its lifespan started. It prints the
CPU ms per request (the process's CPU, every thread included, after a warm-up), and the answers'
digest, so two checkouts can be compared on the same requests.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import hashlib
import json
import os
import random
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench  # noqa: E402


def request(port: int, key: str, body: dict, method: str, name: str | None,
            protocol: str = bench.MODERN) -> tuple[dict, bytes]:
    raw = json.dumps(body).encode()
    headers = [(b"host", f"127.0.0.1:{port}".encode()), (b"authorization", f"Bearer {key}".encode()),
               (b"accept", b"application/json, text/event-stream"), (b"content-type", b"application/json"),
               (b"content-length", str(len(raw)).encode()), (b"mcp-protocol-version", protocol.encode()),
               (b"mcp-method", method.encode())]
    if name:
        headers.append((b"mcp-name", name.encode()))
    scope = {"type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"}, "http_version": "1.1",
             "method": "POST", "scheme": "http", "path": "/mcp", "raw_path": b"/mcp", "query_string": b"",
             "root_path": "", "headers": headers, "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", port)}
    return scope, raw


async def call(app, state: dict, scope: dict, raw: bytes) -> tuple[int, bytes]:
    sent = False
    out: list[bytes] = []
    status = 0
    done = asyncio.Event()

    async def receive():
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": raw, "more_body": False}
        await done.wait()
        return {"type": "http.disconnect"}

    async def send(message):
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
        elif message["type"] == "http.response.body":
            out.append(message.get("body", b""))
            if not message.get("more_body"):
                done.set()

    await app({**scope, "state": dict(state)}, receive, send)
    done.set()
    return status, b"".join(out)


async def run(app, calls: list[tuple[dict, bytes]], warmup: int, profile: Path | None) -> dict:
    inbox: asyncio.Queue = asyncio.Queue()
    outbox: asyncio.Queue = asyncio.Queue()
    state: dict = {}
    life = asyncio.create_task(app({"type": "lifespan", "asgi": {"version": "3.0"}, "state": state},
                                   inbox.get, outbox.put))
    await inbox.put({"type": "lifespan.startup"})
    started = await outbox.get()
    assert started["type"] == "lifespan.startup.complete", started
    digest = hashlib.sha256()
    statuses: dict[int, int] = {}
    try:
        for scope, raw in calls[:warmup]:
            await call(app, state, scope, raw)
        prof = cProfile.Profile(time.thread_time) if profile else None  # the event loop thread's CPU
        cpu0, wall0, loop0 = time.process_time(), time.perf_counter(), time.thread_time()
        if prof:
            prof.enable()
        for scope, raw in calls[warmup:]:
            status, body = await call(app, state, scope, raw)
            statuses[status] = statuses.get(status, 0) + 1
            digest.update(body)
        if prof:
            prof.disable()
            prof.dump_stats(str(profile))
        cpu, wall, loop = time.process_time() - cpu0, time.perf_counter() - wall0, time.thread_time() - loop0
    finally:
        await inbox.put({"type": "lifespan.shutdown"})
        await outbox.get()
        await life
    n = len(calls) - warmup
    return {"requests": n, "cpu_ms_per_request": round(cpu / n * 1e3, 3), "wall_ms_per_request": round(wall / n * 1e3, 3),
            "event_loop_cpu_ms_per_request": round(loop / n * 1e3, 3),
            "statuses": statuses, "answers_sha256": digest.hexdigest()[:16]}


def alone(config: Path, calls: list[tuple[dict, bytes]], warmup: int) -> float:
    """The tools' own work for the same calls, as the tool functions do it (the query through a
    reader of the server's Library, the answer shaped and its JSON made), with no protocol."""
    from jezero import query as q
    from jezero.server import shape
    from jezero.server.clients import ClientRegistry
    from jezero.server.library import Library

    registry = ClientRegistry.from_source(str(config))
    library = Library.for_config(registry.config())
    options = registry.config().search
    sources = {bench.KEYS[k]: list(registry.by_name(f"bench-{k}").sources) for k in bench.KEYS}

    def one(scope, raw):
        params = json.loads(raw)["params"]
        key = dict(scope["headers"])[b"authorization"].decode().split()[1]
        arguments = dict(params["arguments"])
        with library.reader() as conn:
            if params["name"] == "search":
                hits = q.search(conn, arguments.pop("query"), allowed=sources[key], options=options, **arguments)
                shape.fitted({"items": [shape.hit(h) for h in hits]}, "items")
            else:
                it = q.get_item(conn, arguments["item_id"], allowed=sources[key])
                shape.dumps(shape.fit_item(shape.item(it)))

    for scope, raw in calls[:warmup]:
        one(scope, raw)
    cpu0 = time.process_time()
    for scope, raw in calls[warmup:]:
        one(scope, raw)
    return round((time.process_time() - cpu0) / (len(calls) - warmup) * 1e3, 3)


def replay() -> None:
    """Answer each query-layer call from a cache filled by its first call (the warm-up covers every
    distinct request): what is left of a request's CPU is the server's."""
    from jezero import query as q

    real = q.search
    seen: dict = {}

    def cached(conn, *args, **kwargs):
        key = repr((args, sorted(kwargs.items(), key=lambda kv: kv[0])))
        if key not in seen:
            seen[key] = real(conn, *args, **kwargs)
        return seen[key]

    q.search = cached


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engine", default="tantivy", choices=["fts5", "tantivy"])
    ap.add_argument("--items", type=int, default=100_000)
    ap.add_argument("--data", type=Path, default=HERE / "data")
    ap.add_argument("--no-messages", action="store_true", help="the library without messages (items alone)")
    ap.add_argument("--tool", default="search", choices=["search", "get_item"])
    ap.add_argument("--requests", type=int, default=800)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--work", help="the run's folder under --data (a fresh copy; default: one of its own, removed after)")
    ap.add_argument("--profile", type=Path, default=None, help="cProfile the measured requests into this file")
    ap.add_argument("--no-lean", action="store_true", help="every request through the SDK's full path")
    ap.add_argument("--legacy", action="store_true",
                    help="handshake-era requests (protocol 2025-11-25 in the header, no _meta envelope), as "
                         "bench.py --legacy sends them after its initialize")
    ap.add_argument("--server-only", action="store_true",
                    help="replay each search's answer from the query layer, computed once in the warm-up: the CPU "
                         "per request is then the server's own work alone (the bytes stay the same)")
    ap.add_argument("--alone", action="store_true",
                    help="also the same calls' query and shaping alone (the tool's body, one thread, no protocol)")
    args = ap.parse_args()

    pristine = bench.pristine_library(args.data, args.items, messages=not args.no_messages)
    index = bench.engine_index(pristine, args.engine)
    work = args.data / args.work if args.work else bench.run_folder(args.data)
    library = bench.fresh_copy(pristine, work, index)
    config = bench.write_config(work, library, args.engine)

    import jezero
    from jezero.server.http import build_http_app

    if args.server_only:
        if args.tool != "search":
            ap.error("--server-only replays searches (get_item's query is trivial already)")
        # the warm-up covers each of the 400 searches (each with its one key) once
        args.warmup = max(args.warmup, len(bench.queries()))
        replay()
    app = build_http_app(str(config), **({"lean": False} if args.no_lean else {}))
    qs = bench.queries()
    rng = random.Random(7)
    calls = []
    for i in range(args.warmup + args.requests):
        key = bench.KEYS["all"] if i % 2 == 0 or args.tool == "get_item" else bench.KEYS["local"]
        if args.tool == "search":
            q, f = qs[i % len(qs)]
            arguments = {"query": q, **f}
        else:
            arguments = {"item_id": rng.randint(1, args.items)}
        params = {"name": args.tool, "arguments": arguments}
        if not args.legacy:
            params["_meta"] = {"io.modelcontextprotocol/protocolVersion": bench.MODERN,
                               "io.modelcontextprotocol/clientInfo": {"name": "load", "version": "0"},
                               "io.modelcontextprotocol/clientCapabilities": {}}
        body = {"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": params}
        calls.append(request(8000, key, body, "tools/call", args.tool, bench.LEGACY if args.legacy else bench.MODERN))
    result = asyncio.run(run(app, calls, args.warmup, args.profile))
    if args.alone:
        result["alone_cpu_ms_per_request"] = alone(config, calls, args.warmup)
    result.update({"tool": args.tool, "engine": args.engine, "protocol": bench.LEGACY if args.legacy else bench.MODERN, "code": str(Path(jezero.__file__).parent.parent),
                   "load_average_1m": round(os.getloadavg()[0], 2)})
    print(json.dumps(result))


if __name__ == "__main__":
    main()
