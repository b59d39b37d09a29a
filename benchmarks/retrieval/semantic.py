"""The semantic lane on the retrieval benchmark: keyword, vector and hybrid, per query kind.

Builds bench.py's three sets exactly as it does (the coding set, the conversational set, the
long-chat set: its writers, its libraries, its queries and its scoring), embeds each library with
`jezero embed`'s own pass (jezero.ingest.embed), then asks every query three ways:

- keyword: `search(..., lanes=("items", "messages"))`, today's default search;
- vector:  `search(..., lanes=("vectors",))`, the vector lane alone;
- hybrid:  `search(...)` with the lane on: the three lanes fused, literal matches kept in place
  (query/vectors.py LITERAL_IDF);
- unguarded (with `--unguarded`): the hybrid without that guard (LITERAL_GUARD off), as before it.

    .venv/bin/python benchmarks/retrieval/semantic.py                       # the real embedder if installed
    .venv/bin/python benchmarks/retrieval/semantic.py --embedder hashing    # the test embedder (no model)
    .venv/bin/python benchmarks/retrieval/semantic.py --weights 0.5,1,2     # the lane's weight, tuned on half A
    .venv/bin/python benchmarks/retrieval/semantic.py --literal-idf 0.5,1,2,off --unguarded
    .venv/bin/python benchmarks/retrieval/semantic.py --engine tantivy                 # items and messages on tantivy
    .venv/bin/python benchmarks/retrieval/semantic.py --json out.json

With `--weights` and `--literal-idf`, each pair is scored on half A of the queries (bench.halves:
stratified by kind, the halves bench.py --halves prints) and the best is reported on half B, which
took no part in choosing it, and on the whole. Best on A: the fewest kinds (of all three sets)
where the hybrid's R@5 is below keyword's, then the hybrid's R@5 summed over the three sets (each
set counts once, as in bench.py's criterion), then its MRR@10 summed likewise, then (a tie) the
larger LITERAL_IDF: the guard over the fewest words.
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

import bench  # noqa: E402
from bench import LIMIT, NOW, aggregate, build_library, dedupe, half_key, score, table  # noqa: E402
from bench import halves as bench_halves  # noqa: E402
from chats import CHAT_KINDS, chat_specs  # noqa: E402
from longchats import LONG_KINDS, long_chat_specs  # noqa: E402
from queries import KINDS, QUERIES  # noqa: E402
from specs import all_specs  # noqa: E402

from jezero import plugins  # noqa: E402
from jezero.config import Config, SearchConfig, SemanticConfig  # noqa: E402
from jezero.ingest.embed import embed_library  # noqa: E402
from jezero.models import EmbedderNotReady  # noqa: E402
from jezero.query import search  # noqa: E402
from jezero.query import vectors as vector_query  # noqa: E402
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


def guarded(literal_idf: float | None):
    """Set the vector lane's literal guard (query/vectors.py): None turns it off."""
    vector_query.LITERAL_GUARD = literal_idf is not None
    if literal_idf is not None:
        vector_query.LITERAL_IDF = literal_idf


def rankings(lib, lane: VectorLane, q, project, systems, literal_idf) -> dict[str, list[str]]:
    base = {"limit": LIMIT, "now": NOW, "project": project, "options": bench.OPTIONS}

    def keys(hits):
        return dedupe(lib.by_session.get(h.get("session_id"), "?") for h in hits)

    out = {"keyword": keys(search(lib.conn, q.text, lanes=("items", "messages"), **base)),
           "vector": keys(search(lib.conn, q.text, lanes=("vectors",), semantic=lane, **base))}
    guarded(literal_idf)
    out["hybrid"] = keys(search(lib.conn, q.text, semantic=lane, **base))
    if "unguarded" in systems:
        guarded(None)
        out["unguarded"] = keys(search(lib.conn, q.text, semantic=lane, **base))
    guarded(literal_idf)
    return out


