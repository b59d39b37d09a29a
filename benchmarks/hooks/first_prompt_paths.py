"""Cheaper server-side paths for the first-prompt rule, measured against the rule itself: what each
would cost on the default FTS5 engine, and how often the items it lets through are the ones the
rule gives over the full search's first 8 results (README.md, "Looking for a cheaper first prompt").

    .venv/bin/python benchmarks/hooks/first_prompt_paths.py              # 100,000 items, 60 prompts
    .venv/bin/python benchmarks/hooks/first_prompt_paths.py --prompts 30 --seed 8

The prompts are drawn as bench.py draws them (3 to 8 words of the corpus vocabulary's top 3,000).
Each path is run in this process on the library bench.py builds; CPU is the thread's time.

- **exact**: `search(words, limit=8, lanes=["items"])` and the rule on its results: what a hook
  gets now. The reference.
- **IDF floor**: one `count(*)` of each prompt word's matches, once: what any ranking that scores
  with the index's own weights (bm25's IDF of each word) must at least read.
- **budget B**: the same search with a work budget of B ms instead of 250 (a cut search ranks the
  newest matches, as it does past 250).
- **whole-word candidates**: an in-memory index of the whole words (folded as the rule folds them)
  of every item's title and summary; the candidates are the items holding the most prompt words
  (at least two, at most CAP items), ranked by bm25 over all the prompt's words times the search's
  recency factor, the first three shown. Only the lookup is timed: the scores here come from one
  full bm25 pass, which is what such a path would have to avoid.
- **pass-capable rows**: how many items hold at least two prompt words as whole words in title or
  summary: the most a path that ranks only rows the rule could keep would have to rank.
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import re
import statistics
import sys
import time
from array import array
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "search"))

import corpus  # noqa: E402  (benchmarks/search/corpus.py)

from jezero.client_core import first_prompt_search, fold, prompt_words, related_items  # noqa: E402
from jezero.config import SearchConfig  # noqa: E402
from jezero.query import search  # noqa: E402
from jezero.query.common import parse_stored  # noqa: E402
from jezero.store import open_readonly  # noqa: E402

CAP = 300  # whole-word candidates ranked per prompt
BUDGETS = (20, 60)
_WORD = re.compile(r"\w+")


def p95(values: list[float]) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(0.95 * len(values))) - 1)]


def cpu_ms(fn):
    c0 = time.thread_time()
    out = fn()
    return out, (time.thread_time() - c0) * 1000


def word_index(conn) -> dict[str, array]:
    index: dict[str, array] = {}
    for ident, title, summary in conn.execute("SELECT id, title, summary FROM items"):
        text = f"{title} {summary}".lower()
        for word in set(_WORD.findall(text if text.isascii() else fold(text))):
            index.setdefault(word, array("i")).append(ident)
    return index


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--prompts", type=int, default=60)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    spec = importlib.util.spec_from_file_location("hooks_bench", HERE / "bench.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    conn = open_readonly(bench.library(args.items))
    rng = random.Random(args.seed)
    vocabulary = [w for w in corpus.vocabulary()[:3000] if len(w) >= 4]
    prompts = [" ".join(rng.sample(vocabulary, rng.randint(3, 8))) for _ in range(args.prompts)]
    now = datetime.now(timezone.utc)
    options = SearchConfig()
    search(conn, "warm up", limit=8, options=options, lanes=["items"])

    exact, exact_cpu, cut = [], [], 0
    for prompt in prompts:
        hits, ms = cpu_ms(lambda: search(conn, first_prompt_search(prompt)["query"], limit=8, options=options,
                                         lanes=["items"]))
        exact.append([h["id"] for h in related_items(prompt, hits)])
        exact_cpu.append(ms)
        cut += bool(getattr(hits, "cut", False))
    print(f"library {args.items} items, {len(prompts)} prompts (seed {args.seed}), "
          f"{statistics.median(len(prompt_words(p)) for p in prompts):.0f} words per prompt (median)")
    print(f"exact (the rule over search's first 8)   CPU p50 {statistics.median(exact_cpu):6.1f} p95 "
          f"{p95(exact_cpu):6.1f} ms   cut by the budget in {cut}; items shown for "
          f"{sum(bool(e) for e in exact)} prompts")

    floor = []
    for prompt in prompts:
        def counts(words=prompt_words(prompt)):
            for w in words:
                conn.execute("SELECT count(*) FROM items_fts WHERE items_fts MATCH ?", ('"' + w + '"',)).fetchall()
        floor.append(cpu_ms(counts)[1])
    print(f"IDF floor (each word's matches counted)  CPU p50 {statistics.median(floor):6.1f} p95 {p95(floor):6.1f} ms")

    for b in BUDGETS:
        small, spent = SearchConfig(time_budget_ms=b), []
        same = 0
        for prompt, want in zip(prompts, exact):
            hits, ms = cpu_ms(lambda: search(conn, first_prompt_search(prompt)["query"], limit=8, options=small,
                                             lanes=["items"]))
            spent.append(ms)
            same += [h["id"] for h in related_items(prompt, hits)] == want
        print(f"budget {b:3d} ms                            CPU p50 {statistics.median(spent):6.1f} p95 "
              f"{p95(spent):6.1f} ms   same items as exact: {same}/{len(prompts)}")

    (index, build) = cpu_ms(lambda: word_index(conn))
    postings = sum(len(v) for v in index.values())
    same, looked, capable = 0, [], []
    for prompt, want in zip(prompts, exact):
        words = prompt_words(prompt)

        def lookup():
            held = Counter()
            for w in words:
                held.update(index.get(w, ()))
            by_count: dict[int, list[int]] = {}
            for ident, n in held.items():
                if n >= 2:
                    by_count.setdefault(n, []).append(ident)
            chosen: list[int] = []
            for n in sorted(by_count, reverse=True):
                if chosen and len(chosen) + len(by_count[n]) > CAP:
                    break
                chosen += by_count[n]
            return chosen, sum(len(v) for v in by_count.values())

        (chosen, passing), ms = cpu_ms(lookup)
        looked.append(ms)
        capable.append(passing)
        expr = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
        scores = dict(conn.execute("SELECT rowid, bm25(items_fts, 2.0, 1.0, 1.5, 1.5, 0.5) FROM items_fts "
                                   "WHERE items_fts MATCH ?", (expr,)))
        when = dict(conn.execute(f"SELECT id, occurred_at FROM items WHERE id IN ({','.join('?' * len(chosen))})",
                                 chosen)) if chosen else {}
        ranked = sorted(((-scores.get(i, 0.0) * (0.7 + 0.3 * 0.5 ** (max(
            (now - parse_stored(when[i])).total_seconds() / 86400, 0) / 90)), i) for i in chosen), reverse=True)
        same += [i for _, i in ranked[:3]] == want
    print(f"whole-word candidates (<= {CAP})           lookup CPU p50 {statistics.median(looked):6.1f} p95 "
          f"{p95(looked):6.1f} ms   same items as exact: {same}/{len(prompts)}   "
          f"(index: {len(index)} words, {postings} postings, built in {build / 1000:.1f} s CPU)")
    print(f"pass-capable rows (>= 2 prompt words whole in title or summary)   p50 "
          f"{statistics.median(capable):.0f}   p95 {p95(capable):.0f}   of {args.items}")


if __name__ == "__main__":
    main()
