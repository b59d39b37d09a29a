"""The messages layer on PostgreSQL next to SQLite: the same library (benchmarks/messages'
sessions), copied into a throwaway PostgreSQL 15 with `jezero migrate-store`'s code, and the
search benchmark's queries asked of both: the items lane alone, the fused search, the messages
lane alone, and recall.

    nice -n 10 .venv/bin/python benchmarks/messages/postgres.py --sessions 2000 [--json out.json]

PostgreSQL works in its own process, so the time of a search is wall-clock time here (median of
`--repeat` runs per query, variants interleaved), on both backends alike; also the client's own
CPU (this process). A loaded machine moves both: read the ratios within one run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench  # noqa: E402  (benchmarks/messages/bench.py)

from jezero.query import recall, search  # noqa: E402
from jezero.store import open_readonly  # noqa: E402


def variants(conn) -> dict:
    return {
        "items": lambda q, f: search(conn, q, lanes=("items",), **f),
        "fused": lambda q, f: search(conn, q, **f),
        "messages": lambda q, f: search(conn, q, lanes=("messages",), **f),
        "recall": lambda q, f: recall(conn, q, projects=f.get("project"), source=f.get("source"),
                                      since=f.get("since")),
    }


def measure(conns: dict, queries, repeat: int) -> dict:
    runs = {(b, v): [] for b, c in conns.items() for v in variants(c)}
    fns = {(b, v): fn for b, c in conns.items() for v, fn in variants(c).items()}
    for fn in fns.values():  # warm caches once
        for _, q, f in queries[:20]:
            fn(q, f)
    for _, q, f in queries:
        per = {k: ([], []) for k in fns}
        for _ in range(repeat):
            for k, fn in fns.items():
                c0, w0 = time.thread_time(), time.perf_counter()
                fn(q, f)
                per[k][0].append((time.perf_counter() - w0) * 1000)
                per[k][1].append((time.thread_time() - c0) * 1000)
        for k in fns:
            runs[k].append((statistics.median(per[k][0]), statistics.median(per[k][1])))
    out: dict = {}
    for (b, v), values in runs.items():
        wall = [w for w, _ in values]
        cpu = [c for _, c in values]
        out.setdefault(b, {})[v] = {"wall_p50": round(bench.search_bench.pct(wall, 50), 2),
                                    "wall_p99": round(bench.search_bench.pct(wall, 99), 2),
                                    "client_cpu_p50": round(bench.search_bench.pct(cpu, 50), 2)}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, default=2000)
    ap.add_argument("--data", type=Path, default=HERE / "data")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    from jezero_store_postgres import connect_reader, migrate
    from jezero_store_postgres.local import LocalServer

    path, _ = bench.library(args.data, args.sessions, "word", False)
    with tempfile.TemporaryDirectory(prefix="jezero-messages-pg-"), LocalServer() as pg:
        url = pg.create_database("messages")
        t0 = time.perf_counter()
        report = migrate.to_postgres(path, url)
        copy_s = time.perf_counter() - t0
        assert report.verified, report.differing()
        sqlite, pgconn = open_readonly(path), connect_reader(url)
        queries = bench.search_bench.query_set(sqlite)
        size = pgconn.execute("SELECT pg_total_relation_size('messages_search'), pg_total_relation_size('messages'),"
                              " pg_total_relation_size('message_texts')").fetchone()
        out = {"sessions": args.sessions, "queries": len(queries), "copy_seconds": round(copy_s, 1),
               "messages": pgconn.execute("SELECT count(*) FROM messages").fetchone()[0],
               "messages_search_mb": round(size[0] / 1e6, 1), "messages_rows_mb": round((size[1] + size[2]) / 1e6, 1),
               "latency_ms": measure({"sqlite": sqlite, "postgres": pgconn}, queries, args.repeat)}
        sqlite.close()
        pgconn.close()
    print(json.dumps(out, indent=1))
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
