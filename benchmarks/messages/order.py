"""Message ids in storage order against ids that follow time (jezero/store/messages.py,
time_id): the same library both ways, side by side in one process. See README.md ("Message ids
that follow time").

    # a library as main's code (before migration 9) wrote it: ids numbered as stored
    PYTHONPATH=<a checkout of e85cee8> .venv/bin/python -c \
        "import sys; sys.path.insert(0, 'benchmarks/messages'); import sessions; sessions.build('/tmp/m10k.sqlite3', 10000)"
    .venv/bin/python benchmarks/messages/order.py /tmp/m10k.sqlite3 --engine tantivy --json out.json

The library given is copied; the copy is migrated by this code (migration 9: CPU and wall time
recorded), both get the derived indexes of `--engine`, then every query of the search
benchmark's set runs on both, interleaved (`repeat` times each, the median CPU time kept):
search with the items alone, fused, the messages lane alone, and recall.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench  # noqa: E402  (benchmarks/messages/bench.py)

from jezero.config import SearchConfig  # noqa: E402
from jezero.query import recall, search  # noqa: E402
from jezero.store import Store, open_readonly  # noqa: E402
from jezero.store import messages as message_rows  # noqa: E402
from jezero.store.migrations import current_version  # noqa: E402


def migrated_copy(before: Path, per_second: int) -> tuple[Path, dict]:
    after = before.with_name(f"{before.stem}-time{per_second}.sqlite3")
    for suffix in ("", "-wal", "-shm"):
        Path(str(after) + suffix).unlink(missing_ok=True)
    shutil.copy(before, after)
    c0, w0 = time.process_time(), time.perf_counter()
    with Store(after) as store:
        version = store.schema_version()
        store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return after, {"to_version": version, "cpu_s": round(time.process_time() - c0, 1),
                   "wall_s": round(time.perf_counter() - w0, 1)}


def measure(conns: dict, queries, repeat: int, engine: str) -> dict:
    o = SearchConfig(engine=engine)
    variants = {}
    for name, conn in conns.items():
        variants.update({
            f"items/{name}": lambda q, f, c=conn: search(c, q, lanes=("items",), options=o, **f),
            f"fused/{name}": lambda q, f, c=conn: search(c, q, options=o, **f),
            f"messages/{name}": lambda q, f, c=conn: search(c, q, lanes=("messages",), options=o, **f),
            f"recall/{name}": lambda q, f, c=conn: recall(c, q, projects=f.get("project"), source=f.get("source"),
                                                          since=f.get("since"), options=o),
        })
    for fn in variants.values():  # warm the page cache and the per-process caches once
        for _, q, f in queries[:20]:
            fn(q, f)
    times: dict[str, list[float]] = {v: [] for v in variants}
    for _, q, f in queries:
        runs = {v: [] for v in variants}
        for _ in range(repeat):
            for v, fn in variants.items():
                runs[v].append(bench.cpu_ms(lambda: fn(q, f)))
        for v in variants:
            times[v].append(statistics.median(runs[v]))
    out = {v: {"p50": round(bench.search_bench.pct(ms, 50), 2), "p99": round(bench.search_bench.pct(ms, 99), 2)}
           for v, ms in times.items()}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("before", type=Path, help="a library whose message ids are in storage order (schema 8)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--engine", default="fts5")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--ids-per-second", type=int, default=message_rows.IDS_PER_SECOND,
                    help="the ids' resolution to try (jezero.store.messages.IDS_PER_SECOND)")
    args = ap.parse_args()
    message_rows.IDS_PER_SECOND = args.ids_per_second
    probe = open_readonly(args.before)
    if current_version(probe) != 8:
        raise SystemExit(f"{args.before}: schema {current_version(probe)}, want a library main wrote (8)")
    probe.close()
    after, migration = migrated_copy(args.before, args.ids_per_second)
    report = {"migration": migration, "engine": args.engine, "ids_per_second": args.ids_per_second}
    for name, path in (("stored", args.before), ("time", after)):
        if args.engine != "fts5":
            report[f"{name}_index"] = bench.engine_indexes(path, args.engine)
    conns = {"stored": open_readonly(args.before), "time": open_readonly(after)}
    report["size"] = {name: bench.sizes(c) for name, c in conns.items()}
    queries = bench.search_bench.query_set(conns["stored"])
    report["queries"] = len(queries)
    report["latency_ms"] = measure(conns, queries, args.repeat, args.engine)
    # the same answers? (the libraries differ only in message ids; the caps read the newest)
    differ = {"fused": 0, "messages": 0}
    o = SearchConfig(engine=args.engine)
    for _, q, f in queries:
        for lane, lanes in (("fused", None), ("messages", ("messages",))):
            a, b = ([h["session_id"] for h in search(c, q, options=o, **({"lanes": lanes} if lanes else {}), **f)]
                    for c in conns.values())
            differ[lane] += a != b
    report["answers_differ"] = differ
    print(json.dumps(report, indent=1))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
