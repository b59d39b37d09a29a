"""The vector lane at scale: query latency p50/p99 at N items, with and without filters, and the
library file's growth per 10k items.

Builds a real library (jezero.store.Store, so every migration and table is the real one) holding
N items, then writes their vectors through the real VectorWriter.put: one item vector and
`--windows` message-window vectors per item, random unit vectors (latency and size do not depend
on what the vectors mean). Queries go through the real VectorLane.sessions on a read-only
connection, with an embedder that returns a random unit vector (so the figures are the lane's
own cost: the first-party embedder reports its query time apart, benchmarks/embedders).

    .venv/bin/python benchmarks/semantic/latency.py                 # 100k items, 2 windows each, 256 dims
    .venv/bin/python benchmarks/semantic/latency.py --items 20000 --dimension 384 --queries 30

Each query is also answered exactly (every float vector that passes the filters, in numpy), and
the lane's recall of the exact 10 and k nearest per table is reported: the lane scans the bit
vectors and rescores its candidates (query/vectors.py), an approximation. The vectors come in
topics (--topics; one per 30 items by default), since plain random vectors have no neighbours.

Times are CPU seconds of this process (time.process_time), medians and p99 over the queries:
the machine is shared, and wall-clock time would measure the neighbours.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from jezero import plugins
from jezero.config import SemanticConfig
from jezero.hookspecs import hookimpl
from jezero.query.vectors import VectorLane, _exact_scan
from jezero.store import Store, now_text, open_readonly
from jezero.store import vectors as stored

SOURCES = 10  # items spread evenly over this many sources (a filter on one keeps a tenth)
PROJECTS = 50


class RandomEmbedder:
    """Unit vectors in topics, as text vectors are: each vector is its topic's direction, plus a
    direction every vector shares (real text vectors have a mean of norm 0.6), plus noise; a
    query is nearer its topic than a stored vector is. `topics=0`: plain random unit vectors,
    where nearest neighbours hardly exist (every distance about the same), the worst case for
    any approximation."""

    model_id = "random-unit"

    def __init__(self, dimension: int, seed: int = 7, topics: int = 3000):
        self.dimension = dimension
        self.rng = np.random.default_rng(seed)
        self.topics = self._unit(self.rng.standard_normal((topics, dimension))) if topics else None
        self.common = self._unit(self.rng.standard_normal((1, dimension)))[0]

    @staticmethod
    def _unit(rows):
        return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)

    def embed(self, texts, *, query=False):
        noise = self.rng.standard_normal((len(texts), self.dimension)) / np.sqrt(self.dimension)
        if self.topics is None:
            return self._unit(noise)
        topic = self.topics[self.rng.integers(0, len(self.topics), len(texts))]
        return self._unit(topic * 0.6 + self.common * 0.6 + noise * (0.5 if query else 0.8))


def percentile(values: list[float], p: float) -> float:
    return float(np.percentile(np.array(values), p))


def build(path: Path, items: int, windows: int, embedder: RandomEmbedder, step: int = 10_000) -> list[dict]:
    """The library with `items` items and their vectors; the file's size after each `step` items."""
    sizes = []
    with Store(path) as store:
        db = store.db
        writer = stored.VectorWriter(db, "random", embedder)
        now = now_text()
        for start in range(0, items, step):
            count = min(step, items - start)
            before = os.path.getsize(path) + _wal(path)
            with db:
                for i in range(start, start + count):
                    db.execute(
                        "INSERT INTO items(uid, source, agent, project, session_id, segment_index, occurred_at, title, "
                        "summary, questions, atoms, original, content_hash, summarizer, summary_schema, ingested_at, "
                        "updated_at) VALUES(?, ?, 'bench', ?, ?, 0, ?, 't', 's', '[]', '[]', '', ?, 'bench', 1, ?, ?)",
                        (f"u{i}", f"src{i % SOURCES}", f"p{i % PROJECTS}", f"s{i}",
                         f"2026-{1 + i % 12:02d}-01T00:00:00.000000Z", f"h{i}", now, now))
            mid = os.path.getsize(path) + _wal(path)
            vectors = embedder.embed(["x"] * count * (1 + windows))
            with db:
                for j, item_id in enumerate(range(start + 1, start + count + 1)):
                    row = vectors[j * (1 + windows):(j + 1) * (1 + windows)]
                    writer.put(db, item_id, stored.Prepared(row[0], [(k, k, row[1 + k]) for k in range(windows)]))
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            after = os.path.getsize(path)
            per_10k = 10_000 / count
            sizes.append({"items": start + count, "file_mb": round(after / 1e6, 1),
                          "vectors_mb": round((after - mid) / 1e6 * per_10k, 1),
                          "items_mb": round((mid - before) / 1e6 * per_10k, 1)})
            print(f"  {start + count} items: file {after / 1e6:.1f} MB", file=sys.stderr)
    return sizes


