"""The tantivy engine at a million items, where a whole library does not fit a benchmark run.

    .venv/bin/python benchmarks/search/million.py --items 1000000
    .venv/bin/python benchmarks/search/million.py --items 100000     # the same measure at 100k

Building a 1M-item library through Store.write costs its FTS5 trigram index (169 s CPU per 100k
items measured here, ~30 CPU minutes and ~6 GB at 1M), which does not fit beside seven other
jobs on two cores. So this builds the tantivy engine's own index straight from the corpus
generator (the same items, in the same order and with the same ids as a library built by
bench.py, through the engine's own `_document`), and keeps only what the query set needs from
the items (id, summary, occurred_at) in a small SQLite table. It then times the engine's part of
a search: the tantivy query for the candidate pool (200), the same call `search()` makes, with
the same filters. What search() adds around it (the recency re-rank of the pool and fetching 10
hits) is measured at 100k and 300k by engines.py.

Times are CPU ms of the calling thread (tantivy's search runs in it), the median of 3 runs.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import apsw  # noqa: E402
import bench  # noqa: E402
import corpus  # noqa: E402

from jezero.query.common import parse_time  # noqa: E402
from jezero.query.terms import parse_terms  # noqa: E402
from jezero.store import DEFAULT_TOKENIZER, engines, format_time  # noqa: E402
from jezero_index_tantivy.index import WRITER_HEAP, TantivyIndex, _document  # noqa: E402

POOL = 200


def build(folder: Path, n: int) -> dict:
    """The index and the side table of `n` generated items; (re)built when missing."""
    side = folder / "items.sqlite3"
    meta = folder / "build.json"
    if meta.exists():
        return json.loads(meta.read_text())
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    index = TantivyIndex(folder / "library.sqlite3")
    tindex = index._open(create=True)
    writer = tindex.writer(heap_size=WRITER_HEAP, num_threads=0)
    db = apsw.Connection(str(side))
    db.execute("PRAGMA journal_mode=OFF").fetchall()
    db.execute("CREATE TABLE items(id INTEGER PRIMARY KEY, summary TEXT, occurred_at TEXT)")
    gen = corpus.Corpus(1)
    w0, c0 = time.perf_counter(), time.process_time()
    gen_cpu = 0.0
    db.execute("BEGIN")
    for i in range(n):
        g0 = time.thread_time()
        it = gen.item(i, n)
        at = format_time(it.occurred_at)
        row = (i + 1, it.source, it.project, at, it.title, it.summary, json.dumps(it.questions),
               json.dumps(it.atoms))
        db.execute("INSERT INTO items VALUES(?, ?, ?)", (i + 1, it.summary, at))
        gen_cpu += time.thread_time() - g0
        writer.add_document(_document(row, index.pairs))
        if (i + 1) % 100_000 == 0:
            print(f"  {i + 1}", file=sys.stderr, flush=True)
    db.execute("COMMIT")
    writer.commit()
    writer.wait_merging_threads()
    db.close()
    out = {"items": n, "wall_s": round(time.perf_counter() - w0, 1),
           "cpu_s": round(time.process_time() - c0, 1), "generator_cpu_s": round(gen_cpu, 1),
           "index_mb": round(sum(p.stat().st_size for p in index.folder.rglob("*") if p.is_file()) / 1e6, 1),
           "load": " ".join(f"{x:.1f}" for x in os.getloadavg())}
    meta.write_text(json.dumps(out))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=1_000_000)
    ap.add_argument("--data", type=Path, default=HERE / "data")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    folder = args.data / f"tantivy-only-{args.items}"
    built = build(folder, args.items)
    index = TantivyIndex(folder / "library.sqlite3")
    index._open(create=False)
    index._refresh()
    searcher = index._state[0]
    side = apsw.Connection(str(folder / "items.sqlite3"), flags=apsw.SQLITE_OPEN_READONLY)
    queries = bench.query_set(side)

    def pool(q: str, f: dict) -> int:
        terms = parse_terms(q, DEFAULT_TOKENIZER)
        request = engines.Request(tuple(terms), None, f.get("source"), f.get("project"),
                                  parse_time(f.get("since")), POOL)
        query = index._query(searcher, request)
        if query is None:
            return 0
        hits = searcher.search(query, limit=POOL, count=False).hits
        searcher.fast_field_values("id", [a for _, a in hits])
        searcher.fast_field_values("at", [a for _, a in hits])
        return len(hits)

    for q, f in ((q, f) for _, q, f in queries):  # warm
        pool(q, f)
    results = []
    for cls, q, f in queries:
        times = [bench.timed(pool, q, f)[1] * 1e3 for _ in range(args.repeat)]
        results.append({"class": cls, "query": q, "filters": f, "ms": statistics.median(times)})
    report = {"build": built, "repeat": args.repeat, "load": " ".join(f"{x:.1f}" for x in os.getloadavg()),
              "queries": results}
    print(f"## {args.items} items: tantivy candidate pool only\n")
    print(f"index {built['index_mb']} MB, built from the generator in {built['wall_s']} s wall, "
          f"{built['cpu_s']} s CPU of this process ({built['generator_cpu_s']} s of it generating the items); "
          f"load average at build {built['load']}, now {report['load']}\n")
    print("| class | n | p50 | p95 | p99 | max |")
    print("|---|---|---|---|---|---|")
    for cls in (*bench.CLASSES, "all"):
        ms = [r["ms"] for r in results if cls == "all" or r["class"] == cls]
        name = f"**{cls}**" if cls == "all" else cls
        print(f"| {name} | {len(ms)} | {bench.pct(ms, 50):.1f} | {bench.pct(ms, 95):.1f} | {bench.pct(ms, 99):.1f} "
              f"| {max(ms):.1f} |")
    slow = sorted(results, key=lambda r: -r["ms"])[:5]
    print("\nslowest: " + "; ".join(f"[{r['class']}] {r['query']} {r['ms']:.1f} ms" for r in slow))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
