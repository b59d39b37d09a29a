"""Each record of each sample transcript changed the way a new agent version might change it
(an unknown record type, content as a string / a list / a dict, a text part of an unknown type,
the timestamp missing / in epoch ms / with an offset / odd, the record twice, two records
swapped, a CRLF); read with the connector (bytes: mutate_bytes.py). A defect is text of the unchanged
read that is gone without a word: no warning names it (ids, block texts compared).

    uv run --locked python benchmarks/faults/silent_loss.py [TYPE...]"""
import copy, json, shutil, sys, tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from samples import STORES, read  # noqa: E402


def texts(sessions):
    out = set()
    for s in sessions:
        for b in s.blocks:
            for line in (b.text or "").splitlines():
                line = line.strip()
                if len(line) > 20:
                    out.add(line[:200])
    return out


def content_key(rec):
    """(holder, key) of the record's main content, whatever the agent."""
    for holder in (rec.get("message"), rec.get("payload"), rec.get("data"), rec):
        if isinstance(holder, dict):
            for key in ("content", "text", "message"):
                if key in holder and not (holder is rec and key == "message" and isinstance(holder[key], dict)):
                    return holder, key
    return None, None


def as_text(v):
    if isinstance(v, str):
        return v
    if isinstance(v, list):
        return "\n".join(as_text(x.get("text") if isinstance(x, dict) else x) for x in v)
    if isinstance(v, dict):
        return as_text(v.get("text"))
    return ""


def muts(rec):
    """(name, new record) pairs."""
    out = []
    holder, key = content_key(rec)
    if holder is not None:
        v = holder[key]
        text = as_text(v)
        if text:
            if isinstance(v, str):
                for name, nv in (("content as list", [{"type": "text", "text": v}]), ("content as dict", {"type": "text", "text": v})):
                    r = copy.deepcopy(rec); h, k = content_key(r); h[k] = nv; out.append((name, r))
            else:
                r = copy.deepcopy(rec); h, k = content_key(r); h[k] = text; out.append(("content as string", r))
            if isinstance(v, list) and v and isinstance(v[0], dict) and "type" in v[0]:
                r = copy.deepcopy(rec); h, k = content_key(r); h[k][0]["type"] = "text_v9"; out.append(("unknown part type", r))
    for tk in ("timestamp", "time"):
        if isinstance(rec.get(tk), str):
            for name, nv in (("time missing", None), ("time epoch ms", 1767000000000), ("time offset", rec[tk].replace("Z", "+02:00")),
                             ("time no zone", rec[tk].rstrip("Z")), ("time garbage", "yesterday")):
                r = copy.deepcopy(rec)
                if nv is None:
                    del r[tk]
                else:
                    r[tk] = nv
                out.append((name, r))
    return out


def main(types):
    defects = 0
    tally = {}
    for ctype in types:
        for root0 in STORES[ctype]:
            base, base_warn = read(ctype, root0)
            want = texts(base)
            for f in sorted(p for p in root0.rglob("*.jsonl") if p.is_file()):
                lines = f.read_bytes().splitlines(keepends=True)
                for i, raw in enumerate(lines):
                    try:
                        rec = json.loads(raw)
                    except ValueError:
                        continue
                    cases = [(n, json.dumps(r).encode() + b"\n") for n, r in muts(rec)]
                    if isinstance(rec.get("type"), str):
                        r = dict(rec, type=rec["type"] + "_v9"); cases.append(("unknown record type", json.dumps(r).encode() + b"\n"))
                    cases += [("twice", raw + raw), ("crlf", raw.rstrip(b"\n") + b"\r\n")]
                    if i + 1 < len(lines):
                        cases.append(("swapped with next", None))
                    for name, new in cases:
                        tmp = Path(tempfile.mkdtemp(prefix="loss-")); root = tmp / "s"; shutil.copytree(root0, root)
                        g = root / f.relative_to(root0)
                        mutated = list(lines)
                        if new is None:
                            mutated[i], mutated[i + 1] = mutated[i + 1], mutated[i]
                        else:
                            mutated[i] = new
                        g.write_bytes(b"".join(mutated))
                        try:
                            got, warns = read(ctype, root)
                        except Exception as e:
                            print(f"EXC  {ctype} {f.name[:30]}:{i + 1} {name}: {type(e).__name__}: {e}"); defects += 1
                            shutil.rmtree(tmp); continue
                        lost = want - texts(got)
                        t = tally.setdefault((ctype, name), [0, 0, 0]); t[0] += 1; t[1] += bool(lost); t[2] += bool(lost) and not [w for w in warns if w not in base_warn]
                        new_warns = [w for w in warns if w not in base_warn]
                        if lost and not new_warns:
                            defects += 1
                            print(f"LOST {ctype} {f.name[:30]}:{i + 1} ({rec.get('type')}) {name}: {len(lost)} text(s) silently, e.g. {sorted(lost)[0][:90]!r}")
                        ids = sorted(s.id for s in got) != sorted(s.id for s in base)
                        if ids:
                            print(f"IDS  {ctype} {f.name[:30]}:{i + 1} {name}: {sorted(s.id for s in got)} warns {new_warns[:2]}")
                        shutil.rmtree(tmp)
    for k, v in sorted(tally.items()):
        print(f"     {k[0]:8} {k[1]:20} cases {v[0]:4} lost {v[1]:4} silently {v[2]:4}")
    print("defects:", defects)


if __name__ == "__main__":
    main(sys.argv[1:] or list(STORES))
