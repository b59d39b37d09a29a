"""Load benchmark: N concurrent MCP clients searching over HTTP, against a 100k-item library that a
writer process keeps adding to. Everything runs on 127.0.0.1. See README.md for the figures.

    .venv/bin/python benchmarks/load/bench.py                      # N = 10 and 50, default server
    .venv/bin/python benchmarks/load/bench.py --clients 50 --rate 300 --seconds 20
    .venv/bin/python benchmarks/load/bench.py --server "--connections request" --server "--workers 2"

Three processes: the server (benchmarks/load/server.py, the real app from jezero.server.http),
the writer (benchmarks/load/writer.py, committing a few items every 0.2 s through Store.write),
and this one, the clients. Each client is one keep-alive HTTP connection speaking MCP, one call
at a time, like an agent. The clients speak the wire protocol directly (the exact requests the
SDK's own client sends, captured from it) rather than through the SDK's Client, whose per-call
CPU would otherwise compete with the server for the same two cores; --sdk uses the SDK client.

Two ways to load the server:
- closed loop (default): every client sends its next search as soon as it has the answer; the
  throughput is the server's capacity, and latency grows with the queue.
- open loop (--rate R): searches are scheduled at R per second overall, spread over the clients;
  latency is counted from the scheduled time, so a server that falls behind is charged for it.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import itertools
import json
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE.parent / "search"))
sys.path.insert(0, str(ROOT))

import corpus  # noqa: E402  (benchmarks/search/corpus.py)
import messages_corpus  # noqa: E402  (benchmarks/load/messages_corpus.py)

KEYS = {"all": "jz_load-bench-all", "local": "jz_load-bench-local"}
MODERN = "2026-07-28"
LEGACY = "2025-11-25"


# -- the library and the config ----------------------------------------------------------------


def pristine_library(data: Path, n: int, messages: bool = True) -> Path:
    """The library every run starts from, built once: `n` items, each with its session's messages
    (messages_corpus.py, through Store.write as a connector writes them), or with `messages`
    False the items alone (corpus.py: the library of the runs before 2026-12-01 18:00, whose
    messages lane found nothing to read)."""
    path = data / (f"lib-{n}-messages.sqlite3" if messages else f"lib-{n}.sqlite3")
    if not path.exists():
        data.mkdir(parents=True, exist_ok=True)
        what = "items with their messages" if messages else "items"
        print(f"building {n} {what} into {path} (once) ...", file=sys.stderr)
        t0, cpu0 = time.perf_counter(), time.process_time()
        partial = path.with_suffix(".partial")
        for suffix in ("", "-wal", "-shm"):
            Path(str(partial) + suffix).unlink(missing_ok=True)
        every = 5000 if messages else 20000
        progress = lambda k: print(f"  {k}", file=sys.stderr) if k % every == 0 else None  # noqa: E731
        (messages_corpus if messages else corpus).build(partial, n, progress=progress)
        for suffix in ("-wal", "-shm"):
            Path(str(partial) + suffix).unlink(missing_ok=True)
        partial.rename(path)
        print(f"built in {time.perf_counter() - t0:.0f} s ({time.process_time() - cpu0:.0f} s CPU): "
              f"{json.dumps(messages_corpus.sizes(path))}", file=sys.stderr)
    return path


def engine_index(pristine: Path, engine: str) -> list[Path] | None:
    """The derived indexes of a plugin engine beside the pristine library (tantivy: the items'
    and the messages'), built once; None for FTS5 (inside the file)."""
    if engine == "fts5":
        return None
    from jezero.store import engines
    from jezero_index_tantivy import folder_for

    folder = folder_for(pristine)
    if not (folder / "meta.json").exists():
        print(f"building the {engine} index of {pristine} (once) ...", file=sys.stderr)
    engines.sync(engine, pristine)
    engines.forget()
    # Every folder the sync keeps beside the library. (Copying the items' alone left the copy's
    # messages index empty, so every search tried to catch it up, found it far behind and had
    # FTS5 answer the messages lane: runs before 2026-12-01 14:30 measured that.)
    return sorted(p for p in pristine.parent.glob(f"{pristine.name}.tantivy*") if p.is_dir())


def run_folder(data: Path) -> Path:
    """This run's own folder under `data` (a copy of a 100k library is several GB): named by the
    process, so two runs at once never overwrite each other's copies, and removed when it ends."""
    work = data / f"run-{os.getpid()}"
    atexit.register(shutil.rmtree, work, ignore_errors=True)
    return work


def fresh_copy(pristine: Path, work: Path, index: list[Path] | None = None) -> Path:
    """A copy to serve and write into, so every run starts from the same library (and the same
    derived index, which then knows the copy as its library: same library id, same changes)."""
    work.mkdir(parents=True, exist_ok=True)
    target = work / "library.sqlite3"
    for suffix in ("", "-wal", "-shm"):
        Path(str(target) + suffix).unlink(missing_ok=True)
    shutil.copyfile(pristine, target)
    for old in work.glob("library.sqlite3.*"):
        if old.is_dir():
            shutil.rmtree(old)
    for folder in index or []:
        shutil.copytree(folder, work / folder.name.replace(pristine.name, target.name))
    return target


def write_config(work: Path, library: Path, engine: str = "fts5") -> Path:
    from jezero.server.auth import client_toml, key_digest

    path = work / "config.toml"
    path.write_text(f'[storage]\npath = "{library}"\n\n[search]\nengine = "{engine}"\n\n'
                    + client_toml("bench-all", key_digest(KEYS["all"]), ["*"]) + "\n"
                    + client_toml("bench-local", key_digest(KEYS["local"]), ["*-local"]))
    return path


def queries(seed: int = 5) -> list[tuple[str, dict]]:
    """A fixed mix like agents' searches: mostly 2-3 distinctive words, some common words, some
    fragments and phrases, a fifth with a project, source or since filter."""
    rng = random.Random(seed)
    words = [w for w in corpus.vocabulary() if len(w) >= 3]
    common, mid, rare = words[:60], words[150:3000], words[3000:]
    out = []
    for i in range(400):
        kind = rng.random()
        if kind < 0.35:
            q = " ".join(rng.sample(mid, rng.randint(2, 3)))
        elif kind < 0.55:
            q = " ".join(rng.sample(rare, rng.randint(1, 3)))
        elif kind < 0.80:
            q = " ".join(rng.sample(mid + rare, rng.randint(1, 2)) + rng.sample(common, 1))
        elif kind < 0.90:
            q = rng.choice([w for w in mid if len(w) >= 7])[:5]
        else:
            q = f'"{rng.choice(common)} {rng.choice(mid)}"'
        filters: dict = {}
        if i % 5 == 0:
            filters = rng.choice([{"project": rng.choice(corpus.PROJECTS[:6])},
                                  {"source": rng.choice(corpus.SOURCES[:4])},
                                  {"since": "2025-06-01"}])
        out.append((q, filters))
    return out


# -- processes ---------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(config: Path, port: int, options: list[str]) -> subprocess.Popen:
    """The server, once every one of its processes has answered /health (with --workers, each on
    a connection of its own, seen in /proc: the clients must not start while one is importing)."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, str(HERE / "server.py"), str(config), str(port), *options], env=env)
    workers = next((int(o.split("=", 1)[1]) for o in options if o.startswith("--workers=")), None)
    if workers is None and "--workers" in options:
        workers = int(options[options.index("--workers") + 1])
    answered: set[int] = set()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                s.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")  # kept open: whose is it?
                if b"200 OK" in s.recv(200):
                    if not workers or workers < 2:
                        return proc
                    answered.update(connections_by_process(proc.pid, port))
                    if len(answered) >= workers:
                        return proc
        except OSError:
            pass
        if proc.poll() is not None:
            raise SystemExit(f"server exited with {proc.returncode}")
        time.sleep(0.1)
    proc.kill()
    raise SystemExit("server did not start in 120 s")


def start_writer(library: Path, batch: int, interval: float, engine: str = "fts5") -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(HERE / "writer.py"), str(library), "--batch", str(batch),
                             "--interval", str(interval), "--engine", engine], stdout=subprocess.PIPE, text=True)


def stop(proc: subprocess.Popen) -> str:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        out, _ = proc.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
    return out or ""


# -- the clients -------------------------------------------------------------------------------


class RawClient:
    """One MCP client on one keep-alive HTTP/1.1 connection, speaking the streamable HTTP wire
    format: JSON-RPC POSTs to /mcp with the client key. `protocol` MODERN sends self-contained
    requests (no handshake); LEGACY does initialize first and sends the session id if given."""

    def __init__(self, port: int, key: str, protocol: str):
        self.port, self.key, self.protocol = port, key, protocol
        self.session: str | None = None
        self.next_id = 0
        self.empty = 0  # searches that found nothing (a time budget cut short, or no match)

    async def connect(self) -> None:
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        if self.protocol == LEGACY:
            status, headers, _ = await self.rpc("initialize", {
                "protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "load", "version": "0"}})
            assert status == 200, status
            self.session = headers.get("mcp-session-id")
            await self.post({"jsonrpc": "2.0", "method": "notifications/initialized"}, "notifications/initialized")

    async def close(self) -> None:
        self.writer.close()

    def meta(self) -> dict:
        return {"io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientInfo": {"name": "load", "version": "0"},
                "io.modelcontextprotocol/clientCapabilities": {}}

    async def rpc(self, method: str, params: dict, name: str | None = None):
        self.next_id += 1
        if self.protocol == MODERN:
            params = {**params, "_meta": self.meta()}
        return await self.post({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params},
                               method, name)

    async def post(self, message: dict, method: str, name: str | None = None):
        body = json.dumps(message).encode()
        head = ["POST /mcp HTTP/1.1", f"Host: 127.0.0.1:{self.port}", f"Authorization: Bearer {self.key}",
                "Accept: application/json, text/event-stream", "Content-Type: application/json",
                f"Content-Length: {len(body)}", f"MCP-Protocol-Version: {self.protocol}", f"Mcp-Method: {method}"]
        if name:
            head.append(f"Mcp-Name: {name}")
        if self.session:
            head.append(f"Mcp-Session-Id: {self.session}")
        self.writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)
        raw = await self.reader.readuntil(b"\r\n\r\n")
        lines = raw.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {k.strip().lower(): v.strip() for k, v in (ln.split(":", 1) for ln in lines[1:] if ":" in ln)}
        if headers.get("transfer-encoding") == "chunked":
            data = await self._chunked()
        else:
            data = await self.reader.readexactly(int(headers.get("content-length", 0)))
        if headers.get("content-type", "").startswith("text/event-stream"):
            data = b"\n".join(ln[5:].strip() for ln in data.split(b"\n") if ln.startswith(b"data:") and ln[5:].strip())
        return status, headers, data

    async def _chunked(self) -> bytes:
        out = b""
        while True:
            size = int((await self.reader.readuntil(b"\r\n")).strip().split(b";")[0], 16)
            if size == 0:
                await self.reader.readuntil(b"\r\n")
                return out
            out += await self.reader.readexactly(size)
            await self.reader.readexactly(2)

    async def call(self, tool: str, arguments: dict) -> bool:
        status, _, data = await self.rpc("tools/call", {"name": tool, "arguments": arguments}, tool)
        if status != 200:
            return False
        answer = json.loads(data.split(b"\n")[-1])
        if "result" not in answer or answer["result"].get("isError"):
            return False
        self.empty += not (answer["result"].get("structuredContent") or {}).get("items", True)
        return True


class SdkClient:
    """The same through the SDK's own Client (more CPU on the client side)."""

    def __init__(self, port: int, key: str, protocol: str):
        self.port, self.key, self.protocol = port, key, protocol
        self.empty = 0

    async def connect(self) -> None:
        from contextlib import AsyncExitStack

        import httpx2
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client

        self.stack = AsyncExitStack()
        http = await self.stack.enter_async_context(
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {self.key}"}, timeout=60))
        mode = "legacy" if self.protocol == LEGACY else "auto"
        self.client = await self.stack.enter_async_context(
            Client(streamable_http_client(f"http://127.0.0.1:{self.port}/mcp", http_client=http), mode=mode))

    async def close(self) -> None:
        await self.stack.aclose()

    async def call(self, tool: str, arguments: dict) -> bool:
        result = await self.client.call_tool(tool, arguments)
        self.empty += not (result.structured_content or {}).get("items", True)
        return not result.is_error


def arguments(tool: str, rng: random.Random, qs: list[tuple[str, dict]], items: int) -> dict:
    """The arguments of one call: a search from the query mix, or (to measure what the protocol
    costs around a trivial query) an item by id or a project's timeline."""
    if tool == "search":
        q, f = qs[rng.randrange(len(qs))]
        return {"query": q, **f}
    if tool == "get_item":
        return {"item_id": rng.randint(1, items)}
    return {"project": rng.choice(corpus.PROJECTS), "limit": 10}


async def run_load(port: int, n: int, seconds: float, warmup: float, rate: float | None, protocol: str,
                   sdk: bool, qs: list[tuple[str, dict]], tool: str = "search", items: int = 100_000) -> dict:
    cls = SdkClient if sdk else RawClient
    ports = port if isinstance(port, list) else [port]  # several servers: the clients round-robin over them
    # Half the clients read every source, half only "*-local" (the source filter path); get_item
    # uses the first kind only, so that every id exists for it.
    clients = [cls(ports[i % len(ports)], KEYS["all"] if i % 2 == 0 or tool == "get_item" else KEYS["local"], protocol)
               for i in range(n)]
    await asyncio.gather(*(c.connect() for c in clients))
    latencies: list[float] = []
    errors: list[str] = []
    not_sent = empty = 0
    t_start = time.perf_counter()
    t_measure = t_start + warmup
    t_end = t_measure + seconds

    async def one(i: int, client) -> None:
        nonlocal not_sent, empty
        rng = random.Random(i)
        interval = n / rate if rate else 0.0
        scheduled = t_start + (rng.random() * interval if rate else 0.0)
        while True:
            now = time.perf_counter()
            if rate:
                if scheduled > now:
                    await asyncio.sleep(scheduled - now)
                begin = scheduled  # charged from when it should have been sent
                scheduled += interval
            else:
                begin = now
            if begin >= t_end:
                return
            if rate and now >= t_end:
                # Behind schedule at the end: what is still due was never sent; count it.
                not_sent += max(0, int((t_end - max(begin, t_measure)) / interval) + 1)
                return
            args = arguments(tool, rng, qs, items)
            empty_before = client.empty
            try:
                ok = await client.call(tool, args)
                err = None if ok else f"tool error for {args!r}"
            except Exception as e:  # noqa: BLE001 - a benchmark counts every failure
                ok, err = False, f"{type(e).__name__}: {e}"
            done = time.perf_counter()
            if begin >= t_measure:
                latencies.append(done - begin)
                empty += client.empty - empty_before
                if err:
                    errors.append(err)

    await asyncio.gather(*(one(i, c) for i, c in enumerate(clients)))
    elapsed = time.perf_counter() - t_measure
    await asyncio.gather(*(c.close() for c in clients), return_exceptions=True)
    lat = sorted(latencies)

    def pct(p):
        return round(lat[min(len(lat) - 1, int(len(lat) * p / 100))] * 1e3, 1) if lat else None

    return {"tool": tool, "clients": n, "mode": f"open {rate:g}/s" if rate else "closed", "seconds": round(elapsed, 1),
            "requests": len(lat), "requests_per_second": round(len(lat) / elapsed, 1), "p50_ms": pct(50),
            "p90_ms": pct(90), "p99_ms": pct(99), "max_ms": round(lat[-1] * 1e3, 1) if lat else None,
            "mean_ms": round(statistics.mean(lat) * 1e3, 1) if lat else None, "errors": len(errors),
            "not_sent": not_sent, "empty_results": empty,
            "error_samples": errors[:3]}


def query_layer_alone(library: Path, qs: list[tuple[str, dict]], n: int = 200, engine: str = "fts5") -> dict:
    """The same searches straight through the query layer, one at a time, in this process, with no
    time budget: what a search costs without MCP, HTTP or concurrency around it."""
    from jezero.config import SearchConfig
    from jezero.query import search
    from jezero.server.library import Library

    options = SearchConfig(time_budget_ms=60_000, engine=engine)
    walls = []
    with Library(library).reader() as conn:
        for q, f in qs[:20]:
            search(conn, q, options=options, **f)
        cpu0 = time.process_time()
        for q, f in qs[:n]:
            t0 = time.perf_counter()
            search(conn, q, options=options, **f)
            walls.append(time.perf_counter() - t0)
        cpu = time.process_time() - cpu0
        # The same searches again: what the per-process caches (the planner's counts, the
        # current-first rule's per-state cache, parsed terms) save when agents repeat searches.
        cpu0 = time.process_time()
        for q, f in qs[:n]:
            search(conn, q, options=options, **f)
        again = time.process_time() - cpu0
    walls.sort()
    return {"searches": n, "cpu_ms_per_search": round(cpu / n * 1e3, 1),
            "cpu_ms_per_search_repeated": round(again / n * 1e3, 1),
            "p50_ms": round(walls[n // 2] * 1e3, 1), "p99_ms": round(walls[int(n * 0.99)] * 1e3, 1)}


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process and its children so far (Linux /proc)."""
    return sum(cpu_by_process(pid).values())


def cpu_by_process(pid: int) -> dict[int, float]:
    """User + system CPU so far of a process and of each of its children (Linux /proc): with
    --workers, the supervisor and each worker apart."""
    tick = os.sysconf("SC_CLK_TCK")
    pids = [pid]
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        pids += [int(c) for c in children]
    except OSError:
        pass
    cpu = {}
    for p in pids:
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            cpu[p] = (int(fields[11]) + int(fields[12])) / tick
        except (OSError, IndexError):
            pass
    return cpu


def connections_by_process(pid: int, port: int) -> dict[int, int]:
    """How many established connections on the server's side of `port` each of the server's
    processes holds (their socket inodes in /proc/PID/fd against /proc/net/tcp): how the clients'
    connections are spread over --workers."""
    established = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                if fields[3] == "01" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                    established.add(fields[9])
        except OSError:
            pass
    held = {}
    for p in cpu_by_process(pid):
        try:
            inodes = {os.readlink(fd)[8:-1] for fd in Path(f"/proc/{p}/fd").iterdir()
                      if os.readlink(fd).startswith("socket:[")}
        except OSError:
            continue
        if inodes & established:
            held[p] = len(inodes & established)
    return held


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=100_000)
    ap.add_argument("--data", type=Path, default=HERE / "data")
    ap.add_argument("--no-messages", action="store_true",
                    help="the library without messages (items alone), for comparison with the runs before")
    ap.add_argument("--clients", type=int, nargs="+", default=[10, 50])
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--warmup", type=float, default=3)
    ap.add_argument("--rate", type=float, default=None, help="open loop at this many searches per second overall")
    ap.add_argument("--server", action="append", default=None,
                    help='options for server.py, e.g. "--connections request" or "--workers 2"; repeat to compare')
    ap.add_argument("--legacy", action="store_true", help="protocol 2025-11-25 with an initialize handshake")
    ap.add_argument("--sdk", action="store_true", help="use the SDK's Client instead of the raw wire client")
    ap.add_argument("--tool", default="search", choices=["search", "get_item", "timeline"],
                    help="get_item or timeline: a trivial query, to see what the protocol alone costs")
    ap.add_argument("--engine", action="append", default=None, choices=["fts5", "tantivy"],
                    help="the search index engine ([search] engine); repeat to compare (default: fts5)")
    ap.add_argument("--no-writer", action="store_true")
    ap.add_argument("--writer-batch", type=int, default=5)
    ap.add_argument("--writer-interval", type=float, default=0.2)
    ap.add_argument("--skip-alone", action="store_true", help="do not time the query layer alone first")
    ap.add_argument("--json", type=Path, help="append the results here (one JSON object per line)")
    ap.add_argument("--profile", type=Path, default=None,
                    help="record the server with py-spy (on PATH, or $PY_SPY) during each run, into "
                         "PROFILE-<engine>-<clients>.txt (collapsed stacks, --nonblocking)")
    args = ap.parse_args()

    pristine = pristine_library(args.data, args.items, messages=not args.no_messages)
    qs = queries()
    protocol = LEGACY if args.legacy else MODERN
    results = []
    timed_alone = set()
    for engine, server_options, n in itertools.product(args.engine or ["fts5"], args.server or [""], args.clients):
        index = engine_index(pristine, engine)
        if args.tool == "search" and not args.skip_alone and engine not in timed_alone:
            timed_alone.add(engine)
            alone = query_layer_alone(fresh_copy(pristine, run_folder(args.data), index), qs, engine=engine)
            print(json.dumps({"engine": engine, "query_layer_alone": alone,
                              "load_average_1m": round(os.getloadavg()[0], 2)}), flush=True)
        work = run_folder(args.data)
        library = fresh_copy(pristine, work, index)
        config = write_config(work, library, engine)
        port = free_port()
        server = start_server(config, port, server_options.split())
        writer = None if args.no_writer else start_writer(library, args.writer_batch, args.writer_interval,
                                                           engine)
        spy = None
        if args.profile is not None:
            out = args.profile.with_name(f"{args.profile.stem}-{engine}-{n}{args.profile.suffix or '.txt'}")
            spy = subprocess.Popen([os.environ.get("PY_SPY") or shutil.which("py-spy") or "py-spy", "record",
                                    "-p", str(server.pid), "-d", str(int(args.warmup + args.seconds)), "-r", "50",
                                    "-f", "raw", "--nonblocking", "-o", str(out),
                                    # e.g. PY_SPY_OPTIONS=--gil: only what holds the GIL (Python's CPU)
                                    *os.environ.get("PY_SPY_OPTIONS", "").split()],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            spread = {}  # the clients' connections per server process, once the clients are all in
            sampler = threading.Timer(args.warmup + 1, lambda: spread.update(connections_by_process(server.pid, port)))
            sampler.start()
            cpu0, t0, own0 = cpu_by_process(server.pid), time.perf_counter(), time.process_time()
            result = asyncio.run(run_load(port, n, args.seconds, args.warmup, args.rate, protocol, args.sdk, qs,
                                         args.tool, args.items))
            elapsed = time.perf_counter() - t0
            cpu1 = cpu_by_process(server.pid)
            sampler.cancel()
            cpu = (sum(cpu1.values()) - sum(cpu0.values())) / elapsed
            # each process's share (the supervisor's, then each worker's), in cores
            process_cores = [round((cpu1[p] - cpu0.get(p, 0.0)) / elapsed, 2) for p in cpu1]
            clients_cpu = (time.process_time() - own0) / elapsed  # this process: the load generator
        finally:
            lines = stop(writer).strip().splitlines() if writer else []
            written = json.loads(lines[-1]) if lines else None
            if spy is not None:
                spy.wait(timeout=30)
            stop(server)
        rps = result["requests_per_second"]
        result.update({"engine": engine, "server": server_options or "default", "protocol": protocol,
                       "client": "sdk" if args.sdk else "raw", "server_cpu_cores": round(cpu, 2),
                       "server_process_cores": process_cores,
                       "connections_per_process": sorted(spread.values(), reverse=True),
                       # CPU per request: unlike throughput, hardly moved by other work on the machine
                       "server_cpu_ms_per_request": round(cpu / rps * 1e3, 2) if rps else None,
                       # the clients' own CPU per request (they share the machine's cores with the server)
                       "clients_cpu_ms_per_request": round(clients_cpu / rps * 1e3, 2) if rps else None,
                       "load_average_1m": round(os.getloadavg()[0], 2), "writer": written})
        results.append(result)
        print(json.dumps(result), flush=True)
        if args.json:
            with open(args.json, "a") as f:
                f.write(json.dumps(result) + "\n")
    print_table(results)


def print_table(results: list[dict]) -> None:
    cols = ("engine", "server", "tool", "clients", "mode", "requests_per_second", "p50_ms", "p99_ms", "max_ms", "errors",
            "empty_results", "server_cpu_cores", "server_process_cores", "connections_per_process",
            "server_cpu_ms_per_request", "clients_cpu_ms_per_request", "load_average_1m")
    print("\n" + " | ".join(cols))
    for r in results:
        print(" | ".join(str(r.get(c)) for c in cols))


if __name__ == "__main__":
    main()
