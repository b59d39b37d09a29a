"""A second stage over the fused search's first sessions: measured offline (branch `rerank12`).

Issue 12 asks for recall@10 >= 0.95 on the conversational set; the semantic lane with `e5-minilm`
reaches 0.898, and every chat question it misses has its session between 11th and 20th. A
cross-encoder over the first N sessions is the usual second stage; none can be had here (no
reranker's weights in a PyPI or npm package: benchmarks/retrieval/README.md, 2026-12-04, branch
`rerank12`). So this measures the next thing the weights at hand allow: the first N sessions of
the fused ranking re-ordered by how near each session's *shorter* message windows are to the
query, each model (e5-small, minilm) ranking the N by its own best cosine over the session's
vectors in a second library of the same sessions embedded at shorter windows, fused with the
first stage's own rank by reciprocal rank:

    score(s) = 1 / (first_k + first_rank(s)) + sum over models 1 / (k + model_rank(s))

(`first_k` none: the first stage's order counts only on a tie). The sessions past N keep their
place. Nothing here is in the library: the rule is `rerank()`, the rest reads two `semantic.py
--keep` folders of the same set.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/retrieval/rerank.py --first RUNS/pr --second RUNS/pw250 \\
        --options '{"cache_dir": C}' --vector-cache V --sets chats --json out.json

`--first` holds the libraries the search reads (embedded at 400-character windows, `e5-minilm`),
`--second` the same sets embedded at shorter windows (several folders, comma-separated: each gives
its own two signals). `--flat yes` re-orders only the queries the lane treats as flat (no session
holds a literal term of them), `both` sweeps both. The cost is timed as a search would pay it: the
search at limit 10 against the search at the deepest depth plus those sessions' vectors read from
the second library and scored, interleaved (the query's vector is the first stage's). Every (depth, first_k, k) is
scored on half A (semantic.py's criterion, and raw BM25 too: the fewest kinds below keyword search
at R@5 or below raw BM25 at R@5 or R@10, then the fewest kinds below the first stage alone at R@5
or R@10, then R@10 summed over the sets (the issue's conversational target), R@5, MRR), the best reported on half B and on all questions, with
keyword search, raw transcript BM25 and the first stage alone beside it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def rerank(first: list[str], signals: list[dict[str, float]], depth: int, first_k: float | None,
           k: float) -> list[str]:
    """`first` (the first stage's sessions, best first) with its first `depth` re-ordered: each
    signal ({session: score}, higher nearer) ranks those sessions by its score, and a session's
    new score is 1 / (first_k + its first-stage rank) (nothing when first_k is None) plus, for
    each signal, 1 / (k + its rank there); a session a signal does not score gets no share of it.
    Ties keep the first stage's order; the sessions past `depth` keep their places."""
    head, tail = first[:depth], first[depth:]
    total = {s: (1.0 / (first_k + r) if first_k is not None else 0.0) for r, s in enumerate(head, start=1)}
    for signal in signals:
        scored = sorted((s for s in head if s in signal), key=lambda s: (-signal[s], head.index(s)))
        for r, s in enumerate(scored, start=1):
            total[s] += 1.0 / (k + r)
    return sorted(head, key=lambda s: (-total[s], head.index(s))) + tail


def session_vectors(conn, by_session: dict[str, str]):
    """Every vector of a library (items' and windows') as (matrix, the session key of each row)."""
    import numpy as np

    rows = conn.execute("SELECT i.session_id, f.embedding FROM item_floats AS f JOIN items AS i ON i.id = f.item_id "
                        "UNION ALL SELECT i.session_id, w.embedding FROM window_floats AS w "
                        "JOIN items AS i ON i.id = w.item_id").fetchall()
    keys = [by_session.get(r[0]) for r in rows]
    matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)
    return matrix, keys