def run(lib, lane: VectorLane, queries, scoped: bool, systems=SYSTEMS, literal_idf=None) -> dict[str, list[dict]]:
    results: dict[str, list[dict]] = defaultdict(list)
    for q in queries:
        project = lib.projects[q.relevant[0]] if scoped else None
        ranked = rankings(lib, lane, q, project, systems, literal_idf)
        row = {"query": q, **{name: score(ranked[name], q.relevant) for name in systems}}
        row.update({name + "_top": ranked[name][:3] for name in systems})
        results[q.kind].append(row)
    return results


def halves(results: dict[str, list[dict]]) -> tuple[dict, dict]:
    """(half A, half B) of a set's results, as bench.py --halves deals them (bench.halves:
    stratified by kind)."""
    of = bench_halves(results)
    tune, held = defaultdict(list), defaultdict(list)
    for kind, rows in results.items():
        for r in rows:
            (tune if of[half_key(r["query"])] == "A" else held)[kind].append(r)
    return tune, held


def kinds_below(results: dict[str, list[dict]], system: str = "hybrid", field: str = "r5") -> list[str]:
    """The kinds where `system` scores below keyword alone (mean `field`)."""
    return [kind for kind, rows in sorted(results.items())
            if sum(getattr(r[system], field) for r in rows) < sum(getattr(r["keyword"], field) for r in rows) - 1e-9]


def flat(results: dict[str, list[dict]]) -> list[dict]:
    return [r for rows in results.values() for r in rows]


