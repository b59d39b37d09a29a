"""The load benchmark's 400 searches through the query layer alone (no server), with each of the
two keys (every source, `*-local`), with the tantivy engine's query shape before 2026-12-01
(every held word also as a substring, a key's sources as a term set) and now, interleaved per
search in one process: CPU ms per search and how many top 10s changed.

    .venv/bin/python benchmarks/load/query_shape.py            # the pristine 100k library of bench.py
    .venv/bin/python benchmarks/load/query_shape.py --repeat 5 --json out.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench  # noqa: E402

from jezero.config import SearchConfig  # noqa: E402
from jezero.query import search  # noqa: E402
from jezero.server.library import Library  # noqa: E402
from jezero.store import engines  # noqa: E402

KEYS = {"all": ("*",), "local": ("*-local",)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=HERE / "data")
    ap.add_argument("--items", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    import jezero_index_tantivy.index as tantivy_index

    pristine = bench.pristine_library(args.data, args.items)
    bench.engine_index(pristine, "tantivy")
    engine = engines.engine_for("tantivy", str(pristine))
    shapes = {"before": (None, 0), "now": (engine.substring_word_rows, tantivy_index.SOURCE_TERMS_MAX)}
    options = SearchConfig(time_budget_ms=60_000, engine="tantivy")
    qs = bench.queries()
    cpu = {s: [] for s in shapes}
    changed = {k: 0 for k in KEYS}
    with Library(pristine).reader() as conn:
        def run(shape, q, f, allowed):
            engine.substring_word_rows, tantivy_index.SOURCE_TERMS_MAX = shapes[shape]
            return [h["id"] for h in search(conn, q, options=options, allowed=allowed, **f)]

        for key, allowed in KEYS.items():
            for q, f in qs:
                tops = {s: run(s, q, f, allowed) for s in shapes}  # also builds each shape's term queries
                changed[key] += tops["before"][:10] != tops["now"][:10]
                for shape in shapes:
                    times = []
                    for _ in range(args.repeat):
                        t0 = time.process_time()
                        run(shape, q, f, allowed)
                        times.append(time.process_time() - t0)
                    cpu[shape].append(statistics.median(times) * 1e3)
    engine.substring_word_rows, tantivy_index.SOURCE_TERMS_MAX = shapes["now"]
    n = len(cpu["now"])
    report = {"searches": n, "repeat": args.repeat,
              "cpu_ms_per_search": {s: round(statistics.mean(v), 2) for s, v in cpu.items()},
              "p50_ms": {s: round(bench_pct(v, 50), 2) for s, v in cpu.items()},
              "p99_ms": {s: round(bench_pct(v, 99), 2) for s, v in cpu.items()},
              "top10_changed": changed, "load": " ".join(f"{x:.1f}" for x in __import__("os").getloadavg())}
    print(json.dumps(report, indent=1))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))


def bench_pct(values: list[float], p: float) -> float:
    v = sorted(values)
    return v[min(len(v) - 1, int(len(v) * p / 100))]


if __name__ == "__main__":
    main()
