"""recall (the tool) on the judged sets, per search index engine: the sessions of its hits, in
order, scored as bench.py scores a lane (recall@1/5/10 and MRR@10 of the first relevant session),
with the halves. A check that the tantivy messages index places recall's hits as well as FTS5
does, since its BM25 is not FTS5's to the last digit (see jezero_index_tantivy/README.md).

    .venv/bin/python benchmarks/retrieval/bench.py --keep /tmp/ret        # once: the libraries
    .venv/bin/python benchmarks/retrieval/recall_engines.py --reuse /tmp/ret

Each query runs as typed (recall matches its words literally, OR-ed, coverage first), with its
conversation as the project for the chat sets, as bench.py asks them; limit 50, no windows.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent.parent))

_spec = importlib.util.spec_from_file_location("retrieval_bench", HERE / "bench.py")
bench = importlib.util.module_from_spec(_spec)
sys.modules["retrieval_bench"] = bench
_spec.loader.exec_module(bench)

from jezero.config import SearchConfig  # noqa: E402
from jezero.query import recall  # noqa: E402
from jezero.store import engines  # noqa: E402


def ranking(lib, text: str, project, engine: str) -> list[str]:
    found = recall(lib.conn, text, projects=[project] if project else None, limit=50, window=0,
                   options=SearchConfig(engine=engine))
    used = {h["explain"]["engine"] for h in found["hits"]}
    if used - {engine}:
        raise SystemExit(f"{engine}: answered by {used}")
    return bench.dedupe(lib.by_session.get(h["session_id"], "?") for h in found["hits"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reuse", type=Path, required=True, help="the folder a bench.py --keep run left")
    ap.add_argument("--engine", action="append", default=None, help="fts5, tantivy (repeat it; default both)")
    args = ap.parse_args()
    names = tuple(args.engine or ["fts5", "tantivy"])
    specs = bench.all_specs()
    chats, chat_queries = bench.chat_specs()
    longs, long_queries = bench.long_chat_specs()
    sets = (("coding", specs, bench.QUERIES, False), ("conversational", chats, chat_queries, True),
            ("long-chat", longs, long_queries, True))
    for title, set_specs, queries, scoped in sets:
        lib = bench.build_library(set_specs, args.reuse / {"coding": "coding", "conversational": "chats",
                                                           "long-chat": "longchats"}[title], "offline", True)
        for name in names:
            if name != "fts5":
                engines.sync(name, lib.conn.filename)
        rows = defaultdict(list)
        for q in queries:
            project = lib.projects[q.relevant[0]] if scoped else None
            row = {"query": q}
            for name in names:
                row[name] = bench.score(ranking(lib, q.text, project, name), q.relevant)
            rows[q.kind].append(row)
        print(f"\n{title} set, recall by engine")
        print(bench.halves_table(rows, names))


if __name__ == "__main__":
    main()
