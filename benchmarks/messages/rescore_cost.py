"""What the tantivy messages lane's re-score by FTS5 (jezero_index_tantivy.messages.MESSAGES_RESCORE)
costs: the messages lane alone and the fused search on tantivy, the re-score on and off
interleaved per query (the order flipped each run, median of --repeat), on the search bench's
query set, with the kept term answers off (TERMS_KEPT 0: every call reads its terms) and on (as
served). CPU ms of the calling thread. See README.md (2026-12-03, `tantivy7`).

    .venv/bin/python benchmarks/messages/rescore_cost.py --sessions 10000 --data DIR
    .venv/bin/python benchmarks/messages/rescore_cost.py --library LIBRARY   # any library
"""
import argparse
import importlib.util
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "benchmarks" / "messages"))
spec = importlib.util.spec_from_file_location("mbench", ROOT / "benchmarks" / "messages" / "bench.py")
mbench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mbench)

import jezero_index_tantivy.messages as mm  # noqa: E402
from jezero.config import SearchConfig  # noqa: E402
from jezero.query import search  # noqa: E402
from jezero.store import engines, open_readonly  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--library", type=Path)
ap.add_argument("--sessions", type=int, default=10000)
ap.add_argument("--data", type=Path, default=ROOT / "benchmarks" / "messages" / "data")
ap.add_argument("--repeat", type=int, default=4)
args = ap.parse_args()
path = args.library or mbench.library(args.data, args.sessions, "word", False)[0]
if engines.sync("tantivy", path) is None:
    raise SystemExit("no tantivy")
conn = open_readonly(path)
queries = mbench.search_bench.query_set(conn)
o = SearchConfig(engine="tantivy")
variants = {"fused": lambda q, f: search(conn, q, options=o, **f),
            "messages": lambda q, f: search(conn, q, lanes=("messages",), options=o, **f)}
for kept in (0, 512):
    mm.TERMS_KEPT = kept
    times = {(v, r): [] for v in variants for r in (False, True)}
    for r in (False, True):
        mm.MESSAGES_RESCORE = r
        for fn in variants.values():
            for cls, q, f in queries[:20]:
                fn(q, f)
    for cls, q, f in queries:
        runs = {k: [] for k in times}
        for rep in range(args.repeat):  # the order flips each run (the second of a pair finds caches warm)
            for (v, r) in (list(times) if rep % 2 == 0 else [(v, not r) for v, r in times]):
                mm.MESSAGES_RESCORE = r
                runs[(v, r)].append(mbench.cpu_ms(lambda: variants[v](q, f)))
        for k in times:
            times[k].append(statistics.median(runs[k]))
    pct = mbench.search_bench.pct
    for v in variants:
        off, on = times[(v, False)], times[(v, True)]
        ratios = sorted(b / a for a, b in zip(off, on) if a > 0)
        print(json.dumps({"kept": kept, "variant": v, "off_p50": round(pct(off, 50), 2), "off_p99": round(pct(off, 99), 2),
                          "on_p50": round(pct(on, 50), 2), "on_p99": round(pct(on, 99), 2),
                          "median_ratio": round(statistics.median(ratios), 3),
                          "mean_ratio": round(sum(on) / sum(off), 3), "queries": len(off)}), flush=True)
