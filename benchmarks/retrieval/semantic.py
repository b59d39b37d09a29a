"""The semantic lane on the retrieval benchmark: keyword, vector and hybrid, per query kind.

Builds the coding set and the conversational set exactly as bench.py does (its writers, its
libraries, its queries and its scoring), embeds both libraries with `jezero embed`'s own pass
(jezero.ingest.embed), then asks every query three ways:

- keyword: `search(..., lanes=("items", "messages"))`, today's default search;
- vector:  `search(..., lanes=("vectors",))`, the vector lane alone;
- hybrid:  `search(...)` with the lane on: the three lanes fused.

    .venv/bin/python benchmarks/retrieval/semantic.py                       # the real embedder if installed
    .venv/bin/python benchmarks/retrieval/semantic.py --embedder hashing    # the test embedder (no model)
    .venv/bin/python benchmarks/retrieval/semantic.py --weights 0.5,1,2     # the lane's weight, tuned on half
    .venv/bin/python benchmarks/retrieval/semantic.py --json out.json

With `--weights`, each weight is scored on one half of the queries (even positions within each
kind) and the best is reported on the other half, which took no part in choosing it.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench import LIMIT, NOW, aggregate, build_library, dedupe, score, table  # noqa: E402
from chats import CHAT_KINDS, chat_specs  # noqa: E402
from queries import KINDS, QUERIES  # noqa: E402
from specs import all_specs  # noqa: E402

from jezero import plugins  # noqa: E402
from jezero.config import Config, SemanticConfig  # noqa: E402
from jezero.ingest.embed import embed_library  # noqa: E402
from jezero.models import EmbedderNotReady  # noqa: E402
from jezero.query import search  # noqa: E402
from jezero.query.vectors import VectorLane  # noqa: E402

SYSTEMS = ("keyword", "vector", "hybrid")
REAL = "minilm-static"


def choose_embedder(name: str | None, options: dict) -> str:
    """The real embedder when it is installed and ready (or the one asked for); else the test
    kit's hashing embedder, registered here. Says which on stderr."""
    types = plugins.embedder_types()
    wanted = name or REAL
    if wanted in types:
        try:
            types[wanted].build(options)
            return wanted
        except EmbedderNotReady as e:
            if name:
                raise SystemExit(f"embedder {wanted}: {e}")
            print(f"note: {wanted} is installed but not ready ({e}); using the hashing test embedder",
                  file=sys.stderr)
    elif name and name != "hashing":
        raise SystemExit(f"embedder {name!r} is not installed (installed: {', '.join(sorted(types)) or 'none'})")
    from jezero.plugin.testing import HashingEmbedderPlugin

    if "hashing" not in types:
        plugins.get_plugin_manager().register(HashingEmbedderPlugin(), name="bench:hashing")
    if not name and wanted not in types:
        print(f"note: {REAL} is not installed; using the hashing test embedder (knows no meaning)", file=sys.stderr)
    return "hashing"


def embed(library: Path, semantic: SemanticConfig) -> dict:
    config = Config.model_validate({"storage": {"path": str(library)}, "semantic": semantic.model_dump()})
    started = time.process_time()
    report = embed_library(config, batch=256)
    cpu = time.process_time() - started
    return {"items": report.embedded, "windows": report.windows, "cpu_s": round(cpu, 2),
            "vectors_per_cpu_s": round((report.embedded + report.windows) / cpu, 1) if cpu else None,
            "model_id": report.model_id, "dimension": report.dimension}


def rankings(lib, lane: VectorLane, q, project) -> dict[str, list[str]]:
    base = {"limit": LIMIT, "now": NOW, "project": project}

    def keys(hits):
        return dedupe(lib.by_session.get(h.get("session_id"), "?") for h in hits)

    return {"keyword": keys(search(lib.conn, q.text, lanes=("items", "messages"), **base)),
            "vector": keys(search(lib.conn, q.text, lanes=("vectors",), semantic=lane, **base)),
            "hybrid": keys(search(lib.conn, q.text, semantic=lane, **base))}


def run(lib, lane: VectorLane, queries, scoped: bool) -> dict[str, list[dict]]:
    results: dict[str, list[dict]] = defaultdict(list)
    for q in queries:
        project = lib.projects[q.relevant[0]] if scoped else None
        ranked = rankings(lib, lane, q, project)
        row = {"query": q, **{name: score(ranked[name], q.relevant) for name in SYSTEMS}}
        row.update({name + "_top": ranked[name][:3] for name in SYSTEMS})
        results[q.kind].append(row)
    return results


