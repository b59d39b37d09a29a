"""Peak memory of reading one huge transcript (issue 10: a 200 MB file took 1.2 GB).

Writes a made-up Claude Code transcript and a Codex rollout of about --mb megabytes each (many
turns with long tool outputs, as a long agent session leaves), then reads each through its
connector in a fresh subprocess and reports the peak resident memory (ru_maxrss) and the time.

    uv run --locked python benchmarks/stream/bench.py --mb 200
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

CHILD = r"""
import resource, sys, time
from jezero.models import ConnectorContext
kind, path = sys.argv[1], sys.argv[2]
warned = []
start = time.perf_counter()
if kind == "claude":
    from jezero_connectors_claude import build
else:
    from jezero_connectors_codex import build
sessions = list(build({"path": path}, ConnectorContext("bench", warned.append)).read({}))
blocks = sum(len(s.blocks) for s in sessions)
print(f"{kind}: {len(sessions)} session(s), {blocks} blocks, {time.perf_counter() - start:.1f} s, "
      f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB, {len(warned)} warning(s)")
"""


def turns(mb: int):
    out = "line of tool output with some numbers 0123456789 and words\n" * 300  # ~18 KB
    n = mb * 1024 * 1024 // (len(out) + 400)
    for i in range(n):
        yield i, out


def write_claude(root: Path, mb: int) -> Path:
    sid = str(uuid.UUID(int=7))
    path = root / "claude" / "projects" / "-home-dev-src-big" / f"{sid}.jsonl"
    path.parent.mkdir(parents=True)
    with path.open("w") as f:
        for i, out in turns(mb):
            t = f"2026-01-01T{(i // 3600) % 24:02d}:{(i // 60) % 60:02d}:{i % 60:02d}.000Z"
            base = {"sessionId": sid, "cwd": "/home/dev/src/big", "timestamp": t, "version": "2.1.0"}
            f.write(json.dumps({**base, "type": "assistant", "uuid": f"a{i}", "message": {
                "id": f"m{i}", "role": "assistant", "model": "x",
                "content": [{"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"command": f"make {i}"}}]}}) + "\n")
            f.write(json.dumps({**base, "type": "user", "uuid": f"u{i}", "message": {
                "role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{i}", "content": out}]}}) + "\n")
    return path.parents[1]


def write_codex(root: Path, mb: int) -> Path:
    sid = str(uuid.UUID(int=8))
    path = root / "codex" / "sessions" / "2026" / "01" / "01" / f"rollout-2026-01-01T00-00-00-{sid}.jsonl"
    path.parent.mkdir(parents=True)
    with path.open("w") as f:
        f.write(json.dumps({"timestamp": "2026-01-01T00:00:00.000Z", "type": "session_meta",
                            "payload": {"id": sid, "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/home/dev/src/big"}}) + "\n")
        for i, out in turns(mb):
            t = f"2026-01-01T{(i // 3600) % 24:02d}:{(i // 60) % 60:02d}:{i % 60:02d}.000Z"
            f.write(json.dumps({"timestamp": t, "type": "response_item", "payload": {
                "type": "function_call", "name": "shell", "call_id": f"c{i}",
                "arguments": json.dumps({"command": ["make", str(i)]})}}) + "\n")
            f.write(json.dumps({"timestamp": t, "type": "response_item", "payload": {
                "type": "function_call_output", "call_id": f"c{i}", "output": out}}) + "\n")
    return root / "codex"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=int, default=200)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        made = time.perf_counter()
        stores = {"claude": write_claude(root, args.mb), "codex": write_codex(root, args.mb)}
        sizes = {k: sum(p.stat().st_size for p in v.rglob("*.jsonl")) / 1e6 for k, v in stores.items()}
        print(f"wrote {sizes} MB in {time.perf_counter() - made:.0f} s")
        for kind, path in stores.items():
            subprocess.run([sys.executable, "-c", CHILD, kind, str(path)], check=True)


if __name__ == "__main__":
    main()
