"""Structural mutations of every sample file; compare with the unmutated read."""
import sys
from pathlib import Path
HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path[:0] = [str(HERE), str(REPO / "tests")]
import sys, random, json, shutil, tempfile, traceback
from samples import *

def summary(sessions):
    return {s.id: (len(s.blocks), s.cwd, s.model, str(s.started_at)[:19], s.title) for s in sessions}

def mut_crlf(b): return b.replace(b"\n", b"\r\n")
def mut_bom(b): return b"\xef\xbb\xbf" + b
def mut_trunc(b):
    body = b.rstrip(b"\n"); last = body.rfind(b"\n")
    return body[: last + 1 + (len(body) - last) // 2]
def mut_badutf8(b):
    lines = b.split(b"\n"); i = len(lines) // 2
    lines.insert(i, b'{"type":"user","x":"\xff\xfe\xc3"}'); return b"\n".join(lines)
def mut_rawbad(b):
    lines = b.split(b"\n"); i = len(lines) // 2
    lines.insert(i, b"\xff\xfe\x00garbage\xc3\x28"); return b"\n".join(lines)
def mut_utf8_in_string(b):
    # invalid byte inside an existing JSON string value of a middle line
    lines = b.split(b"\n"); i = len(lines) // 2
    j = lines[i].find(b'":"')
    if j > 0: lines[i] = lines[i][: j + 3] + b"\xff\xfe" + lines[i][j + 3:]
    return b"\n".join(lines)
def mut_huge(b):
    lines = b.split(b"\n"); i = len(lines) // 2
    lines.insert(i, json.dumps({"type": "user", "blob": "A" * 8_000_000}).encode()); return b"\n".join(lines)
def mut_empty(b): return b""
def mut_blank_lines(b): return b.replace(b"\n", b"\n\n  \n")
def mut_nul(b): return b + b"\x00" * 100 + b"\n"
def mut_no_final_newline(b): return b.rstrip(b"\n")

MUTS = [mut_crlf, mut_bom, mut_trunc, mut_badutf8, mut_rawbad, mut_utf8_in_string, mut_huge, mut_empty, mut_blank_lines, mut_nul, mut_no_final_newline]

for ctype, roots in STORES.items():
    for root0 in roots:
        base_s, base_w = read(ctype, root0)
        base = summary(base_s)
        files = [p for p in root0.rglob("*") if p.is_file() and p.suffix in (".jsonl", ".json")]
        for f in files:
            for m in MUTS:
                tmp = Path(tempfile.mkdtemp(prefix="st-")); root = tmp / "s"; shutil.copytree(root0, root)
                g = root / f.relative_to(root0)
                g.write_bytes(m(g.read_bytes()))
                try:
                    ss, ws = read(ctype, root)
                except Exception as e:
                    print("CRASH", ctype, f.name, m.__name__, repr(e)); traceback.print_exc(limit=-3); continue
                finally:
                    pass
                got = summary(ss)
                diffs = []
                for k in base:
                    if k not in got: diffs.append(f"missing {k}")
                    elif got[k] != base[k]: diffs.append(f"{k[:12]}: {base[k][:4]} -> {got[k][:4]}")
                for k in got:
                    if k not in base: diffs.append(f"extra {k}")
                print(f"{ctype:8} {f.name[:30]:30} {m.__name__:20} warns={len(ws)} {'; '.join(diffs)[:300]}")
                for w in ws[:3]: print("       W:", w[:200])
                shutil.rmtree(tmp)