def halves(results: dict[str, list[dict]]) -> tuple[dict, dict]:
    """(tuning half, held-out half): alternate queries within each kind."""
    tune, held = defaultdict(list), defaultdict(list)
    for kind, rows in results.items():
        for i, r in enumerate(rows):
            (tune if i % 2 == 0 else held)[kind].append(r)
    return tune, held


def flat(results: dict[str, list[dict]]) -> list[dict]:
    return [r for rows in results.values() for r in rows]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--embedder", help=f"embedder name (default: {REAL} when installed, else hashing)")
    parser.add_argument("--weights", help="comma-separated lane weights to tune on half the queries")
    parser.add_argument("--options", type=json.loads, default={}, help='the embedder\'s options as JSON, e.g. \'{"cache_dir": "/x"}\'')
    parser.add_argument("--k", type=int, default=SemanticConfig().k)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--misses", action="store_true", help="list the queries hybrid misses at 5")
    args = parser.parse_args()

    name = choose_embedder(args.embedder, args.options)
    options = args.options if name != "hashing" else {}
    weights = [float(w) for w in args.weights.split(",")] if args.weights else [SemanticConfig().weight]
    specs = all_specs()
    chats, chat_queries = chat_specs()
    out: dict = {"embedder": name, "k": args.k}
    with tempfile.TemporaryDirectory(prefix="jezero-semantic-") as tmp:
        folder = Path(tmp)
        lib = build_library(specs, folder / "coding", "offline")
        chat_lib = build_library(chats, folder / "chats", "offline")
        base = SemanticConfig(enabled=True, embedder=name, options=options, k=args.k)
        out["embedding"] = {"coding": embed(folder / "coding" / "library.sqlite3", base),
                            "chats": embed(folder / "chats" / "library.sqlite3", base)}
        print(f"embedder: {name} ({out['embedding']['coding']['model_id']}, "
              f"{out['embedding']['coding']['dimension']} dims)")
        for set_name, e in out["embedding"].items():
            print(f"  {set_name}: {e['items']} items + {e['windows']} message windows embedded in {e['cpu_s']} s CPU "
                  f"({e['vectors_per_cpu_s']} vectors per CPU second, writing included)")
        sweep = []
        chosen = None
        for w in weights:
            lane = VectorLane(base.model_copy(update={"weight": w}))
            coding = run(lib, lane, QUERIES, scoped=False)
            chat = run(chat_lib, lane, chat_queries, scoped=True)
            tune = flat(halves(coding)[0]) + flat(halves(chat)[0])
            figure = aggregate(tune, SYSTEMS)["hybrid"]
            sweep.append({"weight": w, "tuning_half_hybrid": figure})
            if len(weights) > 1:
                print(f"weight {w}: tuning half hybrid R@5 {figure['r5']:.3f}, MRR {figure['rr']:.3f}")
            if chosen is None or (figure["r5"], figure["rr"]) > (chosen[1]["r5"], chosen[1]["rr"]):
                chosen = (w, figure, coding, chat)
        w, _, coding, chat = chosen
        out.update(weight=w, sweep=sweep)
        print(f"\nlane weight {w}" + (" (chosen on the tuning half)" if len(weights) > 1 else "") + "\n")
        print("coding set (all queries)")
        print(table(coding, KINDS, SYSTEMS))
        print("\nconversational set (all queries, each within its conversation)")
        print(table(chat, CHAT_KINDS, SYSTEMS))
        if len(weights) > 1:
            print("\nheld-out half only (took no part in choosing the weight)")
            print(table(halves(coding)[1], KINDS, SYSTEMS))
            print(table(halves(chat)[1], CHAT_KINDS, SYSTEMS))
        out["coding"] = {kind: aggregate(rows, SYSTEMS) for kind, rows in coding.items()}
        out["chats"] = {kind: aggregate(rows, SYSTEMS) for kind, rows in chat.items()}
        out["held_out"] = {"coding": aggregate(flat(halves(coding)[1]), SYSTEMS),
                           "chats": aggregate(flat(halves(chat)[1]), SYSTEMS)}
        if args.misses:
            for rows in (*coding.values(), *chat.values()):
                for r in rows:
                    if r["hybrid"].r5 < 1.0:
                        q = r["query"]
                        print(f"- [{q.kind}] {q.text!r} -> {q.relevant}: "
                              + "; ".join(f"{s} {r[s].first or '>10'} {r[s + '_top']}" for s in SYSTEMS))
        lib.conn.close()
        chat_lib.conn.close()
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
