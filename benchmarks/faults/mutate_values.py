"""Random type mutations of one JSON value in one line of a real sample; any exception = defect."""
import sys
from pathlib import Path
HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path[:0] = [str(HERE), str(REPO / "tests")]
import sys, random, json, shutil, tempfile, collections, traceback
from samples import *

HOSTILE = [None, 0, -1, 1.5e308, "", "x", "2026-13-45T99:99:99Z", [], {}, [None], {"a": None}, True, 10**30, "1700000000000", 1700000000000]

def paths(obj, prefix=()):
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from paths(v, prefix + (i,))

def setp(obj, path, value):
    if not path: return value
    cur = obj
    for p in path[:-1]: cur = cur[p]
    cur[path[-1]] = value
    return obj

def jsonl_files(root):
    return [p for p in root.rglob("*") if p.is_file() and p.suffix in (".jsonl", ".json")]

def main(ctype, iters, seed):
    rnd = random.Random(seed)
    crashes = collections.Counter()
    examples = {}
    for root0 in STORES[ctype]:
        for it in range(iters):
            tmp = Path(tempfile.mkdtemp(prefix="fz-"))
            root = tmp / "store"
            shutil.copytree(root0, root)
            files = jsonl_files(root)
            if not files: break
            f = rnd.choice(files)
            lines = f.read_bytes().split(b"\n")
            nmut = rnd.choice([1, 1, 3, 10])
            desc = []
            for _ in range(nmut):
                i = rnd.randrange(len(lines))
                try:
                    obj = json.loads(lines[i])
                except ValueError:
                    continue
                ps = list(paths(obj))
                p = rnd.choice(ps[1:] or ps)
                v = rnd.choice(HOSTILE)
                obj = setp(obj, p, v)
                lines[i] = json.dumps(obj).encode()
                desc.append((i, p, v))
            f.write_bytes(b"\n".join(lines))
            try:
                read(ctype, root)
            except Exception as e:
                tb = traceback.extract_tb(e.__traceback__)[-1]
                key = f"{type(e).__name__}: {e} @ {tb.filename.split('/')[-1]}:{tb.lineno}"
                crashes[key] += 1
                examples.setdefault(key, (str(f.relative_to(root)), desc))
            shutil.rmtree(tmp)
    for k, n in crashes.most_common():
        print(n, k, "\n     eg", str(examples[k])[:400])
    print(ctype, "done")

if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
