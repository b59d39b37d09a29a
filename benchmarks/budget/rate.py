import time, apsw, sys
from jezero.store import open_readonly
from jezero.query.search import _search
from jezero.config import SearchConfig
conn = open_readonly(sys.argv[1])
calls = [0]
def h():
    calls[0] += 1
    return False
qs = ["the error", "migration postgres", "deploy staging timeout", "fix the test", "src/order_cache.py", "a b c the and of to", "webpack vite config build"]
import jezero.query.common as c
orig = c.budget
from contextlib import contextmanager
for q in qs:
    conn.set_progress_handler(h, 1000)
    calls[0]=0
    t=time.perf_counter()
    for sql in ["SELECT rowid, bm25(items_fts) b FROM items_fts WHERE items_fts MATCH ? ORDER BY b LIMIT 200"]:
        from jezero.query.terms import parse_terms
        expr = " OR ".join(x.quoted for x in parse_terms(q))
        conn.execute(sql, (expr,)).fetchall()
    dt=(time.perf_counter()-t)*1000
    print(f"{q!r}: {dt:.1f} ms, {calls[0]} handler calls, {calls[0]/max(dt,0.001):.1f} calls/ms")
