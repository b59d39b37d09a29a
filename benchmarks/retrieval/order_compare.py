"""Compare `bench.py --json` runs of one data set stored in different orders (storage_order.py):
per set (coding, chats, long chats), half (A, B, all) and lane (fused, messages), R@1 / R@5 /
R@10 / MRR@10, and how many queries' first three sessions differ from the first run's.

    .venv/bin/python benchmarks/retrieval/order_compare.py time=/tmp/time.json path=/tmp/path.json ...
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from chats import CHAT_KINDS  # noqa: E402
from longchats import LONG_KINDS  # noqa: E402

SYSTEMS = ("fused", "messages")
METRICS = ("r1", "r5", "r10", "rr")


def set_of(kind: str) -> str:
    return "chats" if kind in CHAT_KINDS else "longchats" if kind in LONG_KINDS else "coding"


def main(argv: list[str]) -> int:
    runs = []
    for arg in argv:
        label, _, path = arg.partition("=")
        runs.append((label, json.load(open(path))["per_query"]))
    ref = {(q["kind"], q["query"], tuple(q["relevant"])): q for q in runs[0][1]}
    head = f"{'set':<10} {'half':<4} {'order':<14}" + "".join(
        f" | {name + ' R@1':>12} {'R@5':>5} {'R@10':>5} {'MRR':>5} {'moved':>5}" for name in SYSTEMS)
    print(head)
    print("-" * len(head))
    for set_name in ("coding", "chats", "longchats"):
        for half in ("A", "B", "all"):
            for label, rows in runs:
                rows = [q for q in rows if set_of(q["kind"]) == set_name and half in ("all", q["half"])]
                cells = []
                for name in SYSTEMS:
                    vals = [sum(q[f"{name}_{f}"] for q in rows) / len(rows) for f in METRICS]
                    moved = sum(q["top"][name] != ref[(q["kind"], q["query"], tuple(q["relevant"]))]["top"][name]
                                for q in rows)
                    cells.append(" | " + f"{vals[0]:>12.3f} " + " ".join(f"{v:>5.3f}" for v in vals[1:]) + f" {moved:>5}")
                print(f"{set_name:<10} {half:<4} {label:<14}" + "".join(cells))
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
