"""One request, one answer: the same search (explain included, the clock fixed) answered cold (a
new library state, nothing learnt yet), warm (the term counts known, kept in the process and saved
beside the library by query/persisted.py) and in other processes under other hash seeds (what
`jezero serve --workers` runs) gives the same bytes.

Which plan scores a row depends on what the process has learnt (stats.estimated_rows: a sample
estimate cold, the exact count warm), and the plans add the terms' bm25 parts in other orders:
before search.settled, the answers' relevances differed in their last bits between the first and
the second call (-11.141773746881867 cold, -11.141773746881869 warm for
`field.sql response.css using`), and with them the fusion weights and shares; explain's
`ignored_terms` also depended on the plan. A 20,000-item library (benchmarks/search/corpus.py,
~15 s to build) is the smallest here on which the planner's cold and warm choices part."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

import jezero.query as q
from jezero.query.search import _Candidate
from jezero.server import shape
from jezero.server.library import Library

ROOT = Path(__file__).resolve().parent.parent
NOW = "2026-12-01T23:00:00+00:00"
# The queries of benchmarks/load/bench.py's queries() (seed 5) whose answers differed cold and
# warm on corpus.build(20000) before the fix (10 of 400: file names beside common words).
QUERIES = [
    ("internal/client_manager.html app/parser_table.md E3850", {}),
    ("tests/setting_repo.py ceva migrations/setting_account.sql", {}),
    ("field.sql response.css using", {}),
    ("loadEvents product.sh field.go", {}),
    ("monitoring webhook-build-55 lib/column_cart.yaml", {}),
    ("hofikizaé payment.js", {}),
    ("index.html docs/manager_message.ts", {"since": "2025-06-01"}),
    ("docs/job_manager.py internal/session_view.html field_product", {}),
    ("config/account_reader.json", {}),
    ("client_job app/schema_column.py reader.py", {}),
]

ANSWER = """
import json, sys
from datetime import datetime
sys.path.insert(0, {tests!r})
from test_same_answer import answers
print(json.dumps(answers({library!r}, datetime.fromisoformat({now!r}))))
"""


def answers(library: str, now: datetime, queries=QUERIES) -> list[str]:
    """Each query's answer as the search tool shapes it (explain on), one JSON text each."""
    lib = Library(library)
    out = []
    for query, filters in queries:
        with lib.reader() as conn:
            hits = q.search(conn, query, now=now, explain=True, **filters)
        answer = {"items": [shape.hit(h) for h in hits], "cut": getattr(hits, "cut", False),
                  "notes": list(getattr(hits, "notes", ()))}
        out.append(shape.dumps(answer))
    return out


@pytest.fixture(scope="module")
def library(tmp_path_factory) -> str:
    sys.path.insert(0, str(ROOT / "benchmarks" / "search"))
    try:
        import corpus
    finally:
        sys.path.pop(0)
    path = tmp_path_factory.mktemp("same") / "lib.sqlite3"
    corpus.build(path, 20000)
    return str(path)


def in_subprocess(library: str, seed: int) -> list[str]:
    code = ANSWER.format(tests=str(ROOT / "tests"), library=library, now=NOW)
    env = {**os.environ, "PYTHONHASHSEED": str(seed)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_relevance_is_the_same_whichever_plan_added_it():
    """Two plans' sums of the same parts, a last bit apart, settle to one number."""
    cold = _Candidate(1, -11.141773746881867, "2026-01-01T00:00:00.000000Z", "best_bm25", [])
    warm = _Candidate(1, -11.141773746881869, "2026-01-01T00:00:00.000000Z", "best_bm25", [])
    assert cold.bm25 == warm.bm25
    # relative digits: a floored word's ~1e-6 keeps as many as a rare word's ~10
    assert _Candidate(2, -1.7997010463378178e-06, "", "newest_matches", []).bm25 == -1.799701046e-06


def test_the_same_search_is_answered_alike_cold_warm_and_in_other_processes(library):
    now = datetime.fromisoformat(NOW).astimezone(timezone.utc)
    counts = Path(f"{library}.term-counts.sqlite3")
    assert not counts.exists()  # cold: a new library, nothing learnt or saved yet
    cold = answers(library, now)
    assert any('"items":[{' in a for a in cold), "the queries find nothing: the test proves nothing"
    warm = answers(library, now)
    for (query, filters), c, w in zip(QUERIES, cold, warm):
        assert c == w, (query, filters)
    again = list(reversed(answers(library, now, QUERIES[::-1])))  # what was learnt before each differs
    assert again == cold
    # other processes, other hash seeds, starting warm from the counts this one saved
    for seed in (1, 2):
        assert in_subprocess(library, seed) == cold, seed

