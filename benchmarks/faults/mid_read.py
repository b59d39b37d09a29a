"""A transcript that grows while the connector reads it (claude, gemini, copilot, codex): the first sample file of each
newest store cut in half, its second half appended right after the connector takes the file's
signature, before it reads the bytes; then a second run. What is stored must equal one run over
the whole file.

    uv run --locked python benchmarks/faults/mid_read.py"""
import importlib, shutil, sys, tempfile
from pathlib import Path
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "tests"))
from jezero.plugin.testing import Library
from jz_support import stored_texts
import jezero.plugin as P

S = HERE.parents[2] / "shared" / "samples" / "newest"
root = Path(tempfile.mkdtemp(prefix="jezero-faults-mid-read-"))
for name in ("claude", "gemini", "copilot", "codex"):  # loaded now, so their file_signature can be wrapped
    importlib.import_module(f"jezero_connectors_{name}.connector")
for ctype, store, pattern in [("claude", "claude", "*.jsonl"), ("gemini", "gemini", "session-*.jsonl"), ("copilot", "copilot", "events.jsonl"), ("codex", "codex", "rollout-*.jsonl")]:
    src = S / store
    work = root / ctype / "store"; shutil.copytree(src, work)
    files = sorted(p for p in work.rglob(pattern) if "subagents" not in str(p))
    target = files[0]
    lines = target.read_bytes().splitlines(keepends=True)
    half = len(lines) // 2
    target.write_bytes(b"".join(lines[:half]))
    rest = b"".join(lines[half:])
    real = P.file_signature
    done = {"n": 0}
    def sig(path, *a, **k):
        out = real(path, *a, **k)
        if Path(path) == target and done["n"] == 0:
            done["n"] = 1
            with open(target, "ab") as f:
                f.write(rest)
        return out
    mods = [m for name, m in list(sys.modules.items()) if name.startswith("jezero_connectors_") and hasattr(m, "file_signature")]
    for m in mods: m.file_signature = sig
    try:
        with Library(root / ctype / "lib", ctype, {"path": str(work)}) as lib:
            r1 = lib.run()
            for m in mods: m.file_signature = real
            r2 = lib.run()
            got = stored_texts(lib.config.library_path())
    finally:
        for m in mods: m.file_signature = real
    with Library(root / ctype / "ref", ctype, {"path": str(work)}) as ref:
        ref.run(); want = stored_texts(ref.config.library_path())
    print(ctype, target.name[:40], "grown mid-read:", done["n"], "runs", r1["sessions_written"], r2["sessions_written"], "equal:", got == want, r1["error"], r2["error"])