def parse_idf(text: str) -> float | None:
    return None if text.strip() in ("off", "none") else float(text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--embedder", help=f"embedder name (default: {REAL} when installed, else hashing)")
    parser.add_argument("--weights", help="comma-separated lane weights to tune on half A")
    parser.add_argument("--literal-idf", help="comma-separated LITERAL_IDF values to tune on half A ('off': no guard)")
    parser.add_argument("--unguarded", action="store_true", help="also report the hybrid without the literal guard")
    parser.add_argument("--options", type=json.loads, default={}, help='the embedder\'s options as JSON, e.g. \'{"cache_dir": "/x"}\'')
    parser.add_argument("--k", type=int, default=SemanticConfig().k)
    parser.add_argument("--engine", default="fts5", help="the search index engine: fts5 (default) or tantivy")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--misses", action="store_true", help="list the queries hybrid misses at 5")
    parser.add_argument("--changes", action="store_true", help="list the queries whose first relevant rank moved from keyword to hybrid")
    args = parser.parse_args()
    bench.OPTIONS = SearchConfig(engine=args.engine)  # build_library syncs the engine's indexes

    name = choose_embedder(args.embedder, args.options)
    options = args.options if name != "hashing" else {}
    weights = [float(w) for w in args.weights.split(",")] if args.weights else [SemanticConfig().weight]
    idfs = ([parse_idf(v) for v in args.literal_idf.split(",")] if args.literal_idf
            else [vector_query.LITERAL_IDF if vector_query.LITERAL_GUARD else None])
    systems = SYSTEMS + (("unguarded",) if args.unguarded else ())
    specs = all_specs()
    chats, chat_queries = chat_specs()
    longs, long_queries = long_chat_specs()
    sets = {"coding": (specs, QUERIES, KINDS, False), "chats": (chats, chat_queries, CHAT_KINDS, True),
            "longchats": (longs, long_queries, LONG_KINDS, True)}
    titles = {"coding": "coding set (all queries)",
              "chats": "conversational set (all queries, each within its conversation)",
              "longchats": "long-chat set (all queries, each within its conversation)"}
    out: dict = {"embedder": name, "k": args.k, "engine": args.engine}
    with tempfile.TemporaryDirectory(prefix="jezero-semantic-") as tmp:
        folder = Path(tmp)
        libs = {set_name: build_library(s_specs, folder / set_name, "offline")
                for set_name, (s_specs, _, _, _) in sets.items()}
        base = SemanticConfig(enabled=True, embedder=name, options=options, k=args.k)
        out["embedding"] = {set_name: embed(folder / set_name / "library.sqlite3", base) for set_name in sets}
        print(f"embedder: {name} ({out['embedding']['coding']['model_id']}, "
              f"{out['embedding']['coding']['dimension']} dims)")
        for set_name, e in out["embedding"].items():
            print(f"  {set_name}: {e['items']} items + {e['windows']} message windows embedded in {e['cpu_s']} s CPU "
                  f"({e['vectors_per_cpu_s']} vectors per CPU second, writing included)")
        sweep = []
        chosen = None
        tuning = len(weights) * len(idfs) > 1
        for w in weights:
            lane = VectorLane(base.model_copy(update={"weight": w}))
            for idf in idfs:
                results = {set_name: run(libs[set_name], lane, queries, scoped, systems, idf)
                           for set_name, (_, queries, _, scoped) in sets.items()}
                tune = {set_name: halves(res)[0] for set_name, res in results.items()}
                below = [f"{set_name}/{kind}" for set_name, res in tune.items() for kind in kinds_below(res)]
                per_set = {set_name: aggregate(flat(res), SYSTEMS)["hybrid"] for set_name, res in tune.items()}
                figure = {f: round(sum(x[f] for x in per_set.values()), 4) for f in ("r5", "rr")}
                sweep.append({"weight": w, "literal_idf": idf, "half_a_kinds_below_keyword_r5": below,
                              "half_a_hybrid": figure})
                if tuning:
                    print(f"weight {w}, literal IDF {idf if idf is not None else 'off'}: half A kinds below keyword at R@5 "
                          f"{len(below)} {below}, hybrid R@5 {figure['r5']:.3f}, MRR {figure['rr']:.3f} (summed over the sets)")
                rank = (-len(below), figure["r5"], figure["rr"], idf if idf is not None else -1.0)
                if chosen is None or rank > chosen[0]:
                    chosen = (rank, w, idf, results)
        _, w, idf, results = chosen
        guarded(idf)
        out.update(weight=w, literal_idf=idf, sweep=sweep)
        print(f"\nlane weight {w}, literal IDF {idf if idf is not None else 'off'}"
              + (" (chosen on half A)" if tuning else "") + "\n")
        for set_name, (_, _, kinds, _) in sets.items():
            res = results[set_name]
            print(titles[set_name])
            print(table(res, kinds, systems))
            a, b = halves(res)
            print(f"  kinds below keyword at R@5, hybrid: all {kinds_below(res) or 'none'}, A {kinds_below(a) or 'none'}, "
                  f"B {kinds_below(b) or 'none'}"
                  + (f"; unguarded: all {kinds_below(res, 'unguarded') or 'none'}" if args.unguarded else ""))
            print(f"\n{set_name}, half B only (took no part in choosing)")
            print(table(b, kinds, systems))
            print()
            out[set_name] = {kind: aggregate(rows, systems) for kind, rows in res.items()}
            out[set_name]["overall"] = aggregate(flat(res), systems)
            out.setdefault("half_b", {})[set_name] = {kind: aggregate(rows, systems) for kind, rows in b.items()}
            out["half_b"][set_name]["overall"] = aggregate(flat(b), systems)
            out.setdefault("half_a", {})[set_name] = {"overall": aggregate(flat(a), systems)}
        for set_name, res in results.items():
            of = bench_halves(res)
            for rows in res.values():
                for r in rows:
                    q = r["query"]
                    moved = (r["keyword"].first or 99) != (r["hybrid"].first or 99)
                    if (args.misses and r["hybrid"].r5 < 1.0) or (args.changes and moved):
                        print(f"- {set_name} [{q.kind}, {of[half_key(q)]}] {q.text!r} -> {q.relevant}: "
                              + "; ".join(f"{s} {r[s].first or '>10'} {r[s + '_top']}" for s in systems))
        for lib in libs.values():
            lib.conn.close()
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