def head_vectors(conn, session_ids: list[str]):
    """The vectors of the given sessions only (what a search would read for its first N), as
    (matrix, the session id of each row)."""
    import numpy as np

    marks = ",".join("?" * len(session_ids))
    rows = conn.execute(f"SELECT i.session_id, f.embedding FROM item_floats AS f JOIN items AS i ON i.id = f.item_id "
                        f"WHERE i.session_id IN ({marks}) UNION ALL SELECT i.session_id, w.embedding "
                        f"FROM window_floats AS w JOIN items AS i ON i.id = w.item_id WHERE i.session_id IN ({marks})",
                        [*session_ids, *session_ids]).fetchall()
    matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)
    return matrix, [r[0] for r in rows]


def best_cosines(matrix, keys, query, parts) -> list[dict[str, float]]:
    """For each model's dimensions (parts), each session's best cosine with the query."""
    import numpy as np

    out = []
    for start, stop in parts:
        q = query[start:stop]
        qn = float(np.linalg.norm(q))
        block = matrix[:, start:stop]
        norms = np.linalg.norm(block, axis=1)
        cos = (block @ q) / np.maximum(norms * qn, 1e-12)
        best: dict[str, float] = {}
        for key, c in zip(keys, cos.tolist()):
            if key is not None and c > best.get(key, -2.0):
                best[key] = c
        out.append(best)
    return out


def below_raw(results: dict[str, list[dict]], system: str = "hybrid") -> list[str]:
    """The kinds where `system` is below raw transcript BM25 at R@5 or at R@10."""
    return [kind for kind, rows in sorted(results.items())
            if any(sum(getattr(r[system], f) for r in rows) < sum(getattr(r["raw"], f) for r in rows) - 1e-9
                   for f in ("r5", "r10"))]


