"""Two source trees' query layers on the same library, alternating search by search: one process
per tree (its own `jezero` and `jezero_index_tantivy` first on sys.path), the load benchmark's
200 searches, each the median of 3 runs of the fused search and of the items lane alone, CPU ms
of the process's thread, nothing kept between searches (server.nothing_kept), the first of the
two trees taking turns. A busy machine slows both alike, where runs one after the other met
different loads.

    git worktree add --detach ../main-tree main
    nice -n 10 .venv/bin/python benchmarks/load/two_trees.py ../main-tree . --items 100000 \\
        --data /work/main/benchmarks/load/data --rounds 2

The library is read in place, read-only (no copy: nothing writes), as messages_cost.py does.
`--keys`: each search with both client keys' sources, as bench.py's clients send them (`*`, and
`*-local`: the source filter path), where the default reads every source. Each tree also prints
a digest of its answers' item ids, in order, which two trees with the same answers share.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path


def worker(tree: Path, items: int, data: Path, engine: str) -> None:
    sys.path[:0] = [str(tree), str(tree / "jezero_index_tantivy" / "src"), str(tree / "benchmarks" / "load"),
                    str(tree / "benchmarks" / "search")]
    import bench
    import server

    server.nothing_kept()
    import jezero
    from jezero.config import SearchConfig
    from jezero.query import search
    from jezero.server.library import Library
    from jezero.server.process import tune_gc

    assert Path(jezero.__file__).resolve().is_relative_to(tree.resolve()), jezero.__file__
    tune_gc()
    conn = Library(bench.pristine_library(data, items)).reader().__enter__()
    options = SearchConfig(time_budget_ms=60_000, engine=engine)
    qs = bench.queries()[:200]
    for q, f in qs[:20]:
        search(conn, q, options=options, **f)
        search(conn, q, options=options, lanes=("items",), **f)
    print("ready", flush=True)
    digest = hashlib.sha256()
    sources = {"all": ["*"], "local": ["*-local"]}  # the sources of bench.KEYS' clients
    for line in sys.stdin:
        if line.strip() == "digest":
            print(digest.hexdigest()[:16], flush=True)
            continue
        i, lanes, key = line.split()
        q, f = qs[int(i)]
        runs = []
        for _ in range(3):
            t = time.thread_time()
            hits = search(conn, q, options=options, allowed=sources[key],
                          **({"lanes": ("items",)} if lanes == "items" else {}), **f)
            runs.append((time.thread_time() - t) * 1e3)
        digest.update(json.dumps([lanes, [h["id"] for h in hits]]).encode())
        print(statistics.median(runs), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trees", type=Path, nargs=2, help="the two source trees (e.g. main's worktree and this one)")
    ap.add_argument("--items", type=int, default=100_000)
    ap.add_argument("--data", type=Path, default=Path(__file__).resolve().parent / "data")
    ap.add_argument("--engine", default="tantivy", choices=["fts5", "tantivy"])
    ap.add_argument("--rounds", type=int, default=1, help="times through the 200 searches")
    ap.add_argument("--keys", action="store_true", help="each search with both client keys (`*`, `*-local`)")
    ap.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args.worker, args.items, args.data, args.engine)
    procs = [subprocess.Popen([sys.executable, __file__, str(args.trees[0]), str(args.trees[1]), "--worker", str(t),
                               "--items", str(args.items), "--data", str(args.data), "--engine", args.engine],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) for t in args.trees]
    try:
        for p in procs:
            if p.stdout.readline().strip() != "ready":
                raise SystemExit("a worker did not start")
        times = {(k, lanes): [] for k in range(2) for lanes in ("fused", "items")}
        loads = []
        for r in range(args.rounds):
            for i in range(200):
                order = (0, 1) if (i + r) % 2 == 0 else (1, 0)
                for key in ("all", "local") if args.keys else ("all",):
                    for lanes in ("fused", "items"):
                        for k in order:
                            procs[k].stdin.write(f"{i} {lanes} {key}\n")
                            procs[k].stdin.flush()
                            times[(k, lanes)].append(float(procs[k].stdout.readline()))
            loads.append(round(os.getloadavg()[0], 2))
        digests = []
        for p in procs:
            p.stdin.write("digest\n")
            p.stdin.flush()
            digests.append(p.stdout.readline().strip())
    finally:
        for p in procs:
            p.stdin.close()
            p.wait()
    for (k, lanes), t in times.items():
        t = sorted(t)
        print(json.dumps({"tree": str(args.trees[k]), "lanes": lanes, "items": args.items, "engine": args.engine,
                          "searches": len(t), "mean_cpu_ms": round(statistics.mean(t), 2),
                          "p50_cpu_ms": round(t[len(t) // 2], 2), "p99_cpu_ms": round(t[int(len(t) * 0.99)], 2),
                          "answers": digests[k], "load_average_1m": loads}), flush=True)


if __name__ == "__main__":
    main()
