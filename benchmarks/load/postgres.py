"""Several `jezero serve` processes in front of one PostgreSQL library, while a connector writes.

    nice -n 10 .venv/bin/python benchmarks/load/postgres.py --items 20000 --servers 1 2 4 --clients 16

Starts a throwaway PostgreSQL server (jezero_store_postgres.local, the tests' server), fills a
library with `--items` items from benchmarks/search/corpus.py through the backend's own writer,
then for each number of servers K: K separate server processes (server.py, the real HTTP app,
each its own process with the default readers and connections, all reading the same database
with `[storage] backend = "postgres"`), a writer process committing 5 items every 0.2 s through
PostgresStore.write (as `jezero run` would), and N closed-loop MCP clients spread over the K
ports round-robin (what a load balancer does). The clients and queries are bench.py's.
Records searches/s, p50/p99 and errors per K, and the CPU the database, the servers and the
writer used over the run (in cores: CPU seconds per second of the run), since on one machine they
share the cores; the same figures appear in README.md.

    nice -n 10 .venv/bin/python benchmarks/load/postgres.py --items 20000 --split

--split instead times one search at a time in this process (no servers, no writer): the CPU the
database process spends per search (what a busy machine does not inflate), this process's CPU,
and the wall time split between the ranking statement (jezero_store_postgres.search) and the
other statements (hit fields, term lookups).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "search"))
sys.path.insert(0, str(HERE.parent.parent))
sys.path.insert(0, str(HERE))  # first: this folder's bench.py, not benchmarks/search/bench.py

import bench  # noqa: E402
import corpus  # noqa: E402
import statistics  # noqa: E402

URL_ENV = "JEZERO_LOAD_DATABASE_URL"


def fill(url: str, n: int) -> float:
    from jezero_store_postgres.store import PostgresStore

    t0 = time.perf_counter()
    gen = corpus.Corpus(1)
    with PostgresStore(url, "trigram remove_diacritics 1") as store:
        for start in range(0, n, 1000):
            store.write([gen.item(i, n) for i in range(start, min(start + 1000, n))])
        store.tidy_index(n)
    return time.perf_counter() - t0


def write_config(work: Path) -> Path:
    from jezero.server.auth import client_toml, key_digest

    path = work / "config.toml"
    path.write_text(f'[storage]\nbackend = "postgres"\nurl_env = "{URL_ENV}"\n\n'
                    + client_toml("bench-all", key_digest(bench.KEYS["all"]), ["*"]) + "\n"
                    + client_toml("bench-local", key_digest(bench.KEYS["local"]), ["*-local"]))
    return path


def writer_main(url: str, batch: int, interval: float) -> None:
    """The stand-in connector (run as a subprocess: `postgres.py --write URL`)."""
    from jezero_store_postgres.store import PostgresStore

    stop = False

    def on_signal(*_):
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, on_signal)
    gen, n, written, started = corpus.Corpus(99), 0, 0, time.monotonic()
    with PostgresStore(url, "trigram remove_diacritics 1") as store:
        while not stop:
            items = []
            for _ in range(batch):
                it = gen.item(n, n + 1)
                n += 1
                it.uid, it.session_id, it.content_hash = f"load-writer:{n}", f"load-{n}", f"load-{n}"
                items.append(it)
            store.write(items, connector="load-writer", cursor={"n": n})
            written += len(items)
            time.sleep(interval)
    elapsed = time.monotonic() - started
    print(json.dumps({"items_written": written, "items_per_second": round(written / elapsed, 1)}), flush=True)


def split(url: str, qs, ranker=None) -> dict:
    """One search at a time: where its time goes (see the module docstring). `ranker`, a class
    like jezero_store_postgres.search.Ranker, replaces the reader's (to compare two versions on
    the same library)."""
    from jezero.query.search import search
    from jezero_store_postgres import connect_reader

    conn = connect_reader(url)
    if ranker is not None:
        conn.ranker = ranker(conn)
    backend = conn.pg.info.backend_pid  # the database process serving this connection
    spent = {"ranking statement": 0.0, "other statements": 0.0}
    execute = conn.execute

    def timed(sql, params=None):
        t0 = time.perf_counter()
        try:
            return execute(sql, params)
        finally:
            spent["ranking statement" if "WITH hits AS" in sql else "other statements"] += time.perf_counter() - t0

    conn.execute = timed
    for q, filters in qs[:40]:  # warm the caches as a running server's are
        search(conn, q, limit=10, **filters)
    spent = dict.fromkeys(spent, 0.0)
    walls = []
    cpu0, db0 = time.process_time(), bench.cpu_seconds(backend)
    for q, filters in qs:
        t0 = time.perf_counter()
        search(conn, q, limit=10, **filters)
        walls.append(time.perf_counter() - t0)
    cpu, db = time.process_time() - cpu0, bench.cpu_seconds(backend) - db0
    conn.close()
    n = len(qs)
    walls.sort()
    out = {"searches": n, "database_cpu_ms": round(db / n * 1e3, 2), "python_cpu_ms": round(cpu / n * 1e3, 2),
           "wall_ms_mean": round(sum(walls) / n * 1e3, 2), "wall_ms_p50": round(walls[n // 2] * 1e3, 2),
           "wall_ms_p99": round(walls[int(n * 0.99)] * 1e3, 2), "load_average_1m": round(os.getloadavg()[0], 2)}
    out.update({f"{k}_ms": round(v / n * 1e3, 2) for k, v in spent.items()})
    return out


def postmaster(pg) -> int:
    return int((pg.data / "postmaster.pid").read_text().split()[0])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=20_000)
    ap.add_argument("--servers", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--seconds", type=float, default=15)
    ap.add_argument("--warmup", type=float, default=3)
    ap.add_argument("--json", type=Path, help="append the results here (one JSON object per line)")
    ap.add_argument("--split", action="store_true", help="time single searches instead of the load runs")
    ap.add_argument("--write", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.write:
        writer_main(args.write, 5, 0.2)
        return

    from jezero_store_postgres.local import LocalServer

    work = HERE / "data" / "postgres"
    work.mkdir(parents=True, exist_ok=True)
    qs = bench.queries()
    results = []
    with LocalServer() as pg:
        url = pg.create_database("load")
        os.environ[URL_ENV] = url
        print(f"filled {args.items} items in {fill(url, args.items):.0f} s", file=sys.stderr)
        if args.split:
            result = split(url, qs)
            print(json.dumps(result), flush=True)
            if args.json:
                with open(args.json, "a") as f:
                    f.write(json.dumps({"split": result, "items": args.items}) + "\n")
            return
        config = write_config(work)
        db_pid = postmaster(pg)
        for k in args.servers:
            ports = [bench.free_port() for _ in range(k)]
            servers = [bench.start_server(config, port, []) for port in ports]
            writer = subprocess.Popen([sys.executable, __file__, "--write", url], stdout=subprocess.PIPE, text=True)
            try:
                before = (bench.cpu_seconds(db_pid), sum(bench.cpu_seconds(s.pid) for s in servers),
                          bench.cpu_seconds(writer.pid), time.perf_counter())
                result = asyncio.run(bench.run_load(ports, args.clients, args.seconds, args.warmup, None,
                                                    bench.MODERN, False, qs, "search", args.items))
                wall = time.perf_counter() - before[3]
                result["cpu_cores"] = {
                    "database": round((bench.cpu_seconds(db_pid) - before[0]) / wall, 2),
                    "servers": round((sum(bench.cpu_seconds(s.pid) for s in servers) - before[1]) / wall, 2),
                    "writer": round((bench.cpu_seconds(writer.pid) - before[2]) / wall, 2)}
            finally:
                writer.send_signal(signal.SIGTERM)
                out, _ = writer.communicate(timeout=30)
                for s in servers:
                    bench.stop(s)
            result.update({"backend": "postgres", "servers": k, "items": args.items,
                           "writer": json.loads(out.strip().splitlines()[-1]) if out.strip() else None,
                           "load_average_1m": round(os.getloadavg()[0], 2)})
            result.pop("error_samples", None) if not result["errors"] else None
            results.append(result)
            print(json.dumps(result), flush=True)
            if args.json:
                with open(args.json, "a") as f:
                    f.write(json.dumps(result) + "\n")
    print("\n| servers | clients | searches/s | p50 ms | p99 ms | errors | items written/s | CPU cores db / servers / writer | load average |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in results:
        c = r["cpu_cores"]
        print(f"| {r['servers']} | {r['clients']} | {r['requests_per_second']} | {r['p50_ms']} | {r['p99_ms']} | "
              f"{r['errors']} | {(r['writer'] or {}).get('items_per_second')} | {c['database']} / {c['servers']} / "
              f"{c['writer']} | {r['load_average_1m']} |")


if __name__ == "__main__":
    main()
