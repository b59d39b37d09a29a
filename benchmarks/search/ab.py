"""Two versions of the code on the same library, interleaved per query: engines.py's tantivy
search timed in two worker processes, one per source tree, that take turns.

    .venv/bin/python benchmarks/search/ab.py --items 100000 --data DIR --a /tmp/main-copy --b .

Each tree is a checkout of the repository (`git archive main | tar -x -C DIR` gives one); a
worker imports the `jezero` packages from its tree (PYTHONPATH before the editable installs),
the query set and the library from bench.py. The library and its tantivy index must exist
(`engines.py --items N --data DIR` builds both); the workers only read them. Each worker first
runs every query once (warm, like engines.py), then for each query the two run it in turn,
`--repeat` times each (the order swapped every run), CPU ms of the calling thread; the figures
are medians per query, as engines.py gives them. The top 10 of each query is compared: the
report says on how many queries the two versions' answers differ (ids and order). With
`--fresh-texts`, each timed run starts without the items' folded texts the tantivy re-score
keeps (a version without them is unaffected). With `--data-b`, the second version reads its own
copy of the library (`cp -a` of --data's, its index rebuilt in another layout).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
TREE_PATHS = ("", "jezero_index_tantivy/src")  # where a tree's jezero packages are


def worker(args) -> None:
    sys.path.insert(0, str(HERE))
    import bench

    from jezero.config import SearchConfig
    from jezero.query import search
    from jezero.query.common import parse_stored
    from jezero.store import engines, open_readonly

    path = args.data / f"lib-{args.items}.sqlite3"
    conn = open_readonly(path)
    now = parse_stored(conn.execute("SELECT max(occurred_at) FROM items").fetchone()[0]) + timedelta(days=1)
    queries = bench.query_set(conn, vocab=args.vocab)
    options = SearchConfig(time_budget_ms=60_000, engine=args.engine)

    def run(i: int) -> list[dict]:
        _, q, f = queries[i]
        return search(conn, q, limit=10, options=options, now=now, explain=False, **f)

    def forget_texts() -> None:
        # --fresh-texts: the items' folded texts that the tantivy re-score keeps (since
        # 2026-12-03, `tantivy8`) dropped before each timed run, as on a first sight of the items
        engine = engines.engine_for(args.engine, str(path))
        if hasattr(engine, "_folded_texts"):
            engine._folded_texts = (None, {})

    for i in range(len(queries)):
        run(i)
    out = sys.stdout
    out.write(json.dumps({"queries": [[c, q, f] for c, q, f in queries]}) + "\n")
    out.flush()
    for line in sys.stdin:
        i = int(line)
        if args.fresh_texts:
            forget_texts()
        c0 = time.thread_time()
        hits = run(i)
        ms = (time.thread_time() - c0) * 1e3
        out.write(json.dumps({"ms": ms, "top": [h["id"] for h in hits]}) + "\n")
        out.flush()


class Worker:
    def __init__(self, tree: Path, args, data: Path):
        env = dict(os.environ, PYTHONHASHSEED="0",
                   PYTHONPATH=os.pathsep.join(str(tree / p) for p in TREE_PATHS))
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--worker", "--items", str(args.items), "--data", str(data),
             "--vocab", args.vocab, "--engine", args.engine] + (["--fresh-texts"] if args.fresh_texts else []),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        self.queries = json.loads(self.proc.stdout.readline())["queries"]

    def run(self, i: int) -> dict:
        self.proc.stdin.write(f"{i}\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=10_000)
    ap.add_argument("--data", type=Path, default=HERE / "data")
    ap.add_argument("--vocab", choices=("dev", "random"), default="dev")
    ap.add_argument("--engine", default="tantivy")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--a", type=Path, help="source tree of the first version (`before`)")
    ap.add_argument("--b", type=Path, help="source tree of the second version (`after`)")
    ap.add_argument("--data-b", type=Path,
                    help="the second version's library folder (a copy of --data's library with another "
                         "index layout); default --data")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--fresh-texts", action="store_true",
                    help="drop the folded texts the tantivy re-score keeps before each timed run (a first sight)")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args)
        return
    sys.path.insert(0, str(HERE))
    from bench import pct  # (engines.py's percentiles)

    a, b = Worker(args.a.resolve(), args, args.data), Worker(args.b.resolve(), args, args.data_b or args.data)
    assert a.queries == b.queries, "the two trees' query sets differ"
    load = [os.getloadavg()[0]]
    rows = []
    for i, (cls, q, f) in enumerate(a.queries):
        times = {"a": [], "b": []}
        tops = {}
        for rep in range(args.repeat):
            for name, w in ((("a", a), ("b", b)) if rep % 2 == 0 else (("b", b), ("a", a))):
                r = w.run(i)
                times[name].append(r["ms"])
                tops[name] = r["top"]
        rows.append({"class": cls, "query": q, "filters": f, "a_ms": statistics.median(times["a"]),
                     "b_ms": statistics.median(times["b"]), "same_top10": tops["a"] == tops["b"],
                     "a_top": tops["a"], "b_top": tops["b"]})
        if i % 50 == 49:
            load.append(os.getloadavg()[0])
    a.close()
    b.close()
    report = {"items": args.items, "a": str(args.a), "b": str(args.b), "data": str(args.data),
              "data_b": str(args.data_b or args.data), "repeat": args.repeat,
              "load_1min": [round(x, 2) for x in load], "queries": rows}
    classes = list(dict.fromkeys(r["class"] for r in rows))
    libraries = f"; b's library in {args.data_b}" if args.data_b else ""
    print(f"{args.items} items, {args.engine}; a = {args.a}, b = {args.b}{libraries}; load average (1 min) "
          f"{min(load):.1f}-{max(load):.1f}; CPU ms, median of {args.repeat} per query")
    print()
    print("| class | n | a p50 | p95 | p99 | b p50 | p95 | p99 | b/a (median) | same top 10 |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for cls in (*classes, "all"):
        rs = [r for r in rows if cls == "all" or r["class"] == cls]
        ta, tb = [r["a_ms"] for r in rs], [r["b_ms"] for r in rs]
        ratio = statistics.median(r["b_ms"] / r["a_ms"] for r in rs if r["a_ms"] > 0)
        name = f"**{cls}**" if cls == "all" else cls
        print(f"| {name} | {len(rs)} | {pct(ta, 50):.2f} | {pct(ta, 95):.2f} | {pct(ta, 99):.2f} "
              f"| {pct(tb, 50):.2f} | {pct(tb, 95):.2f} | {pct(tb, 99):.2f} | {ratio:.3f} "
              f"| {sum(r['same_top10'] for r in rs)}/{len(rs)} |")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
