"""SQLite VM steps per millisecond for ranked FTS5 queries: where STEPS_PER_MS comes from.

    uv run --locked python benchmarks/budget/rate.py LIBRARY   # e.g. one built by benchmarks/search
"""

import sys
import time

from jezero.query.common import PROGRESS_STEPS
from jezero.query.terms import parse_terms
from jezero.store import open_readonly

QUERIES = ["the error", "migration postgres", "deploy staging timeout", "fix the test", "src/order_cache.py",
           "a b c the and of to", "webpack vite config build"]
SQL = "SELECT rowid, bm25(items_fts) b FROM items_fts WHERE items_fts MATCH ? ORDER BY b LIMIT 200"


def main() -> None:
    conn = open_readonly(sys.argv[1])
    calls = [0]

    def count() -> bool:
        calls[0] += 1
        return False

    conn.set_progress_handler(count, PROGRESS_STEPS)
    for q in QUERIES:
        calls[0] = 0
        start = time.perf_counter()
        conn.execute(SQL, (" OR ".join(t.quoted for t in parse_terms(q)),)).fetchall()
        ms = (time.perf_counter() - start) * 1000
        print(f"{q!r}: {ms:.1f} ms, {calls[0]} progress calls, {calls[0] * PROGRESS_STEPS / max(ms, 0.001):,.0f} steps/ms")


if __name__ == "__main__":
    main()
