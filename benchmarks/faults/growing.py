"""Every sample transcript written in pieces, with the real CLI (`jezero run`) between two pieces:
cut at a line's end, in the middle of a line, inside a multi-byte character, just before a
newline. After the last piece, what is stored (items' texts, messages: role, time, text, in
order) must equal what one run over the whole file stores: nothing lost, nothing twice.

    uv run --locked python benchmarks/faults/growing.py [TYPE...]"""
import json, os, shutil, sqlite3, subprocess, sys, tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from samples import STORES  # noqa: E402

JEZERO = str(Path(sys.executable).parent / "jezero")


def config(tmp: Path, ctype: str, root: Path) -> Path:
    cfg = tmp / "config.toml"
    cfg.write_text(f'[storage]\npath = "{tmp / "lib.sqlite3"}"\n[ingest]\nsettle_minutes = 0\n'
                   f'[summarizer]\nname = "offline"\n[[connectors]]\nname = "s"\ntype = "{ctype}"\n'
                   f'options = {{ path = "{root}" }}\n')
    return cfg


def run(cfg: Path) -> dict:
    p = subprocess.run([JEZERO, "-c", str(cfg), "run", "--json", "-q"], capture_output=True, text=True)
    if p.returncode or "Traceback" in p.stderr:
        return {"error": (p.stderr or p.stdout)[-600:]}
    try:
        return json.loads(p.stdout)[0]
    except (ValueError, IndexError, KeyError):
        return {"error": p.stdout[-300:]}


def stored(tmp: Path):
    db = sqlite3.connect(tmp / "lib.sqlite3")
    msgs = db.execute("SELECT m.session_id, m.role, m.at, t.text FROM messages m JOIN message_texts t ON t.id = m.id "
                      "ORDER BY m.session_id, m.segment_index, m.seq").fetchall()
    originals = db.execute("SELECT session_id, group_concat(original, '') FROM "
                           "(SELECT session_id, original FROM items ORDER BY session_id, segment_index) GROUP BY session_id").fetchall()
    db.close()
    return msgs, dict(originals)


def cuts(data: bytes) -> dict[str, int]:
    nl = [i + 1 for i, b in enumerate(data) if b == 10]
    out = {}
    if len(nl) > 2:
        out["line end"] = nl[len(nl) // 2 - 1]
        out["mid line"] = (nl[len(nl) // 2 - 1] + nl[len(nl) // 2]) // 2
        out["before newline"] = nl[len(nl) // 2] - 1
        out["last line cut"] = nl[-2] + (nl[-1] - nl[-2]) // 2
    mb = next((i + 1 for i in range(len(data) // 3, len(data)) if data[i] >= 0xC2 and data[i] < 0xF5), None)
    if mb:
        out["inside a character"] = mb
    return out


def main(types):
    bad = 0
    for ctype in types:
        for root0 in STORES[ctype]:
            files = sorted(p for p in root0.rglob("*") if p.is_file() and p.suffix == ".jsonl")
            for f in files:
                rel = f.relative_to(root0)
                whole = Path(tempfile.mkdtemp(prefix="grow-")); shutil.copytree(root0, whole / "s")
                if (r := run(config(whole, ctype, whole / "s"))).get("error"):
                    print("ERROR whole", ctype, rel, r["error"]); bad += 1; continue
                want = stored(whole)
                data = f.read_bytes()
                for name, at in cuts(data).items():
                    tmp = Path(tempfile.mkdtemp(prefix="grow-")); shutil.copytree(root0, tmp / "s")
                    g = tmp / "s" / rel
                    g.write_bytes(data[:at])
                    st = os.stat(g); os.utime(g, ns=(st.st_atime_ns, st.st_mtime_ns - 10**9))
                    cfg = config(tmp, ctype, tmp / "s")
                    r1 = run(cfg)
                    with open(g, "ab") as out:
                        out.write(data[at:])
                    st = os.stat(g); os.utime(g, ns=(st.st_atime_ns, st.st_mtime_ns - 10**9))
                    r2 = run(cfg)
                    got = stored(tmp)
                    ok = got == want and not r1.get("error") and not r2.get("error")
                    if not ok:
                        bad += 1
                        lost = [m for m in want[0] if m not in got[0]]
                        extra = [m for m in got[0] if m not in want[0]]
                        print(f"DIFF {ctype} {rel} {name}@{at}/{len(data)}: messages {len(want[0])}->{len(got[0])} "
                              f"lost {len(lost)} extra {len(extra)} err {r1.get('error') or r2.get('error')}")
                        for m in (lost + extra)[:4]:
                            print("   ", "lost" if m in lost else "extra", m[:3], repr(m[3][:100]))
                        if got[1] != want[1]:
                            print("    originals differ:", [k for k in set(want[1]) | set(got[1]) if want[1].get(k) != got[1].get(k)])
                    else:
                        print(f"ok   {ctype} {rel.name[:40]} {name}@{at} ({len(got[0])} messages) warns {len(r1.get('warnings', []))}/{len(r2.get('warnings', []))}")
                    shutil.rmtree(tmp)
                shutil.rmtree(whole)
    print("defects:", bad)


if __name__ == "__main__":
    main(sys.argv[1:] or ["claude", "codex", "gemini", "copilot"])