def _wal(path: Path) -> int:
    wal = Path(str(path) + "-wal")
    return wal.stat().st_size if wal.exists() else 0


def measure(path: Path, embedder: RandomEmbedder, queries: int, k: int) -> dict:
    class Plugin:
        @hookimpl
        def register_embedders(self, register):
            register("random", lambda options: embedder)

    plugins.get_plugin_manager().register(Plugin(), name="bench:random")
    lane = VectorLane(SemanticConfig(enabled=True, embedder="random", k=k))
    conn = open_readonly(path)
    cases = {
        "all sources": {"sources": None, "source": None, "project": None, "since": None},
        "a key for 3 of 10 sources": {"sources": ["src1", "src4", "src7"], "source": None, "project": None,
                                      "since": None},
        "one project (1/50)": {"sources": None, "source": None, "project": "p3", "since": None},
        "since (last quarter)": {"sources": None, "source": None, "project": None,
                                 "since": "2026-10-01T00:00:00.000000Z"},
    }
    out = {}
    lane.sessions(conn, "warm up", **cases["all sources"])
    for name, filters in cases.items():
        times, exact_times, recall10, recall_k = [], [], [], []
        for _ in range(queries):
            t = time.process_time()
            hits = lane.sessions(conn, "q", **filters)
            times.append((time.process_time() - t) * 1000)
            # The approximation against the exact k nearest (the same query vector, both tables).
            vector = stored.unit_rows(embedder, ["q"], query=True)[0]
            near = lane.nearest(conn, vector, **filters)
            t = time.process_time()
            with conn:
                exact = _exact_scan(conn, vector, k, **filters)
            exact_times.append((time.process_time() - t) * 1000)
            got = {(n[1], n[2]) for n in near}
            for table in (None, "windows"):
                ranked = [(n[1], n[2]) for n in exact if (n[2] is None) == (table is None)]
                if ranked:
                    recall10.append(len(got & set(ranked[:10])) / len(ranked[:10]))
                    recall_k.append(len(got & set(ranked)) / len(ranked))
        out[name] = {"p50_ms": round(percentile(times, 50), 1), "p99_ms": round(percentile(times, 99), 1),
                     "sessions": len(hits), "recall_at_10": round(float(np.mean(recall10)), 3),
                     "recall_at_k": round(float(np.mean(recall_k)), 3),
                     "exact_p50_ms": round(percentile(exact_times, 50), 1)}
        print(f"  {name}: {out[name]}", file=sys.stderr)
    conn.close()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--windows", type=int, default=2, help="message windows per item (the coding set has 2.1)")
    parser.add_argument("--dimension", type=int, default=256, help="256: minilm-static's")
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--k", type=int, default=SemanticConfig().k)
    parser.add_argument("--keep", type=Path, help="build the library here")
    parser.add_argument("--topics", type=int, help="vectors in this many topics (default: one per 30 items); "
                        "0: plain random")
    args = parser.parse_args()
    embedder = RandomEmbedder(args.dimension, topics=args.items // 30 if args.topics is None else args.topics)
    with tempfile.TemporaryDirectory(prefix="jezero-semantic-latency-") as tmp:
        path = (args.keep or Path(tmp)) / "library.sqlite3"
        started = time.process_time()
        sizes = build(path, args.items, args.windows, embedder)
        build_s = time.process_time() - started
        figures = measure(path, embedder, args.queries, args.k)
    vectors = args.items * (1 + args.windows)
    growth = [s["vectors_mb"] for s in sizes]
    print(f"\n{args.items} items x (1 + {args.windows} windows) = {vectors} vectors of {args.dimension} floats; "
          f"k = {args.k}; {args.queries} queries per case")
    print(f"writing the vectors (VectorWriter.put, random vectors): {vectors / build_s:.0f} vectors per CPU second "
          f"(items rows included)")
    print(f"file growth per 10k items from their vectors: median {np.median(growth):.1f} MB "
          f"(the items rows themselves, as benchmarked here with tiny texts: {np.median([s['items_mb'] for s in sizes]):.1f} MB); "
          f"final file {sizes[-1]['file_mb']} MB")
    print(f"{'filters':<28} {'p50 ms':>8} {'p99 ms':>8} {'sessions':>9} {'recall@10':>10} {'recall@k':>9} {'exact p50':>10}")
    for name, f in figures.items():
        print(f"{name:<28} {f['p50_ms']:>8} {f['p99_ms']:>8} {f['sessions']:>9} {f['recall_at_10']:>10} "
              f"{f['recall_at_k']:>9} {f['exact_p50_ms']:>10}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
