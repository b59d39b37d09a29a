"""Search index engines side by side: FTS5 (built in) and tantivy (jezero-index-tantivy) on the
same library and the same query set as bench.py. See README.md, "Index engines".

    .venv/bin/python benchmarks/search/engines.py --items 10000
    .venv/bin/python benchmarks/search/engines.py --items 100000 --json out.json

Builds (or reuses) the library like bench.py, rebuilds the tantivy index from it (timed), then
times `search()` end to end with each engine, interleaved, per query: CPU ms of the calling
thread (SQLite and tantivy's search both run in it; tantivy's build uses its own threads, so its
build time is given as wall and process CPU).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
from datetime import timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench  # noqa: E402

from jezero.config import SearchConfig  # noqa: E402
from jezero.query import search  # noqa: E402
from jezero.query.common import parse_stored  # noqa: E402
from jezero.store import engines, open_readonly  # noqa: E402

ENGINES = ("fts5", "tantivy")
# "tantivy" with its common-word pairs turned off (the same index): what the pairs gain.
NO_PAIRS = "tantivy-no-pairs"
# "tantivy" with the query shape before 2026-12-01 (the same index): every held word also as a
# substring (up to SUBSTRING_MAX_ROWS), a key's sources as a term set.
BEFORE = "tantivy-before"


def folder_mb(path: Path) -> float:
    return round(sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 1e6, 1)


def build_tantivy(path: Path, rebuild: bool) -> dict:
    from jezero_index_tantivy import folder_for

    folder = folder_for(path)
    if rebuild and folder.exists():
        shutil.rmtree(folder)
    engines.forget()
    w0, c0 = time.perf_counter(), time.process_time()
    written = engines.sync("tantivy", path, rebuild=rebuild)
    return {"written": written, "wall_s": round(time.perf_counter() - w0, 1),
            "cpu_s": round(time.process_time() - c0, 1), "index_mb": folder_mb(folder)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=10_000)
    ap.add_argument("--data", type=Path, default=HERE / "data")
    ap.add_argument("--vocab", choices=("dev", "random"), default="dev")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--keep-index", action="store_true", help="catch the tantivy index up instead of rebuilding it")
    ap.add_argument("--pairs", action="store_true", help="also time tantivy without its common-word pairs")
    ap.add_argument("--before", action="store_true",
                    help="also time tantivy with the query shape before 2026-12-01 "
                         "(substrings of every word, source term sets)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    path, meta = bench.library(args.data, args.items, False, args.vocab)
    build = build_tantivy(path, rebuild=not args.keep_index)
    conn = open_readonly(path)
    now = parse_stored(conn.execute("SELECT max(occurred_at) FROM items").fetchone()[0]) + timedelta(days=1)
    queries = bench.query_set(conn, vocab=args.vocab)
    variants = ENGINES + ((NO_PAIRS,) if args.pairs else ()) + ((BEFORE,) if args.before else ())
    options = {e: SearchConfig(time_budget_ms=60_000, engine=e) for e in ENGINES}
    options[NO_PAIRS] = options[BEFORE] = options["tantivy"]
    tantivy_engine = engines.engine_for("tantivy", path)
    import jezero_index_tantivy.index as tantivy_index

    now_shape = (tantivy_engine.substring_word_rows, tantivy_index.SOURCE_TERMS_MAX)

    def run(engine, q, f):
        tantivy_engine.use_pairs = engine != NO_PAIRS
        shape = (None, 0) if engine == BEFORE else now_shape
        tantivy_engine.substring_word_rows, tantivy_index.SOURCE_TERMS_MAX = shape
        return search(conn, q, limit=10, options=options[engine], now=now, explain=False, **f)

    for _, q, f in queries:  # warm every variant
        for e in variants:
            run(e, q, f)
    results = []
    for cls, q, f in queries:
        times = {e: [] for e in variants}
        for _ in range(args.repeat):
            for e in variants:
                times[e].append(bench.timed(run, e, q, f)[1] * 1e3)
        tops = {e: [h["id"] for h in run(e, q, f)] for e in variants}
        overlap = len(set(tops["fts5"]) & set(tops["tantivy"]))
        if args.pairs:
            assert tops[NO_PAIRS] == tops["tantivy"], f"the pairs changed the answer to {q!r}"
        changed = ({"before_same_top10": tops[BEFORE] == tops["tantivy"],
                    "before_overlap": len(set(tops[BEFORE]) & set(tops["tantivy"]))} if args.before else {})
        results.append({"class": cls, "query": q, "filters": f, **changed,
                        **{f"{e}_ms": statistics.median(times[e]) for e in variants},
                        "hits": {e: len(tops[e]) for e in ENGINES}, "overlap": overlap,
                        "same_first": bool(tops["fts5"]) and tops["fts5"][:1] == tops["tantivy"][:1]})
    size = bench.index_size(conn)
    report = {"items": args.items, "vocab": args.vocab, "repeat": args.repeat, "library_build_s": meta["build_seconds"],
              "fts5_index_mb": size["fts_index_mb"], "file_mb": size["file_mb"], "tantivy_build": build,
              "load": " ".join(f"{x:.1f}" for x in os.getloadavg()), "queries": results}
    print_report(report)
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))


def print_report(r: dict) -> None:
    b = r["tantivy_build"]
    print(f"## {r['items']} items, {r['vocab']} vocabulary")
    print()
    print(f"FTS5 index {r['fts5_index_mb']} MB inside a {r['file_mb']} MB library (built with it in "
          f"{r['library_build_s']} s); tantivy index {b['index_mb']} MB, rebuilt from the library in "
          f"{b['wall_s']} s wall ({b['cpu_s']} s CPU, {b['written']} items); load average {r['load']}; "
          f"median of {r['repeat']} runs per query, CPU ms")
    print()
    print("| class | n | fts5 p50 | p95 | p99 | tantivy p50 | p95 | p99 | tantivy/fts5 (median) | top-10 overlap | same first |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    qs = r["queries"]
    for cls in (*bench.CLASSES, "all"):
        rs = [x for x in qs if cls == "all" or x["class"] == cls]
        if not rs:
            continue
        f = [x["fts5_ms"] for x in rs]
        t = [x["tantivy_ms"] for x in rs]
        ratio = statistics.median(x["tantivy_ms"] / x["fts5_ms"] for x in rs if x["fts5_ms"] > 0)
        overlap = sum(x["overlap"] for x in rs) / max(sum(max(x["hits"].values()) for x in rs), 1)
        name = f"**{cls}**" if cls == "all" else cls
        print(f"| {name} | {len(rs)} | {bench.pct(f, 50):.1f} | {bench.pct(f, 95):.1f} | {bench.pct(f, 99):.1f} "
              f"| {bench.pct(t, 50):.1f} | {bench.pct(t, 95):.1f} | {bench.pct(t, 99):.1f} | {ratio:.2f} "
              f"| {overlap:.0%} | {sum(x['same_first'] for x in rs)}/{len(rs)} |")
    print()
    if f"{BEFORE}_ms" in qs[0]:
        print("tantivy's query shape before (every held word also as a substring, source term sets) and now "
              "(same index), CPU ms:")
        print()
        print("| class | n | before p50 | p95 | p99 | now p50 | p95 | p99 | same top 10 | top-10 overlap |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for cls in (*bench.CLASSES, "all"):
            rs = [x for x in qs if cls == "all" or x["class"] == cls]
            t = [x["tantivy_ms"] for x in rs]
            u = [x[f"{BEFORE}_ms"] for x in rs]
            overlap = sum(x["before_overlap"] for x in rs) / max(sum(x["hits"]["tantivy"] for x in rs), 1)
            name = f"**{cls}**" if cls == "all" else cls
            print(f"| {name} | {len(rs)} | {bench.pct(u, 50):.1f} | {bench.pct(u, 95):.1f} | {bench.pct(u, 99):.1f} "
                  f"| {bench.pct(t, 50):.1f} | {bench.pct(t, 95):.1f} | {bench.pct(t, 99):.1f} "
                  f"| {sum(x['before_same_top10'] for x in rs)}/{len(rs)} | {overlap:.0%} |")
        print()
    if f"{NO_PAIRS}_ms" in qs[0]:
        print("tantivy with and without its common-word pairs (same index, same answers), CPU ms:")
        print()
        print("| class | n | with pairs p50 | p99 | without p50 | p99 |")
        print("|---|---|---|---|---|---|")
        for cls in (*bench.CLASSES, "all"):
            rs = [x for x in qs if cls == "all" or x["class"] == cls]
            t = [x["tantivy_ms"] for x in rs]
            u = [x[f"{NO_PAIRS}_ms"] for x in rs]
            print(f"| {cls} | {len(rs)} | {bench.pct(t, 50):.1f} | {bench.pct(t, 99):.1f} "
                  f"| {bench.pct(u, 50):.1f} | {bench.pct(u, 99):.1f} |")
        print()


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