def below_first(results: dict[str, list[dict]]) -> list[str]:
    """The kinds where the reranked search is below the first stage alone at R@5 or at R@10."""
    return [kind for kind, rows in sorted(results.items())
            if any(sum(getattr(r["hybrid"], f) for r in rows) < sum(getattr(r["first"], f) for r in rows) - 1e-9
                   for f in ("r5", "r10"))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--first", type=Path, required=True)
    parser.add_argument("--second", required=True,
                        help="the second library's folder; several, comma-separated: each gives its own signals")
    parser.add_argument("--first-windows", type=int, default=400)
    parser.add_argument("--embedder", default="e5-minilm")
    parser.add_argument("--options", type=json.loads, default={})
    parser.add_argument("--vector-cache", type=Path)
    parser.add_argument("--sets", default="coding,chats,longchats")
    parser.add_argument("--depths", default="10,15,20,30")
    parser.add_argument("--first-ks", default="off,1,5,20,60")
    parser.add_argument("--ks", default="1,5,20,60")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--misses", action="store_true")
    parser.add_argument("--flat", choices=("no", "yes", "both"), default="no",
                        help="rerank only the flat queries (no session holds a literal term of them): yes; both: sweep")
    args = parser.parse_args()

    import bench
    import semantic
    from bench import NOW, RawIndex, aggregate, build_library, dedupe, score, table
    from chats import CHAT_KINDS, chat_specs
    from longchats import LONG_KINDS, long_chat_specs
    from queries import KINDS, QUERIES
    from specs import all_specs

    from jezero.config import SearchConfig, SemanticConfig
    from jezero.query import search
    from jezero.query.vectors import VectorLane
    from jezero.store import open_readonly
    from jezero.store import vectors as stored

    bench.OPTIONS = SearchConfig(engine="fts5")
    stored.WINDOW_CHARS = args.first_windows
    if args.vector_cache:
        semantic.cache_vectors(args.vector_cache)
    lane = VectorLane(SemanticConfig(enabled=True, embedder=args.embedder, options=args.options, flat_k=2))
    embedder = lane.embedder()
    if embedder is None or not getattr(embedder, "part_slices", None):
        raise SystemExit(f"embedder {args.embedder}: not ready or not a pair ({lane._error})")
    parts = embedder.part_slices
    all_sets = {"coding": (all_specs(), QUERIES, KINDS, False), "chats": (*chat_specs(), CHAT_KINDS, True),
                "longchats": (*long_chat_specs(), LONG_KINDS, True)}
    sets = {s: all_sets[s] for s in args.sets.split(",")}
    depths = [int(d) for d in args.depths.split(",")]
    first_ks = [None if v in ("off", "none") else float(v) for v in args.first_ks.split(",")]
    ks = [float(v) for v in args.ks.split(",")]

    # every query's rankings, once: keyword, raw, the first stage at limit 10 and at each depth,
    # and the second library's best cosines per model
    rows: dict[str, list[dict]] = {}
    timing = defaultdict(list)
    for set_name, (specs, queries, kinds, scoped) in sets.items():
        lib = build_library(specs, args.first / set_name, "offline", reuse=True)
        seconds = [open_readonly(Path(f) / set_name / "library.sqlite3") for f in args.second.split(",")]
        second = seconds[0]
        views = [session_vectors(conn, lib.by_session) for conn in seconds]
        raw = RawIndex(lib.docs, lib.ended, lib.projects)
        out = []
        for q in queries:
            project = lib.projects[q.relevant[0]] if scoped else None
            base = {"now": NOW, "project": project, "options": bench.OPTIONS}

            def ranked(hits):
                return dedupe(lib.by_session.get(h.get("session_id")) for h in hits)

            row = {"query": q, "keyword": ranked(search(lib.conn, q.text, lanes=("items", "messages"), limit=10, **base)),
                   "raw": raw.ranking(q.text, project)}
            for depth in sorted({10, *depths}):
                started = time.perf_counter()
                semantic.SEPARATION[0] = None
                row[f"first{depth}"] = ranked(search(lib.conn, q.text, semantic=lane, limit=depth, **base))
                timing[f"search{depth}"].append(time.perf_counter() - started)
                # the lane's curve for this query, as semantic.py records it: flat_k where no
                # session holds a literal term of the query, the fusion's own curve where one does
                row["flat"] = f" K {lane.config.flat_k} " in f"{semantic.SEPARATION[0]} "
            vector = stored.unit_rows(embedder, [q.text], query=True)[0]
            # the cost, as a search would pay it (the query's vector is the first stage's: no model
            # runs again): the first stage at limit 10 against the first stage at the deepest depth
            # plus the second library's vectors of its sessions read and scored, interleaved
            deepest = max(depths)
            for _ in range(2):
                started = time.perf_counter()
                search(lib.conn, q.text, semantic=lane, limit=10, **base)
                timing["plain"].append(time.perf_counter() - started)
                started = time.perf_counter()
                hits = search(lib.conn, q.text, semantic=lane, limit=deepest, **base)
                ids = list(dict.fromkeys(h.get("session_id") for h in hits))
                m, owners = head_vectors(second, ids)
                rerank(ids, best_cosines(m, owners, vector, parts), deepest, 60, 60)
                timing[f"reranked{deepest}"].append(time.perf_counter() - started)
            started = time.perf_counter()
            signals = [s for matrix, keys in views for s in best_cosines(matrix, keys, vector, parts)]
            timing["signals"].append(time.perf_counter() - started)
            row["signals"] = signals
            out.append(row)
        rows[set_name] = out
        for conn in seconds:
            conn.close()

    def results_of(set_name, ranking_of) -> dict[str, list[dict]]:
        res: dict[str, list[dict]] = defaultdict(list)
        for row in rows[set_name]:
            q = row["query"]
            res[q.kind].append({"query": q, "keyword": score(row["keyword"], q.relevant),
                                "raw": score(row["raw"], q.relevant),
                                "first": score(row["first10"], q.relevant),
                                "hybrid": score(ranking_of(row), q.relevant)})
        return res

    systems = ("keyword", "raw", "first", "hybrid")
    sweep, chosen = [], None
    variants = [(d, f, k, o) for d in depths for f in first_ks for k in ks
                for o in {"no": (False,), "yes": (True,), "both": (False, True)}[args.flat]]
    for depth, fk, k, only_flat in variants:
        def ranking_of(row, depth=depth, fk=fk, k=k, only_flat=only_flat):
            if only_flat and not row["flat"]:
                return row["first10"]
            return rerank(row[f"first{depth}"], row["signals"], depth, fk, k)[:10]

        results = {s: results_of(s, ranking_of) for s in sets}
        tune = {s: semantic.halves(r)[0] for s, r in results.items()}
        below = ([f"{s}/{kind}" for s, r in tune.items() for kind in semantic.kinds_below(r)]
                 + [f"{s}/{kind}<raw" for s, r in tune.items() for kind in below_raw(r)])
        worse = [f"{s}/{kind}" for s, r in tune.items() for kind in below_first(r)]
        per_set = {s: aggregate(semantic.flat(r), systems)["hybrid"] for s, r in tune.items()}
        figure = {f: round(sum(x[f] for x in per_set.values()), 4) for f in ("r5", "rr", "r10")}
        entry = {"depth": depth, "first_k": fk, "k": k, "only_flat": only_flat, "half_a_below": below, "half_a_worse": worse,
                 "half_a": figure,
                 "all": {s: aggregate(semantic.flat(r), systems)["hybrid"] for s, r in results.items()},
                 "half_b": {s: aggregate(semantic.flat(semantic.halves(r)[1]), systems)["hybrid"]
                            for s, r in results.items()}}
        sweep.append(entry)
        print(f"depth {depth} first_k {fk} k {k}{' flat only' if only_flat else ''}: A below {len(below)} {below} worse {len(worse)} {worse} A R@5 {figure['r5']:.3f} "
              f"MRR {figure['rr']:.3f} R@10 {figure['r10']:.3f}; "
              + "; ".join(f"{s} all R@10 {entry['all'][s]['r10']:.3f} B {entry['half_b'][s]['r10']:.3f}"
                          for s in sets), flush=True)
        rank = (-len(below), -len(worse), figure["r10"], figure["r5"], figure["rr"])
        if chosen is None or rank > chosen[0]:
            chosen = (rank, depth, fk, k, only_flat, results)
    _, depth, fk, k, only_flat, results = chosen
    print(f"\nchosen on half A: depth {depth}, first_k {fk}, k {k}, only flat queries {only_flat}\n")
    report = {"chosen": {"depth": depth, "first_k": fk, "k": k, "only_flat": only_flat}, "sweep": sweep,
              "timing_ms": {name: round(1000 * sorted(v)[len(v) // 2], 2) for name, v in timing.items()}}
    for set_name, res in results.items():
        kinds = sets[set_name][2]
        a, b = semantic.halves(res)
        for label, part in (("all", res), ("half A", a), ("half B", b)):
            print(f"{set_name}, {label}")
            print(table(part, kinds, systems))
            print(f"  kinds below keyword at R@5: {semantic.kinds_below(part) or 'none'}; "
                  f"below raw BM25 at R@5 or R@10: {below_raw(part) or 'none'}\n")
        report[set_name] = {label: {**{kind: aggregate(rs, systems) for kind, rs in part.items()},
                                    "overall": aggregate(semantic.flat(part), systems)}
                            for label, part in (("all", res), ("half_a", a), ("half_b", b))}
        if args.misses:
            for rs in res.values():
                for r in rs:
                    if r["hybrid"].r10 < 1.0:
                        print(f"- {set_name} {r['query'].kind} {r['query'].text!r}: first {r['first'].first}, "
                              f"reranked {r['hybrid'].first}")
    print("median ms:", report["timing_ms"])
    if args.json:
        args.json.write_text(json.dumps(report, indent=2, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
