"""Settings of a process that serves searches for a long time (`jezero serve`, each of its workers).

A search allocates thousands of short-lived tuples and lists (a common word's newest 300 rows per
term, the sessions they belong to, the answer's dicts). With CPython's default threshold of 700
container allocations for its youngest generation, that is several collections per search, and
every ~100th is a full collection, which walks every object the process holds: the engines' kept
answers and sessions, the SDK's models, the config. A full collection costs 20-45 ms of CPU here
and lands on one search: the 200 load searches on the 20k library with messages (tantivy, first
sight of each, `messages_cost.py --first-sight --gc-first 0 / 10000`, alternating, load 0.8) gave
p99 75.4 / 63.4 ms CPU with the default and 30.2 / 33.9 ms with a threshold of 10,000, p50 10.2 /
11.2 against 10.2 / 10.0 (benchmarks/load/README.md). Objects in cycles wait a little longer to be
freed: 10,000 young containers are ~1 MB. No answer depends on it.
"""

from __future__ import annotations

import gc

GC_FIRST_GENERATION = 10_000


def tune_gc() -> None:
    """The youngest generation's threshold raised to GC_FIRST_GENERATION (never lowered: a process
    that set its own keeps it); the older generations' thresholds unchanged."""
    first, second, third = gc.get_threshold()
    if 0 < first < GC_FIRST_GENERATION:
        gc.set_threshold(GC_FIRST_GENERATION, second, third)
