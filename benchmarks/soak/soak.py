"""A longer soak of the faults tests/test_faults.py tries once each (issue 10).

Round after round, while an HTTP server answers a stream of hostile MCP calls from another
thread: sessions grow, new ones appear, some get binary or half-written lines, some vanish;
`jezero run` is killed at a random moment, or run under a file-size limit (a full disk), or
refused by a held lock, or runs cleanly. After every round the library must pass SQLite's
integrity check, hold one index row per item and no duplicate uid, and never lose an item of a
session whose file is still there. At the end one clean run must leave exactly what a clean
run over the same files leaves in a fresh library.

    uv run --locked python benchmarks/soak/soak.py --minutes 5
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))

from jz_support import jezero_command  # noqa: E402

from jezero.demo import SessionSpec, Turn  # noqa: E402
from jezero.server import http_server, key_digest  # noqa: E402
from jezero.store import open_readonly  # noqa: E402


def write(spec, claude_projects, codex_home):
    """One made-up session in its agent's own format (the connectors' demo writers)."""
    from jezero_connectors_claude.demo import write_claude
    from jezero_connectors_codex.demo import write_codex

    return write_claude(claude_projects, spec) if spec.agent == "claude" else write_codex(codex_home, spec)

WORDS = "deploy invoice webhook postgres docker cache queue retry schema token checkout refund".split()
KEY = "jz_soak-key"


def spec(i: int, rng: random.Random, t0: datetime) -> SessionSpec:
    turns = [Turn("user", f"task {i}: " + " ".join(rng.choices(WORDS, k=20)))]
    for j in range(rng.randint(1, 6)):
        turns += [Turn("command", f"make step-{j}", "\n".join(" ".join(rng.choices(WORDS, k=12)) for _ in range(30)),
                       failed=rng.random() < 0.2),
                  Turn("assistant", " ".join(rng.choices(WORDS, k=60)))]
    return SessionSpec("claude" if i % 2 else "codex", f"/home/dev/src/p{i % 4}", t0 + timedelta(hours=i), turns,
                       id=f"00000000-0000-4000-8000-{i:012d}")


def config(path: Path, library: Path, sessions: Path) -> Path:
    path.write_text(f"""
