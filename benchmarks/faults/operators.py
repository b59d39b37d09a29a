"""Queries full of operators on both engines: random strings of FTS5 operators, column filters, quotes,
NUL, lone surrogates and long words through search, recall (words, boolean, discover) and later.
Prints each kind of exception per call; a QueryError is the clean refusal, anything else a defect.
    operators.py [SEED] [QUERIES]"""
import sys
from pathlib import Path
HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path[:0] = [str(HERE), str(REPO / "tests")]
import random, shutil, tempfile, traceback, collections
from jz_support import SAMPLES
from jezero.plugin.testing import Library
from jezero.store import open_readonly, engines
from jezero.config import SearchConfig
from jezero.query import search, later
from jezero.query.recall import recall
from jezero.query.errors import QueryError
base = Path(tempfile.mkdtemp())
shutil.copytree(SAMPLES / "claude", base / "store")
lib = Library(base / "lib", "claude", {"path": str(base / "store")})
print("items", lib.run()["items_written"])
path = lib.config.library_path()
engines.sync("tantivy", path)
ATOMS = ['AND', 'OR', 'NOT', 'NEAR', 'NEAR(', 'NEAR/3', '(', ')', '"', "'", '*', '^', ':', 'title:', '{title summary}:', '-', '+',
         'jezero', 'tool', 'the', 'ping', 'é', '日本', '\x00', '\\', '%', '_', '[', ']', ',', '.', '/', '\u202e', '\ud800', 'x' * 300, '  ', '\t', '\n',
         'role:user', 'tool:Bash', '"a b"', 'a*', '*a', 'NOT NOT', 'AND AND', 'OR)', '(OR', '""', '" "', 'NEAR("a" "b", 2)', '0', '-1', '1e999']
rng = random.Random(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
N = int(sys.argv[2]) if len(sys.argv) > 2 else 1500
bad = collections.Counter(); examples = {}
conn = open_readonly(path)
for engine in ["fts5", "tantivy"]:
    opts = SearchConfig(engine=engine)
    for i in range(N):
        q = " ".join(rng.choice(ATOMS) for _ in range(rng.randint(1, 8)))
        if rng.random() < 0.3: q = "".join(rng.choice(ATOMS) for _ in range(rng.randint(1, 8)))
        for what, fn in [("search", lambda: search(conn, q, options=opts)),
                         ("recall", lambda: recall(conn, q, options=opts)),
                         ("boolean", lambda: recall(conn, boolean=q, options=opts)),
                         ("discover", lambda: recall(conn, q, discover=True, options=opts)),
                         ("later", lambda: later(conn, 1, q, options=opts))]:
            try:
                fn()
            except QueryError as e:
                bad[(engine, what, "QueryError")] += 1
                examples.setdefault((engine, what, "QueryError"), (q, str(e)[:150]))
            except Exception as e:
                k = (engine, what, type(e).__name__)
                bad[k] += 1
                examples.setdefault(k, (q, traceback.format_exc()[-600:]))
for k, v in sorted(bad.items()):
    print(k, v, repr(examples[k][0])[:120], "\n    ", examples[k][1].replace("\n", "\n     ")[:700])
