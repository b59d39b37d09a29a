"""Two source trees' servers under load at the same time, for a CPU per search that a shared
machine's load moves alike for both: each tree's server.py (`--workers 2` unless told) on a fresh
copy of the pristine library, each with its own clients (half of them with each key, as bench.py's),
all the clients in this process; the server's CPU ms per search from /proc. Runs one after the
other met loads that moved the figure by half (benchmarks/load/README.md, 2026-12-03, `load8`).

    .venv/bin/python benchmarks/load/pair_servers.py /tmp/main-tree . --items 20000 --data DIR --rounds 3

Each tree's code is its own (PYTHONPATH: the tree and its jezero_index_tantivy); the clients and
the library are this tree's bench.py's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench  # noqa: E402


def start(tree: Path, config: Path, port: int, options: list[str]) -> subprocess.Popen:
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": f"{tree}:{tree / 'jezero_index_tantivy' / 'src'}"}
    return subprocess.Popen([sys.executable, str(tree / "benchmarks" / "load" / "server.py"), str(config), str(port),
                             *options], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def wait_ready(proc: subprocess.Popen, port: int, workers: int) -> None:
    """Every worker of the server has answered /health (bench.start_server's check)."""
    seen: set[int] = set()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                s.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                if b"200 OK" in s.recv(200):
                    seen.update(bench.connections_by_process(proc.pid, port))
                    if len(seen) >= workers:
                        return
        except OSError:
            pass
        if proc.poll() is not None:
            raise SystemExit(f"a server exited with {proc.returncode}")
        time.sleep(0.1)
    raise SystemExit("a server did not start in time")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trees", type=Path, nargs=2)
    ap.add_argument("--items", type=int, default=20_000)
    ap.add_argument("--data", type=Path, default=HERE / "data")
    ap.add_argument("--engine", default="tantivy", choices=["fts5", "tantivy"])
    ap.add_argument("--clients", type=int, default=26, help="clients per server")
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--warmup", type=float, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    pristine = bench.pristine_library(args.data, args.items)
    index = bench.engine_index(pristine, args.engine)
    qs = bench.queries()
    options = [f"--workers={args.workers}"]
    for r in range(args.rounds):
        work = bench.run_folder(args.data)
        procs, ports = [], []
        try:
            for k, tree in enumerate(args.trees):
                library = bench.fresh_copy(pristine, work / str(k), index)
                config = bench.write_config(work / str(k), library, args.engine)
                port = bench.free_port()
                procs.append(start(tree.resolve(), config, port, options))
                ports.append(port)
            for proc, port in zip(procs, ports):
                wait_ready(proc, port, args.workers)
            cpu0, t0 = [bench.cpu_seconds(p.pid) for p in procs], time.perf_counter()

            async def both():
                return await asyncio.gather(*(bench.run_load(port, args.clients, args.seconds, args.warmup, None,
                                                             bench.MODERN, False, qs, "search", args.items)
                                              for port in ports))

            results = asyncio.run(both())
            elapsed = time.perf_counter() - t0
            cpu1 = [bench.cpu_seconds(p.pid) for p in procs]
        finally:
            for proc in procs:
                bench.stop(proc)
        out = {"round": r, "load_average_1m": round(os.getloadavg()[0], 2)}
        for tree, result, a, b in zip(args.trees, results, cpu0, cpu1):
            rps = result["requests_per_second"]
            out[str(tree)] = {"searches_per_second": rps, "server_cpu_cores": round((b - a) / elapsed, 2),
                              "server_cpu_ms_per_request": round((b - a) / elapsed / rps * 1e3, 2) if rps else None,
                              "errors": result.get("errors")}
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