[storage]
path = "{library}"
[ingest]
settle_minutes = 0
max_input_chars = 8000
[[connectors]]
name = "claude"
type = "claude"
options = {{ path = "{sessions / 'claude' / 'projects'}" }}
[[connectors]]
name = "codex"
type = "codex"
options = {{ path = "{sessions / 'codex'}" }}
[[clients]]
name = "soak"
key_sha256 = "{key_digest(KEY)}"
sources = ["claude"]
""")
    return path


def check(library: Path) -> dict:
    conn = open_readonly(library)
    try:
        integrity = conn.execute("PRAGMA integrity_check").fetchone()[0]
        items = conn.execute("SELECT count(*) FROM items").fetchone()[0]
        fts = conn.execute("SELECT count(*) FROM items_fts").fetchone()[0]
        joined = conn.execute("SELECT count(*) FROM items i JOIN items_fts f ON f.rowid = i.id").fetchone()[0]
        uids = conn.execute("SELECT count(DISTINCT uid) FROM items").fetchone()[0]
        sessions = {r[0] for r in conn.execute("SELECT source || ':' || session_id FROM items")}
    finally:
        conn.close()
    assert integrity == "ok", integrity
    assert items == fts == joined == uids, (items, fts, joined, uids)
    return {"items": items, "sessions": sessions}


def hostile_client(url: str, stop: threading.Event, tally: Counter) -> None:
    """Hostile and ordinary calls, one after another, until told to stop."""
    rng = random.Random(99)
    calls = [
        ("search", lambda: {"query": rng.choice(WORDS) + " " + rng.choice(WORDS)}),
        ("search", lambda: {"query": "x" * rng.randint(3_000, 6_000)}),
        ("search", lambda: {"query": "\x00\u202e" + rng.choice(WORDS), "limit": 2**63}),
        ("search", lambda: {"query": "the and of " * 300}),
        ("get_item", lambda: {"item_id": rng.choice([2**63, -1, 0, rng.randint(1, 500)])}),
        ("later", lambda: {"item_id": rng.randint(1, 500), "query": 'NEAR("a") OR *'}),
        ("timeline", lambda: {"project": "p1", "since": rng.choice(["0001-01-01T00:00:00+05:00", "2026-02-01"])}),
        ("catalog", lambda: {}),
    ]

    async def run() -> None:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {KEY}"}, timeout=60) as h:
            async with Client(streamable_http_client(url, http_client=h)) as client:
                while not stop.is_set():
                    name, args = rng.choice(calls)
                    r = await client.call_tool(name, args())
                    text = r.content[0].text if r.content else ""
                    if r.is_error:
                        tally["tool errors (expected for hostile calls)"] += 1
                    if any(bad in text for bad in ("Traceback", 'File "', "Overflow", "apsw", "Error(")):
                        tally["bad answers"] += 1
                    if r.structured_content and any(h.get("source") != "claude"
                                                    for h in r.structured_content.get("items", [])):
                        tally["leaked items"] += 1
                    tally["calls"] += 1

    try:
        anyio.run(run)
    except Exception as e:  # the soak reports it rather than dying with the thread
        tally[f"client stopped: {type(e).__name__}: {e}"] += 1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minutes", type=float, default=5)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    t0 = datetime(2026, 2, 1, tzinfo=timezone.utc)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        sessions, library = tmp / "sessions", tmp / "lib" / "library.sqlite3"
        cfg = config(tmp / "config.toml", library, sessions)
        specs: dict[int, SessionSpec] = {}
        next_id = 0
        subprocess.run([*jezero_command(), "--config", str(cfg), "init"], check=True, capture_output=True)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        server = http_server(str(cfg), "127.0.0.1", port, log_level="error")
        threading.Thread(target=server.run, daemon=True).start()
        while not server.started:
            time.sleep(0.05)
        stop, tally = threading.Event(), Counter()
        client = threading.Thread(target=hostile_client, args=(f"http://127.0.0.1:{port}/mcp", stop, tally))
        client.start()
        faults: Counter = Counter()
        deadline = time.monotonic() + args.minutes * 60
        rounds = 0
        try:
            while time.monotonic() < deadline:
                rounds += 1
                for _ in range(rng.randint(2, 6)):  # new sessions
                    specs[next_id] = spec(next_id, rng, t0)
                    next_id += 1
                for i in rng.sample(sorted(specs), min(5, len(specs))):  # growing ones
                    specs[i].turns.append(Turn("assistant", " ".join(rng.choices(WORDS, k=40))))
                for s in specs.values():
                    write(s, sessions / "claude" / "projects", sessions / "codex")
                files = sorted(sessions.rglob("*.jsonl"))
                fault = rng.choice(["kill", "kill", "full", "lock", "binary", "vanish", "clean"])
                faults[fault] += 1
                if fault == "binary":
                    with rng.choice(files).open("ab") as f:
                        f.write(bytes(rng.randrange(1, 256) for _ in range(5000)).replace(b"\n", b"") + b"\n")
                if fault == "vanish" and len(specs) > 10:
                    victim = rng.choice(sorted(specs))
                    for path in files:
                        if specs[victim].id in path.name:
                            path.unlink()
                    del specs[victim]
                command = [*jezero_command(), "--config", str(cfg), "run", "-q"]
                if fault == "kill":
                    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                    time.sleep(rng.uniform(0.3, 2.0))
                    proc.send_signal(signal.SIGKILL)
                    proc.wait()
                elif fault == "full":
                    size = library.stat().st_size if library.exists() else 0

                    def limit(size=size):
                        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
                        resource.setrlimit(resource.RLIMIT_FSIZE, (size + 65536, size + 65536))

                    proc = subprocess.run(command, capture_output=True, text=True, preexec_fn=limit)
                    if proc.returncode and ("Traceback" in proc.stderr or "error:" not in proc.stderr):
                        tally["unclear full-disk errors"] += 1
                elif fault == "lock":
                    from filelock import FileLock

                    with FileLock(str(library) + ".lock"):
                        proc = subprocess.run(command, capture_output=True, text=True)
                    if proc.returncode != 3 or "Traceback" in proc.stderr:
                        tally["unclear lock errors"] += 1
                else:
                    proc = subprocess.run(command, capture_output=True, text=True)
                    if proc.returncode or "Traceback" in proc.stderr:
                        tally[f"failed {fault} runs"] += 1
                check(library)
            proc = subprocess.run([*jezero_command(), "--config", str(cfg), "run", "-q"], capture_output=True, text=True)
            assert proc.returncode == 0, proc.stderr
            final = check(library)
        finally:
            stop.set()
            client.join(60)
            server.should_exit = True
        reference = config(tmp / "reference.toml", tmp / "ref" / "library.sqlite3", sessions)
        subprocess.run([*jezero_command(), "--config", str(reference), "run", "-q"], check=True, capture_output=True)
        expected = check(tmp / "ref" / "library.sqlite3")

        live = {s.id for s in specs.values()}

        def rows(lib):
            conn = open_readonly(lib)
            try:
                return sorted(r[:2] for r in conn.execute("SELECT uid, content_hash, session_id FROM items")
                              if r[2].split("/")[0] in live)
            finally:
                conn.close()

        print(json.dumps({
            "minutes": args.minutes, "rounds": rounds, "faults": dict(faults), "live_sessions": len(live),
            "items": final["items"], "reference_items": expected["items"],
            "items_of_removed_files_kept": final["items"] - len(rows(library)),
            "live_items_identical_to_a_clean_run": rows(library) == rows(tmp / "ref" / "library.sqlite3"),
            "mcp": dict(tally),
        }, indent=2))


if __name__ == "__main__":
    main()
