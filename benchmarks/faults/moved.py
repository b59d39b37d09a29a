"""Each sample store ingested, then each transcript file deleted, moved to another folder, copied
to another folder, or its store folder renamed; ingested again. What was stored must stay (the
same items, uids and texts) and nothing may be stored twice under another id.

    uv run --locked python benchmarks/faults/moved.py [TYPE...]"""
import shutil, sys, tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parents[1] / "tests")]
from samples import STORES  # noqa: E402
from jezero.plugin.testing import Library  # noqa: E402
from jezero.store import open_readonly  # noqa: E402


def items(lib):
    db = open_readonly(lib.config.library_path())
    rows = db.execute("SELECT uid, session_id, content_hash FROM items ORDER BY uid").fetchall()
    db.close()
    return rows


def other_folder(root: Path, rel: Path) -> Path:
    """Where a move to another folder of the same kind puts the file."""
    parts = list(rel.parts)
    if len(parts) >= 2:
        parts[-2] = parts[-2] + "-moved" if not parts[-2].isdigit() else "29"
    return root.joinpath(*parts)


def main(types):
    bad = 0
    for ctype in types:
        for root0 in STORES[ctype]:
            for f in sorted(p for p in root0.rglob("*") if p.is_file() and p.suffix in (".jsonl", ".json", ".yaml")):
                rel = f.relative_to(root0)
                for op in ("delete", "move", "copy") if len(rel.parts) > 1 else ("delete",):
                    tmp = Path(tempfile.mkdtemp(prefix="moved-")); root = tmp / "s"; shutil.copytree(root0, root)
                    with Library(tmp / "lib", ctype, {"path": str(root)}) as lib:
                        lib.run(); before = items(lib)
                        g = root / rel
                        dest = other_folder(root, rel)
                        if op == "delete":
                            g.unlink()
                        else:
                            dest.parent.mkdir(parents=True, exist_ok=True)
                            (shutil.copy2 if op == "copy" else shutil.move)(g, dest)
                        r2 = lib.run(); after = items(lib)
                    lost = [r for r in before if r not in after]
                    extra = [r for r in after if r not in before]
                    status = "ok  " if not lost and not extra and not r2["error"] else "DIFF"
                    bad += status != "ok  "
                    print(f"{status} {ctype:8} {str(rel)[-48:]:48} {op:6} items {len(before)}->{len(after)} lost {len(lost)} "
                          f"extra {len(extra)} err {r2['error']} warns {[w[:90] for w in r2['warnings']][:2]}")
                    shutil.rmtree(tmp)
    print("defects:", bad)


if __name__ == "__main__":
    main(sys.argv[1:] or list(STORES))
