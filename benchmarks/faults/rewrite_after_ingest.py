"""Ingest the samples, mutate one file, ingest again: did any stored item vanish or change?"""
import sys
from pathlib import Path
HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path[:0] = [str(HERE), str(REPO / "tests")]
import sys, shutil, tempfile, json, time, os
from samples import *
from jezero.plugin.testing import Library
from jezero.store import open_readonly

def items(lib):
    db = open_readonly(lib.config.library_path())
    rows = db.execute("SELECT uid, content_hash, title FROM items ORDER BY uid").fetchall()
    db.close(); return {r[0]: r[1:] for r in rows}

def trunc_half(b):
    lines = b.split(b"\n"); return b"\n".join(lines[: len(lines)//2]) + b"\n"
def empty(b): return b""
def drop_middle(b):
    lines = b.split(b"\n"); n = len(lines); return b"\n".join(lines[: n//3] + lines[n//2:])
def corrupt_middle(b):
    lines = b.split(b"\n"); n = len(lines); lines[n//3] = b"{not json"; return b"\n".join(lines)
def append_garbage(b): return b + b"\xff\xfegarbage\n"
def partial_rewrite(b):  # the agent is rewriting the file: only the first third written so far
    return b[: len(b)//3]

MUTS = [trunc_half, empty, drop_middle, corrupt_middle, append_garbage, partial_rewrite]
only = sys.argv[1:] or list(STORES)
for ctype in only:
    for root0 in STORES[ctype]:
        files = [p for p in root0.rglob("*") if p.is_file() and p.suffix in (".jsonl", ".json")]
        for f in files:
            for m in MUTS:
                tmp = Path(tempfile.mkdtemp(prefix="e2e-")); root = tmp / "s"; shutil.copytree(root0, root)
                with Library(tmp / "lib", ctype, {"path": str(root)}) as lib:
                    r1 = lib.run(); before = items(lib)
                    g = root / f.relative_to(root0)
                    g.write_bytes(m(g.read_bytes()))
                    st = os.stat(g); os.utime(g, ns=(st.st_atime_ns, st.st_mtime_ns - 10**9))  # a new signature, never in the future (settle)
                    r2 = lib.run(); after = items(lib)
                lost = [u for u in before if u not in after]
                changed = [u for u in before if u in after and after[u] != before[u]]
                print(f"{ctype:8} {f.name[:24]:24} {m.__name__:16} items {len(before)}->{len(after)} lost={len(lost)} changed={len(changed)} err={r2['error']} warns={len(r2['warnings'])}")
                shutil.rmtree(tmp)
