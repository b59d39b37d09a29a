"""What the messages lane costs the load benchmark's searches: the query layer alone, one thread,
no budget, on the library with messages and the one without (bench.py's two libraries, same items),
both engines, every variant interleaved per search, median of 3 per search; then a cProfile of
the fused search on the library with messages, per engine, and the messages lane's share of it.

    nice -n 10 .venv/bin/python benchmarks/load/messages_cost.py --items 20000

Times are CPU milliseconds of the calling thread (SQLite and tantivy run in it), so that waiting
for a core on a shared machine does not count. The libraries are built by bench.py's code if
missing (slow with messages: benchmarks/load/README.md).
"""

from __future__ import annotations

import argparse
import cProfile
import importlib
import io
import json
import os
import pstats
import statistics
import time
from pathlib import Path

import bench

CONFIGS = [("messages", "fts5"), ("messages", "tantivy"), ("items-only", "fts5"), ("items-only", "tantivy")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=100_000)
    ap.add_argument("--data", type=Path, default=bench.HERE / "data")
    ap.add_argument("--searches", type=int, default=200)
    ap.add_argument("--engine", action="append", choices=["fts5", "tantivy"], default=None,
                    help="only this engine (repeatable; default both)")
    ap.add_argument("--profile-out", type=Path, default=None, help="write each engine's profile (top 40) here")
    ap.add_argument("--nothing-kept", action="store_true",
                    help="no answers kept between searches (tantivy's messages lane keeps the items' sessions and "
                         "the terms' answers per index state: server.nothing_kept)")
    ap.add_argument("--first-sight", action="store_true",
                    help="time each search's first run, not the median of 3 (kept answers make repeats cheaper)")
    ap.add_argument("--gc-first", type=int, default=None,
                    help="the youngest GC generation's threshold (0: Python's 700; default: jezero serve's, "
                         "jezero.server.process)")
    ap.add_argument("--messages-only", action="store_true",
                    help="only the library with messages (the items-only one is not opened, nor built if missing)")
    ap.add_argument("--stages", action="store_true",
                    help="also the fused search's stages (CPU ms of each, inclusive, per search: p50 and mean of "
                         "their medians of 3), each function timed by a wrapper; the library with messages only")
    args = ap.parse_args()
    if args.gc_first is None:
        from jezero.server.process import tune_gc

        tune_gc()
    elif args.gc_first:
        import gc

        gc.set_threshold(args.gc_first, *gc.get_threshold()[1:])
    if args.nothing_kept:
        import server

        server.nothing_kept()
    kept = kept_counts()
    stage = stage_timers() if args.stages else None

    from jezero.config import SearchConfig
    from jezero.query import search
    from jezero.server.library import Library

    qs = bench.queries()[: args.searches]
    chosen = args.engine or ["fts5", "tantivy"]
    configs = [c for c in CONFIGS if c[1] in chosen and (c[0] == "messages" or not args.messages_only)]
    conns, opened = {}, []
    for name, engine in configs:
        pristine = bench.pristine_library(args.data, args.items, messages=name == "messages")
        bench.engine_index(pristine, engine)
        reader = Library(pristine).reader()  # read only: no copy needed (bench.py copies for its writer)
        conns[(name, engine)] = reader.__enter__()
        opened.append(reader)
    options = {e: SearchConfig(time_budget_ms=60_000, engine=e) for e in ("fts5", "tantivy")}
    # The fused search (bench.py's, the default) everywhere, and the items lane alone on the library
    # with messages: fused minus items is what the messages lane and the fusion add.
    variants = [(c, None) for c in configs] + [(("messages", e), ("items",)) for e in chosen]

    def run(variant, q, f) -> float:
        (name, engine), lanes = variant
        if stage is not None:
            stage.clear()
        t = time.thread_time()
        search(conns[(name, engine)], q, options=options[engine], **({"lanes": lanes} if lanes else {}), **f)
        return (time.thread_time() - t) * 1e3

    for q, f in qs[:20]:
        for v in variants:
            run(v, q, f)
    times = {v: [] for v in variants}
    stages: dict = {}
    kept.update(dict.fromkeys(kept, 0))  # the warm-up's counts left out
    for q, f in qs:
        runs = {}
        for v in variants:
            runs[v], parts = [], []
            for _ in range(1 if args.first_sight else 3):
                runs[v].append(run(v, q, f))
                parts.append(dict(stage or {}))
            times[v].append(statistics.median(runs[v]))
            if stage is not None and v[0][0] == "messages" and v[1] is None:
                for name in set().union(*parts):
                    stages.setdefault((v[0][1], name), []).append(statistics.median(p.get(name, 0.0) for p in parts))
    if "tantivy" in chosen:
        print(json.dumps({"kept": "nothing" if args.nothing_kept else "per index state",
                          "term answers reused": f"{kept['terms_reused']} of {kept['terms']}",
                          "items' sessions from the map": f"{kept['items_kept']} of {kept['items']}"}), flush=True)
    for v in variants:
        t = sorted(times[v])
        (name, engine), lanes = v
        print(json.dumps({"library": name, "engine": engine, "lanes": "items" if lanes else "fused",
                          "searches": len(t), "mean_cpu_ms": round(statistics.mean(t), 2),
                          "p50_cpu_ms": round(t[len(t) // 2], 2), "p99_cpu_ms": round(t[int(len(t) * 0.99)], 2),
                          "load_average_1m": round(os.getloadavg()[0], 2)}), flush=True)

    for (engine, name), t in sorted(stages.items()):
        t = sorted(t + [0.0] * (len(qs) - len(t)))
        print(json.dumps({"engine": engine, "stage": name, "mean_cpu_ms": round(statistics.mean(t), 3),
                          "p50_cpu_ms": round(t[len(t) // 2], 3), "p99_cpu_ms": round(t[int(len(t) * 0.99)], 3)}),
              flush=True)
    if stage is not None:
        stage.off()

    for engine in chosen:
        conn = conns[("messages", engine)]
        prof = cProfile.Profile()
        prof.enable()
        for q, f in qs:
            search(conn, q, options=options[engine], **f)
        prof.disable()
        cum = {}
        for (file, _, fn), (_, _, _, ct, _) in pstats.Stats(prof).stats.items():
            short = f"{Path(file).parent.name}/{Path(file).name}:{fn}"
            cum[short] = max(cum.get(short, 0.0), ct)
        total = cum.get("query/search.py:search", 0.0)
        parts = {k: cum.get(k, 0.0) for k in ("fused/messages_lane.py:message_lane", "query/search.py:items_lane",
                                              "fused/fusion.py:fuse", "fused/current_rule.py:current_first")}
        print(json.dumps({"engine": engine, "profiled_searches": len(qs), "search_s": round(total, 2),
                          **{f"share {k}": round(s / total, 3) for k, s in parts.items() if total}}), flush=True)
        if args.profile_out:
            out = io.StringIO()
            pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(40)
            path = args.profile_out.with_name(f"{args.profile_out.stem}-{engine}{args.profile_out.suffix or '.txt'}")
            path.write_text(out.getvalue())
    for reader in opened:
        reader.__exit__(None, None, None)


class _Stages(dict):
    """CPU ms per stage of the current search (stage_timers)."""

    def off(self) -> None:
        for module, name, original in self.undo:
            setattr(module, name, original)


def stage_timers() -> _Stages:
    """Wraps the fused search's stages (module functions, looked up by name where they are called)
    with thread CPU timers; each search's sums are in the returned dict (cleared per search).
    Nested stages count inside their callers too."""
    from jezero.query import fused
    from jezero.query import messages as mq
    from jezero.query.fused import messages_lane
    from jezero.store import engines

    sq = importlib.import_module("jezero.query.search")  # the package's `search` is the function

    out = _Stages()
    out.undo = []
    # (search()'s stages where fused.search calls them, the lane's helpers where message_lane does)
    wanted = [(fused, n) for n in ("message_lane", "unread_evidence", "fuse", "current_first")]
    wanted += [(messages_lane, n) for n in ("_common_floors", "_by_sessions", "_scores", "_rank_sessions",
                                            "_newer_on_near_ties")]
    wanted += [(mq, "engine_term_matches"), (mq, "rows"), (engines, "messages"), (sq, "_search"),
               (sq, "_current_first")]
    for module, name in wanted:
        original = getattr(module, name)
        # (named as before the package: fused._scores, not messages_lane._scores)
        label = "fused" if module.__name__.startswith(fused.__name__) else module.__name__.rsplit(".", 1)[-1]

        def timed(*a, _f=original, _k=f"{label}.{name}", **kw):
            t = time.thread_time()
            try:
                return _f(*a, **kw)
            finally:
                out[_k] = out.get(_k, 0.0) + (time.thread_time() - t) * 1e3

        setattr(module, name, timed)
        out.undo.append((module, name, original))
    return out


def kept_counts() -> dict:
    """Counts of what the tantivy messages lane found kept (term answers, items' sessions), by
    wrapping the two places it looks; empty without tantivy."""
    counts = {"terms": 0, "terms_reused": 0, "items": 0, "items_kept": 0}
    try:
        from jezero_index_tantivy import messages as tantivy_messages
    except ImportError:
        return counts
    if not hasattr(tantivy_messages, "_Kept"):  # code from before 2026-12-01 20:30 keeps nothing
        return counts
    from jezero.query import messages as mq

    term = tantivy_messages._Kept.term

    def counted_term(self, key):
        found = term(self, key)
        counts["terms"] += 1
        counts["terms_reused"] += found is not tantivy_messages._UNKEPT
        return found

    tantivy_messages._Kept.term = counted_term
    messages = tantivy_messages.MessageIndex.matches

    def counted_matches(self, conn, request):
        answer = messages(self, conn, request)
        known = getattr(answer, "sessions", None)
        if known is not None and mq.SESSIONS_KEPT:
            items = {item for found in answer if found for _, item, _ in found}
            counts["items"] += len(items)
            counts["items_kept"] += sum(item in known for item in items)
        return answer

    tantivy_messages.MessageIndex.matches = counted_matches
    return counts


if __name__ == "__main__":
    main()
