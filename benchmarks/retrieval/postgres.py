"""The retrieval benchmark's rankings on both store backends, side by side: the items lane alone,
and the fused search (items and messages lanes, the default).

    nice -n 10 .venv/bin/python benchmarks/retrieval/postgres.py [--json out.json]

Ingests the three labelled sets exactly as bench.py does (real connectors, offline summarizer,
SQLite), copies each library into PostgreSQL with `jezero migrate-store`'s code (the same items,
the same ids), then asks every query of every set through `jezero.query.search` on both,
with lanes=("items",) (FTS5's bm25 on SQLite, ts_rank_cd with FTS5's IDFs on PostgreSQL,
jezero_store_postgres/search.py) and with both lanes (the messages lane: FTS5's bm25 on SQLite,
the same bm25 computed from PostgreSQL's messages_search, jezero_store_postgres/messages.py). Prints R@1, R@5, R@10 and MRR@10 per kind and overall, and per
half (A, B) as bench.py --halves does. The postgres constants were set before this ran, on no
query of it (SUBSTRING_CREDIT, the length normalisation): both halves are a check.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench  # noqa: E402
from chats import CHAT_KINDS, chat_specs  # noqa: E402
from longchats import LONG_KINDS, long_chat_specs  # noqa: E402
from queries import KINDS, QUERIES  # noqa: E402
from specs import all_specs  # noqa: E402

SYSTEMS = ("sqlite", "postgres", "sqlite+msg", "pg+msg")  # items lane alone; fused (both lanes)
LANE = {"sqlite": "items", "postgres": "items", "sqlite+msg": "fused", "pg+msg": "fused"}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    from jezero_store_postgres import connect_reader, migrate
    from jezero_store_postgres.local import LocalServer

    chats, chat_queries = chat_specs()
    longs, long_queries = long_chat_specs()
    sets = [("coding", all_specs(), QUERIES, KINDS, False), ("chats", chats, chat_queries, CHAT_KINDS, True),
            ("longchats", longs, long_queries, LONG_KINDS, True)]
    out: dict = {}
    with tempfile.TemporaryDirectory(prefix="jezero-retrieval-pg-") as tmp, LocalServer() as pg:
        everything: dict[str, list[dict]] = defaultdict(list)
        for name, specs, queries, kinds, scoped in sets:
            lib = bench.build_library(specs, Path(tmp) / name, "offline")
            url = pg.create_database(name)
            report = migrate.to_postgres(Path(tmp) / name / "library.sqlite3", url)
            assert report.verified, report.differing()
            conn = connect_reader(url)
            results: dict[str, list[dict]] = defaultdict(list)
            for q in queries:
                project = lib.projects[q.relevant[0]] if scoped else None
                row = {"query": q}
                for system in SYSTEMS:
                    c = lib.conn if system.startswith("sqlite") else conn
                    row[system] = bench.score(bench.lane_ranking(c, LANE[system], q.text, lib.by_session,
                                                                 project=project), q.relevant)
                results[q.kind].append(row)
                everything[f"{name}"].append(row)
            conn.close()
            print(f"\n{name} set ({len(queries)} queries; items lane alone, then fused with the messages lane)")
            print(bench.table(results, kinds, SYSTEMS))
            print(bench.halves_table(results, SYSTEMS))
            rows = [r for v in results.values() for r in v]
            of = bench.halves(results)
            out[name] = {"all": bench.aggregate(rows, SYSTEMS),
                         **{h: bench.aggregate([r for r in rows if of[bench.half_key(r["query"])] == h], SYSTEMS)
                            for h in "AB"}}
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
