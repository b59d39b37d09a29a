"""The figures issue 12's `later`, current-first and offline-summary work is judged by, split into
halves so that a rule tuned on one half is checked on the other.

    .venv/bin/python benchmarks/retrieval/later_eval.py           # the tables, both halves
    .venv/bin/python benchmarks/retrieval/later_eval.py --rows    # plus what later listed, per call
    .venv/bin/python benchmarks/retrieval/later_eval.py --keep D  # keep both libraries in D

It builds the same two libraries as bench.py (its functions, its data) and prints:

- the items lane and the fused search per query kind (R@1 / R@5 / R@10 / MRR@10);
- `later` precision / recall on the coding chains (no query, and the decision's words) and on the
  chats' changed plans, per half;
- how many decision queries put the current decision first, with and without recency.

Halves: a query by `zlib.crc32(text) % 2`, a chain by `zlib.crc32(its first session key) % 2`
(A = 0 tunes, B = 1 checks), as the fusion work did (README.md).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import zlib
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench  # noqa: E402
from chats import CHAT_KINDS, chat_specs  # noqa: E402
from queries import CHAINS, KINDS, QUERIES, chain_query  # noqa: E402
from specs import all_specs  # noqa: E402


def half(text: str) -> str:
    return "AB"[zlib.crc32(text.encode("utf-8")) % 2]


def lanes_table(lib, queries, kinds, scoped: bool) -> str:
    rows: dict[str, list] = defaultdict(list)
    halves: dict[str, list] = defaultdict(list)
    for q in queries:
        project = lib.projects[q.relevant[0]] if scoped else None
        row = {name: bench.score(bench.lane_ranking(lib.conn, name, q.text, lib.by_session, project=project), q.relevant)
               for name in ("items", "fused")}
        rows[q.kind].append(row)
        halves["half " + half(q.text)].append(row)
    return (bench.table(rows, kinds, ("items", "fused")) + "\n"
            + "\n".join(bench.table(halves, (h,), ("items", "fused")).splitlines()[2] for h in ("half A", "half B")))


def later_split(conn, chains, lib, queries=None) -> str:
    parts = []
    for name, chosen in (("A", [c for c in chains if half(c[0]) == "A"]),
                         ("B", [c for c in chains if half(c[0]) == "B"]), ("all", chains)):
        f = bench.later_figures(conn, chosen, lib.by_key, lib.by_session,
                                {c: queries[c] for c in chosen} if queries else None)
        p = "-" if f["precision"] is None else f"{f['precision']:.3f}"
        r = "-" if f["recall"] is None else f"{f['recall']:.3f}"
        parts.append(f"{name} {p}/{r} ({f['listed_right']}+ {f['listed_wrong']}- {f['missed']} missed)")
    return "   ".join(parts)


def later_rows(conn, chains, lib, queries=None) -> None:
    f = bench.later_figures(conn, chains, lib.by_key, lib.by_session, queries)
    for r in f["rows"]:
        print(f"  {r['from']:<22} {r['matched_by']:<16} listed {r['listed']} want {r['want']}")


def current_first(lib) -> str:
    out = []
    for weight in (None, 0.0):
        firsts, wrong = 0, []
        decisions = [q for q in QUERIES if q.kind == "decision"]
        for q in decisions:
            ranking = bench.items_ranking(lib.conn, q.text, lib.by_session, recency_weight=weight)
            if ranking[:1] == list(q.relevant[:1]):
                firsts += 1
            else:
                wrong.append(f"{q.text!r} -> {ranking[:3]}")
        label = "default recency" if weight is None else "recency_weight 0"
        out.append(f"{label}: {firsts} of {len(decisions)} first" + "".join(f"\n    miss {w}" for w in wrong))
    return "\n".join(out)


def facts_kept(lib, chat_queries) -> str:
    """How many of the chats' planted facts (bench's needles) the item of their session holds, in
    its title, summary, questions or atoms: what an agent reading items alone can know."""
    kept = total = 0
    for q in chat_queries:
        for key, needle in q.needles:
            total += 1
            for row in lib.conn.execute("SELECT title || summary || questions || atoms FROM items WHERE session_id = ?",
                                        (lib.by_key[key].id,)):
                if needle in row[0] or json.dumps(needle)[1:-1] in row[0]:
                    kept += 1
                    break
    atoms = [len(json.loads(r[0])) for r in lib.conn.execute("SELECT atoms FROM items")]
    return f"facts kept in their item: {kept} of {total}; atoms per item {sum(atoms) / len(atoms):.1f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", action="store_true")
    parser.add_argument("--keep", type=Path)
    parser.add_argument("--summarizer", default="offline")
    args = parser.parse_args()
    tmp = None
    if args.keep:
        folder = args.keep
        folder.mkdir(parents=True, exist_ok=False)
    else:
        tmp = tempfile.TemporaryDirectory(prefix="jezero-later-")
        folder = Path(tmp.name)
    try:
        specs = all_specs()
        chats, chat_queries = chat_specs()
        lib = bench.build_library(specs, folder / "coding", args.summarizer)
        chat_lib = bench.build_library(chats, folder / "chats", args.summarizer)
        print("coding set, items and fused")
        print(lanes_table(lib, QUERIES, KINDS, scoped=False))
        print("\nconversational set, items and fused")
        print(lanes_table(chat_lib, chat_queries, CHAT_KINDS, scoped=True))
        print(facts_kept(chat_lib, chat_queries))
        chat_chains = [q.relevant if q.kind == "chat_multi" else (q.needles[0][0], q.needles[1][0])
                       for q in chat_queries if q.kind in ("chat_multi", "chat_update")]
        words = {c: chain_query(c) for c in CHAINS}
        print("\nlater precision/recall per half")
        print("coding, no query      ", later_split(lib.conn, CHAINS, lib))
        print("coding, decision words", later_split(lib.conn, CHAINS, lib, words))
        print("chats, no query       ", later_split(chat_lib.conn, chat_chains, chat_lib))
        print("\ncurrent decision first (items lane)")
        print(current_first(lib))
        if args.rows:
            for name, conn, chains, lb, qs in (("no query", lib.conn, CHAINS, lib, None),
                                              ("decision words", lib.conn, CHAINS, lib, words),
                                              ("chats", chat_lib.conn, chat_chains, chat_lib, None)):
                print(f"\nlater, {name}:")
                later_rows(conn, chains, lb, qs)
        lib.conn.close()
        chat_lib.conn.close()
    finally:
        if tmp is not None:
            tmp.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
