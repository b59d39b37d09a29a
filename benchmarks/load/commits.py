"""What a library commit costs the readers: the load benchmark's searches through the query layer
in this process (one thread, no HTTP, no time budget), for a fixed time, with and without the
writer (writer.py) committing beside it. The CPU per search of this process then includes every
catch-up, cache restart and page re-read that the writer's commits cause a reader.

    .venv/bin/python benchmarks/load/commits.py --seconds 20             # writer off, then on
    .venv/bin/python benchmarks/load/commits.py --writer on --profile out.txt   # py-spy on this process

Each run starts from a fresh copy of bench.py's pristine library and its derived indexes, and
prints the items index's segment count at the end. `--prepare N` makes N small writes first
(N more small segments up to tantivy's merge of 8), to measure what segments cost a search.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "search"))
sys.path.insert(0, str(HERE))

import bench  # noqa: E402


def prepare(library: Path, engine: str, writes: int, batch: int) -> None:
    """`writes` small writes followed as writer.py follows them, before the clock starts: the
    index then has as many more small segments (tantivy merges 8 of them), to measure what each
    costs a search."""
    import corpus

    from jezero.store import Store, engines

    gen = corpus.Corpus(seed=77)
    with Store(library) as store:
        follow = engines.follower(engine, library)
        if follow is not None:
            store.after_write.append(follow)
        for w in range(writes):
            items = []
            for k in range(batch):
                it = gen.item(w * batch + k, w * batch + k + 1)
                it.uid = it.session_id = it.content_hash = f"prepare:{w}:{k}"
                items.append(it)
            store.write(items, connector="prepare", cursor={"n": w})
            time.sleep(0.3)  # the merges of the write before are done
    engines.forget()


def run(library: Path, qs, seconds: float, writer: bool, engine: str, batch: int, interval: float) -> dict:
    from jezero.config import SearchConfig
    from jezero.query import search
    from jezero.server.library import Library
    from jezero.store import engines

    engines.forget()
    options = SearchConfig(time_budget_ms=60_000, engine=engine)
    proc = bench.start_writer(library, batch, interval, engine) if writer else None
    done = 0
    try:
        with Library(library).reader() as conn:
            for q, f in qs[:20]:  # warm: the planner's counts, the engine opened
                search(conn, q, options=options, **f)
            if proc is not None:
                time.sleep(1.0)  # the writer is committing before the clock starts
            cpu0, t0 = time.process_time(), time.perf_counter()
            while time.perf_counter() - t0 < seconds:
                q, f = qs[done % len(qs)]
                search(conn, q, options=options, **f)
                done += 1
            cpu, wall = time.process_time() - cpu0, time.perf_counter() - t0
    finally:
        written = None
        if proc is not None:
            lines = bench.stop(proc).strip().splitlines()
            written = json.loads(lines[-1]) if lines else None
    out = {"writer": written, "searches": done, "cpu_ms_per_search": round(cpu / done * 1e3, 2),
           "searches_per_cpu_second": round(done / cpu, 1), "wall_s": round(wall, 1),
           "load_average_1m": round(os.getloadavg()[0], 2)}
    engine_obj = engines.engine_for(engine, library)
    searcher = getattr(engine_obj, "_state", (None,))[0]
    if searcher is not None:
        out["segments"] = searcher.num_segments
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=100_000)
    ap.add_argument("--data", type=Path, default=HERE / "data")
    ap.add_argument("--engine", default="tantivy", choices=["fts5", "tantivy"])
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--writer", choices=["off", "on", "both"], default="both")
    ap.add_argument("--batch", type=int, default=5)
    ap.add_argument("--interval", type=float, default=0.2)
    ap.add_argument("--repeat", type=int, default=1, help="alternate off/on this many times")
    ap.add_argument("--profile", type=Path, help="py-spy this process into PROFILE-<writer>.txt")
    ap.add_argument("--prepare", type=int, default=0, help="this many small writes first (more segments)")
    args = ap.parse_args()

    pristine = bench.pristine_library(args.data, args.items)
    index = bench.engine_index(pristine, args.engine)
    qs = bench.queries()
    modes = {"off": [False], "on": [True], "both": [False, True]}[args.writer]
    for _ in range(args.repeat):
        for writer in modes:
            library = bench.fresh_copy(pristine, bench.run_folder(args.data), index)
            if args.prepare:
                prepare(library, args.engine, args.prepare, args.batch)
            spy = None
            if args.profile is not None:
                mode = "on" if writer else "off"
                out = args.profile.with_name(f"{args.profile.stem}-{mode}{args.profile.suffix or '.txt'}")
                spy = subprocess.Popen([os.environ.get("PY_SPY") or shutil.which("py-spy") or "py-spy", "record",
                                        "-p", str(os.getpid()), "-d", str(int(args.seconds + 4)), "-r", "100",
                                        "-f", "raw", "--nonblocking", "-o", str(out),
                                        *os.environ.get("PY_SPY_OPTIONS", "").split()],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            result = run(library, qs, args.seconds, writer, args.engine, args.batch, args.interval)
            if spy is not None:
                spy.wait(timeout=60)
            print(json.dumps({"engine": args.engine, "writer_on": writer, **result}), flush=True)


if __name__ == "__main__":
    main()
