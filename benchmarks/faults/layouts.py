"""Store layouts of the wild for each file connector (the newest samples): a symlink loop and a link
to the store's root, folders, named pipes and dangling symlinks named like transcripts, a
transcript 60 folders deep. Prints what each run saw, wrote, failed and warned (a hang: 60 s alarm)."""
import sys
from pathlib import Path
HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path[:0] = [str(HERE), str(REPO / "tests")]
import os, shutil, signal, tempfile
from jz_support import SAMPLES
from jezero.plugin.testing import Library
S = SAMPLES / "newest"
STORES = {"claude": "claude", "codex": "codex", "gemini": "gemini", "copilot": "copilot"}
base = Path(tempfile.mkdtemp())
def alarm(*a): raise TimeoutError("hung")
signal.signal(signal.SIGALRM, alarm)
for ctype, store in STORES.items():
    for case in ["loop", "folder", "fifo", "dangling", "deep"]:
        root = base / f"{ctype}-{case}"
        shutil.copytree(S / store, root)
        files = sorted(root.rglob("*.jsonl"))
        d = files[0].parent
        if case == "loop":
            os.symlink(".", d / "loop"); os.symlink(str(root), d / "up")
        elif case == "folder":
            (d / ("a" * 8 + "-0000-4000-8000-000000000000.jsonl")).mkdir()
            (d / "rollout-2026-11-30T17-29-33-01a22d81-3930-71a3-8999-d07b12f1aaaa.jsonl").mkdir(exist_ok=True)
            (d / "session-2026-11-30T17-33-aaaaaaaa.jsonl").mkdir(exist_ok=True)
            (d / "events.jsonl.d").mkdir()
            if ctype == "copilot":
                (root / "session-state" / "ffffffff-00ad-43ea-bf85-ea7400d58aef" / "events.jsonl").mkdir(parents=True)
        elif case == "fifo":
            os.mkfifo(d / ("b" * 8 + "-0000-4000-8000-000000000000.jsonl"))
            os.mkfifo(d / "rollout-2026-11-30T17-29-33-01a22d81-3930-71a3-8999-d07b12f1bbbb.jsonl")
            os.mkfifo(d / "session-2026-11-30T17-33-bbbbbbbb.jsonl")
            if ctype == "copilot":
                p = root / "session-state" / "eeeeeeee-00ad-43ea-bf85-ea7400d58aef"; p.mkdir(); os.mkfifo(p / "events.jsonl")
        elif case == "dangling":
            os.symlink("/nonexistent/x.jsonl", d / ("c" * 8 + "-0000-4000-8000-000000000000.jsonl"))
            os.symlink("/nonexistent/x.jsonl", d / "rollout-2026-11-30T17-29-33-01a22d81-3930-71a3-8999-d07b12f1cccc.jsonl")
            os.symlink("/nonexistent/x.jsonl", d / "session-2026-11-30T17-33-cccccccc.jsonl")
            if ctype == "copilot":
                p = root / "session-state" / "dddddddd-00ad-43ea-bf85-ea7400d58aef"; p.mkdir(); os.symlink("/nonexistent", p / "events.jsonl")
        elif case == "deep":
            p = d
            for i in range(60): p = p / "d"
            p.mkdir(parents=True)
            shutil.copy(files[0], p / files[0].name.replace(files[0].name[:8], "dddddddd") )
        signal.alarm(60)
        try:
            with Library(base / f"lib-{ctype}-{case}", ctype, {"path": str(root)}) as lib:
                r = lib.run()
            print(ctype, case, "seen", r["sessions_seen"], "written", r["sessions_written"], "error", r["error"], "warnings", [w[-150:] for w in r["warnings"]])
        except BaseException as e:
            print(ctype, case, "EXC", type(e).__name__, str(e)[:300])
        finally:
            signal.alarm(0)
