"""Messages benchmark: index size and latency of the messages layer next to the items alone.
See README.md in this folder for the method and the figures.

    .venv/bin/python benchmarks/messages/bench.py --sessions 10000
    .venv/bin/python benchmarks/messages/bench.py --sessions 2000 --tokenizers   # word-level vs trigram

Libraries are built once into benchmarks/messages/data/ (git-ignored) and reused; --rebuild
starts over. The query set is the search benchmark's (benchmarks/search/bench.py, query_set).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent.parent))

import sessions  # noqa: E402

from jezero.query import recall, search  # noqa: E402
from jezero.store import open_readonly  # noqa: E402
from jezero.store.messages import MESSAGES_TOKENIZER  # noqa: E402

_spec = importlib.util.spec_from_file_location("search_bench", HERE.parent / "search" / "bench.py")
search_bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(search_bench)

TOKENIZERS = {"word": MESSAGES_TOKENIZER, "trigram": "trigram remove_diacritics 1"}


def library(data: Path, n: int, tokenizer: str, rebuild: bool) -> tuple[Path, dict]:
    name = f"sessions-{n}-{tokenizer}"
    path, meta_path = data / f"{name}.sqlite3", data / f"{name}.json"
    if rebuild or not path.exists() or not meta_path.exists():
        data.mkdir(parents=True, exist_ok=True)
        for suffix in ("", "-wal", "-shm"):
            Path(str(path) + suffix).unlink(missing_ok=True)
        print(f"building {n} sessions ({tokenizer}) into {path} ...", file=sys.stderr)
        t0 = time.perf_counter()
        sessions.build(path, n, tokenizer=TOKENIZERS[tokenizer])
        meta_path.write_text(json.dumps({"sessions": n, "build_seconds": round(time.perf_counter() - t0, 1)}))
    return path, json.loads(meta_path.read_text())


def sizes(conn) -> dict:
    """Bytes per layer: each table with its indexes and its FTS5 shadow tables."""
    out = {"items": 0, "messages": 0, "other": 0}
    for name, size in conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name"):
        layer = "messages" if name.startswith("message") else "items" if name.startswith(("items", "sqlite_autoindex_items")) else "other"
        out[layer] += size
        if name.startswith("messages_fts"):
            out["messages_fts"] = out.get("messages_fts", 0) + size
        if name.startswith("items_fts"):
            out["items_fts"] = out.get("items_fts", 0) + size
    out["messages_rows"] = conn.execute("SELECT count(*) FROM messages").fetchone()[0]
    out["items_rows"] = conn.execute("SELECT count(*) FROM items").fetchone()[0]
    out["ratio_messages_to_items"] = round(out["messages"] / out["items"], 3)
    return out


def cpu_ms(fn) -> float:
    c0 = time.thread_time()
    fn()
    return (time.thread_time() - c0) * 1000


def engine_indexes(path: Path, engine: str) -> dict:
    """Build the engine's derived indexes from the library (timed, CPU and wall), and their sizes."""
    if engine == "fts5":
        return {}
    from jezero.store import engines

    found = engines.engine_for(engine, path)
    if found is None:
        raise SystemExit(f"--engine {engine}: no installed plugin gives that engine")
    out = {}
    for name, index in (("items", found), ("messages", found.message_index)):
        c0, w0 = time.process_time(), time.perf_counter()
        if name == "items":  # the items alone (the engine's own catch_up also brings the messages)
            from jezero_index_tantivy.index import DerivedIndex

            written = DerivedIndex.catch_up(found, rebuild=True)
        else:
            written = index.catch_up(rebuild=True)
        out[f"{name}_index"] = {"docs": written, "build_cpu_s": round(time.process_time() - c0, 1),
                                "build_wall_s": round(time.perf_counter() - w0, 1),
                                "mb": round(sum(f.stat().st_size for f in index.folder.iterdir()) / 1e6, 1)}
    return out


def measure(conn, queries, repeat: int, engines_: tuple[str, ...] = ("fts5",)) -> dict:
    """Per query, the median of `repeat` runs of each variant, interleaved (each engine's variants
    side by side: `<variant>` for fts5, `<variant>@<engine>` for another)."""
    from jezero.config import SearchConfig

    variants = {}
    for engine in engines_:
        o = SearchConfig(engine=engine)
        at = "" if engine == "fts5" else f"@{engine}"
        variants.update({
            f"items{at}": lambda q, f, o=o: search(conn, q, lanes=("items",), options=o, **f),
            f"fused{at}": lambda q, f, o=o: search(conn, q, options=o, **f),
            f"messages{at}": lambda q, f, o=o: search(conn, q, lanes=("messages",), options=o, **f),
            f"recall{at}": lambda q, f, o=o: recall(conn, q, projects=f.get("project"), source=f.get("source"),
                                                    since=f.get("since"), options=o),
        })
    times: dict[str, list[tuple[str, float]]] = {v: [] for v in variants}
    for fn in variants.values():  # warm the page cache and the per-process caches once
        for cls, q, f in queries[:20]:
            fn(q, f)
    for cls, q, f in queries:
        runs = {v: [] for v in variants}
        for _ in range(repeat):
            for v, fn in variants.items():
                runs[v].append(cpu_ms(lambda: fn(q, f)))
        for v in variants:
            times[v].append((cls, statistics.median(runs[v])))
    out = {}
    for v, values in times.items():
        all_ms = [ms for _, ms in values]
        out[v] = {"p50": round(search_bench.pct(all_ms, 50), 2), "p99": round(search_bench.pct(all_ms, 99), 2),
                  "by_class_p50": {c: round(search_bench.pct([ms for k, ms in values if k == c], 50), 2)
                                   for c in search_bench.CLASSES}}
    for engine in engines_:
        at = "" if engine == "fts5" else f"@{engine}"
        out[f"fused_over_items{at}"] = {p: round(out[f"fused{at}"][p] / out[f"items{at}"][p], 2)
                                        for p in ("p50", "p99")}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, default=10_000)
    ap.add_argument("--data", type=Path, default=HERE / "data")
    ap.add_argument("--rebuild", action="store_true")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--tokenizers", action="store_true", help="compare the word-level and the trigram index")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--engine", action="append", default=None,
                    help="search index engine(s) to measure, side by side: fts5 (default), tantivy; repeat it")
    args = ap.parse_args()
    engines_ = tuple(dict.fromkeys(args.engine or ["fts5"]))
    report = {}
    for tok in (("word", "trigram") if args.tokenizers else ("word",)):
        path, meta = library(args.data, args.sessions, tok, args.rebuild)
        indexes = {e: engine_indexes(path, e) for e in engines_ if e != "fts5"}
        conn = open_readonly(path)
        queries = search_bench.query_set(conn)
        report[tok] = {"build": meta, "size": sizes(conn), "engine_indexes": indexes,
                       "latency_ms": measure(conn, queries, args.repeat, engines_), "queries": len(queries)}
        conn.close()
        print(json.dumps({tok: report[tok]}, indent=1))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
