"""Search benchmark: build a realistic library, run a fixed mixed query set, compare with the plain
algorithm. See README.md in this folder for the method and the figures.

    .venv/bin/python benchmarks/search/bench.py --items 10000
    .venv/bin/python benchmarks/search/bench.py --items 100000 --json out.json

The library is built once into benchmarks/search/data/ (git-ignored) and reused; --rebuild
starts over. Timings are per query: the median of --repeat runs, raw and fast interleaved so
both see the same page cache and the same neighbours on a shared machine.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from datetime import timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent.parent))

import corpus  # noqa: E402

from jezero.config import SearchConfig  # noqa: E402
from jezero.query import search as public_search  # noqa: E402
from jezero.query import stats  # noqa: E402
from jezero.query.common import parse_stored  # noqa: E402
from jezero.query.search import _best, _Filters, _search, library_tokenizer  # noqa: E402
from jezero.query.terms import parse_terms  # noqa: E402
from jezero.store import index_segments, open_readonly  # noqa: E402

CLASSES = ("rare", "mid", "common", "mixed", "phrase", "fragment", "filtered")


def library(data: Path, n: int, rebuild: bool, vocab: str = "dev") -> tuple[Path, dict]:
    name = f"lib-{n}" if vocab == "dev" else f"lib-{n}-{vocab}"
    path = data / f"{name}.sqlite3"
    meta_path = data / f"{name}.json"
    if rebuild or not path.exists() or not meta_path.exists():
        data.mkdir(parents=True, exist_ok=True)
        for suffix in ("", "-wal", "-shm"):
            p = Path(str(path) + suffix)
            if p.exists():
                p.unlink()
        print(f"building {n} items into {path} ...", file=sys.stderr)
        t0 = time.perf_counter()
        corpus.build(path, n, kind=vocab,
                     progress=lambda k: print(f"  {k}", file=sys.stderr) if k % 20000 == 0 else None)
        meta_path.write_text(json.dumps({"items": n, "build_seconds": round(time.perf_counter() - t0, 1)}))
    return path, json.loads(meta_path.read_text())


def index_size(conn) -> dict:
    sizes = dict(conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name"))
    fts = sum(v for k, v in sizes.items() if k.startswith("items_fts"))
    return {"file_mb": round(sum(sizes.values()) / 1e6, 1), "fts_mb": round(fts / 1e6, 1),
            "fts_index_mb": round(sizes.get("items_fts_data", 0) / 1e6, 1)}


def query_set(conn, seed: int = 11, vocab: str = "dev") -> list[tuple[str, str, dict]]:
    """(class, query, filters). Fixed for a given library size: same seed, same words. Classes by
    the rank of the words in the Zipf vocabulary: common = top 60, mid = 150-3000, rare = beyond."""
    rng = random.Random(seed)
    words = corpus.vocabulary(kind=vocab)
    usable = [w for w in words if len(w) >= 3]
    common = [w for w in usable[:60]]
    mid = usable[150:3000]
    rare = usable[3000:]

    def pick(pool, k):
        return rng.sample(pool, k)

    out = []
    for _ in range(40):
        out.append(("rare", " ".join(pick(rare, rng.randint(1, 3))), {}))
    for _ in range(40):
        out.append(("mid", " ".join(pick(mid, rng.randint(1, 3))), {}))
    for _ in range(20):
        out.append(("common", " ".join(pick(common, rng.randint(1, 3))), {}))
    for _ in range(40):
        words_ = pick(rare + mid, rng.randint(1, 2)) + pick(common, rng.randint(1, 2))
        rng.shuffle(words_)
        out.append(("mixed", " ".join(words_), {}))
    hi = conn.execute("SELECT max(id) FROM items").fetchone()[0]
    for _ in range(20):
        text = conn.execute("SELECT summary FROM items WHERE id = ?", (rng.randint(1, hi),)).fetchone()[0]
        toks = text.rstrip(".").split()
        i = rng.randrange(len(toks) - 1)
        out.append(("phrase", f'"{toks[i]} {toks[i + 1]}"' + (f" {rng.choice(mid)}" if rng.random() < 0.5 else ""), {}))
    for _ in range(10):
        w = rng.choice([w for w in mid if len(w) >= 7 and w.isalpha()] or mid)
        out.append(("fragment", w[: rng.randint(4, 6)], {}))
    last = conn.execute("SELECT max(occurred_at) FROM items").fetchone()[0]
    for i in range(30):
        q = " ".join(pick(mid + rare, rng.randint(1, 3)) + (pick(common, 1) if i % 3 == 0 else []))
        kind = i % 3
        if kind == 0:
            f = {"project": rng.choice(corpus.PROJECTS[:6])}
        elif kind == 1:
            f = {"source": rng.choice(corpus.SOURCES[:4])}
        else:
            f = {"since": (parse_stored(last) - timedelta(days=rng.choice([30, 90, 180]))).date().isoformat()}
        out.append(("filtered", q, f))
    return out


def timed(fn, *args) -> tuple[float, float]:
    """(wall, cpu) seconds of one call. On a machine shared with other jobs the wall clock also
    counts the time spent waiting for a core; this thread's CPU time does not (SQLite runs in it,
    and the pages are in memory), so it is what a quiet machine would show."""
    w0, c0 = time.perf_counter(), time.thread_time()
    fn(*args)
    return time.perf_counter() - w0, time.thread_time() - c0


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    if not s:
        return float("nan")
    k = (len(s) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=10_000)
    ap.add_argument("--data", type=Path, default=HERE / "data")
    ap.add_argument("--rebuild", action="store_true")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", type=Path, help="also write the results here")
    ap.add_argument("--vocab", choices=("dev", "random"), default="dev",
                    help="dev: English and identifiers (default); random: random letter strings")
    ap.add_argument("--equality-only", action="store_true", help="only compare the top-10s, no timing")
    ap.add_argument("--optimized", action="store_true",
                    help="also measure a copy of the library after FTS5 'optimize' (one index segment)")
    args = ap.parse_args()

    path, meta = library(args.data, args.items, args.rebuild, args.vocab)
    reports = [run(path, meta, args, "incremental")]
    if args.optimized:
        reports.append(run(optimized_copy(path), meta, args, "optimized"))
    if args.json:
        args.json.write_text(json.dumps(reports, indent=1))


def optimized_copy(path: Path) -> Path:
    import shutil

    import apsw

    target = path.with_name(path.stem + "-optimized.sqlite3")
    if not target.exists() or target.stat().st_mtime < path.stat().st_mtime:
        shutil.copyfile(path, target)
        db = apsw.Connection(str(target))
        t0 = time.perf_counter()
        db.execute("INSERT INTO items_fts(items_fts) VALUES('optimize')")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.close()
        print(f"optimize took {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return target


def run(path: Path, meta: dict, args, variant: str) -> dict:
    conn = open_readonly(path)
    # No time budget here: the benchmark compares algorithms, and on a loaded machine a budget
    # would cut some plain queries short (tests cover what the budget does).
    opts = SearchConfig(time_budget_ms=60_000)
    now = parse_stored(conn.execute("SELECT max(occurred_at) FROM items").fetchone()[0]) + timedelta(days=1)
    tokenizer = library_tokenizer(conn)
    queries = query_set(conn, vocab=args.vocab)

    def raw(q, f):
        terms = parse_terms(q, tokenizer)
        filters = _Filters(None, f.get("source"), f.get("project"),
                           None if "since" not in f else f["since"] + "T00:00:00.000000Z")
        return _best(conn, terms, filters, opts.candidate_pool) if terms else []

    def plain(q, f):
        return _search(conn, q, allowed=("*",), limit=10, options=opts, now=now, prune=False,
                       source=f.get("source"), project=f.get("project"), since=f.get("since"))

    def fast(q, f, current_first=True):
        return public_search(conn, q, limit=10, options=opts, now=now, current_first=current_first, **f)

    timing = not args.equality_only
    if timing:
        # Warm the page cache (both paths read the same pages), then measure.
        for _, q, f in queries:
            raw(q, f)
            fast(q, f)
    # One-off cost: reading the gate's sample (again after writes that changed 5% of the rows).
    stats._states.clear()
    stats._newest.clear()  # or the new state would take over the sample read before
    sample_ms = timed(fast, "zzzz-not-a-word", {})[1] * 1e3
    results = []
    for cls, q, f in queries:
        for state in stats._states.values():
            state.counts.clear()  # every term seen for the first time; the sample stays
            state.shares.clear()
            state.grams.clear()
            state.crowded.clear()
        cold = timed(fast, q, f) if timing else (0.0, 0.0)
        t_raw, t_fast, t_plain = [(0.0, 0.0)], [(0.0, 0.0)], [(0.0, 0.0)]
        if timing:
            t_raw, t_fast, t_plain = [], [], []
            for _ in range(args.repeat):
                t_raw.append(timed(raw, q, f))
                t_fast.append(timed(fast, q, f))
                t_plain.append(timed(plain, q, f))
        plain_hits = plain(q, f)
        a = [h["id"] for h in plain_hits]
        # plain has no current-first pass (it reorders the ranked list: query/current.py)
        b = [h["id"] for h in fast(q, f, current_first=False)]
        # Rows whose plain relevance comes from floored terms alone (~1e-6) say nothing.
        meaningful = [h["id"] for h in plain_hits if h["score"] > 1e-4]
        results.append({
            "class": cls, "query": q, "filters": f,
            "raw_ms": statistics.median(t[1] for t in t_raw) * 1e3,
            "fast_ms": statistics.median(t[1] for t in t_fast) * 1e3,
            "plain_ms": statistics.median(t[1] for t in t_plain) * 1e3,
            "fast_cold_ms": cold[1] * 1e3,
            "raw_wall_ms": statistics.median(t[0] for t in t_raw) * 1e3,
            "fast_wall_ms": statistics.median(t[0] for t in t_fast) * 1e3,
            "same_top10": a == b,
            "same_meaningful": b[: len(meaningful)] == meaningful,
            "hits": len(b),
        })

    summary = summarize(results)
    report = {"items": args.items, "variant": variant, "vocab": args.vocab, "timing": timing, "segments": index_segments(conn),
              "load": " ".join(f"{x:.1f}" for x in os.getloadavg()), "sample_ms": round(sample_ms, 1),
              "build_seconds": meta["build_seconds"], "size": index_size(conn),
              "sqlite": conn.execute("SELECT sqlite_version()").fetchone()[0], "repeat": args.repeat,
              "summary": summary, "queries": results}
    print_report(report)
    conn.close()
    return report


def summarize(results: list[dict]) -> dict:
    out = {}
    for cls in (*CLASSES, "all", "all but common"):
        rs = [r for r in results if cls == "all" or r["class"] == cls
              or (cls == "all but common" and r["class"] != "common")]
        if not rs:
            continue
        fast = [r["fast_ms"] for r in rs]
        raw = [r["raw_ms"] for r in rs]
        cold = [r["fast_cold_ms"] for r in rs]
        wall = [r["fast_wall_ms"] for r in rs]
        raw_wall = [r["raw_wall_ms"] for r in rs]
        ratios = [r["fast_ms"] / r["raw_ms"] for r in rs if r["raw_ms"] > 0]
        plain_ratios = [r["fast_ms"] / r["plain_ms"] for r in rs if r["plain_ms"] > 0]
        out[cls] = {
            "n": len(rs),
            "fast_p50": pct(fast, 50), "fast_p95": pct(fast, 95), "fast_p99": pct(fast, 99),
            "cold_p50": pct(cold, 50), "cold_p99": pct(cold, 99),
            "wall_p50": pct(wall, 50), "wall_p99": pct(wall, 99),
            "raw_wall_p50": pct(raw_wall, 50), "raw_wall_p99": pct(raw_wall, 99),
            "raw_p50": pct(raw, 50), "raw_p95": pct(raw, 95), "raw_p99": pct(raw, 99),
            "ratio_median": statistics.median(ratios) if ratios else float("nan"),
            "plain_ratio_median": statistics.median(plain_ratios) if plain_ratios else float("nan"),
            "plain_p50": pct([r["plain_ms"] for r in rs], 50), "plain_p99": pct([r["plain_ms"] for r in rs], 99),
            "same_top10": sum(r["same_top10"] for r in rs),
            "same_meaningful": sum(r["same_meaningful"] for r in rs),
        }
    return out


def print_report(report: dict) -> None:
    s = report["size"]
    print(f"## {report['items']} items, {report['vocab']} vocabulary, {report['variant']} index "
          f"({report['segments']} segments)")
    print()
    print(f"{report['items']} items, built in {report['build_seconds']} s; file {s['file_mb']} MB, "
          f"FTS {s['fts_mb']} MB (index {s['fts_index_mb']} MB); SQLite {report['sqlite']}; "
          f"median of {report['repeat']} runs per query; load average {report['load']}")
    print()
    print(f"CPU ms per query (wall ms in the last columns). 'cold': the query's terms seen for the first "
          f"time since the index changed; the first query after a change also reads the gate's sample "
          f"({report['sample_ms']} ms here).")
    print()
    print("| class | n | fast p50 | p95 | p99 | cold p50 | cold p99 | raw p50 | raw p95 | raw p99 | fast/raw (median) "
          "| plain p50 / p99 | fast/plain (median) | same top-10 | same meaningful | wall fast p50/p99 "
          "| wall raw p50/p99 |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for cls, v in report["summary"].items():
        print(f"| {cls} | {v['n']} | {v['fast_p50']:.1f} | {v['fast_p95']:.1f} | {v['fast_p99']:.1f} "
              f"| {v['cold_p50']:.1f} | {v['cold_p99']:.1f} "
              f"| {v['raw_p50']:.1f} | {v['raw_p95']:.1f} | {v['raw_p99']:.1f} | {v['ratio_median']:.2f} "
              f"| {v['plain_p50']:.1f} / {v['plain_p99']:.1f} | {v['plain_ratio_median']:.2f} "
              f"| {v['same_top10']}/{v['n']} | {v['same_meaningful']}/{v['n']} "
              f"| {v['wall_p50']:.1f} / {v['wall_p99']:.1f} | {v['raw_wall_p50']:.1f} / {v['raw_wall_p99']:.1f} |")
    diff = [r for r in report["queries"] if not r["same_top10"]]
    if diff:
        print()
        print("queries whose top-10 differs from the plain algorithm:")
        for r in diff:
            print(f"  [{r['class']}] {r['query']!r} {r['filters'] or ''} "
                  f"{'(only among floored-only rows)' if r['same_meaningful'] else '(DIFFERS in scored rows)'}")
    over = [r for r in report["queries"]
            if r["class"] != "common" and r["fast_ms"] > 1.3 * r["raw_ms"] and r["fast_ms"] - r["raw_ms"] > 0.5]
    print()
    print(f"queries other than the common class more than 1.3x (and 0.5 ms) slower than raw: {len(over)}")
    for r in over:
        print(f"  [{r['class']}] {r['query']!r} raw {r['raw_ms']:.1f} ms, fast {r['fast_ms']:.1f} ms")
    print()


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
