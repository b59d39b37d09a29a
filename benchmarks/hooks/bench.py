"""Hook latency: what an agent waits for at session start and on the first prompt, as a device
runs it (`python3 -I -S jezero_hook.py ...` in a fresh process, its payload on stdin), against a
real `jezero serve` on 127.0.0.1 over a large library; then through a proxy that answers every
request a second late, with the server down, and with a server that accepts connections and never
answers (every hook must return within its 2.5 s budget, exit 0, and write nothing on stderr).
See README.md for the figures.

    .venv/bin/python benchmarks/hooks/bench.py                # 100,000 items, 100 runs of each hook
    .venv/bin/python benchmarks/hooks/bench.py --items 20000 --runs 50
    .venv/bin/python benchmarks/hooks/bench.py --engine tantivy   # the server searches with tantivy

The library is built once into benchmarks/hooks/data/ (git-ignored) by benchmarks/search/corpus.py.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE.parent / "search"))

import corpus  # noqa: E402  (benchmarks/search/corpus.py)

CORE = ROOT / "clients" / "core" / "jezero_client.py"
HOOK = CORE.parent / "jezero_hook.py"  # what the plugins' hook commands run
FLAGS = ["-I", "-S"]  # as in the plugins' hook commands
KEY = "jz_hooks-bench-key"
PROJECT = "billing"  # one of the corpus's projects


def library(n: int) -> Path:
    path = HERE / "data" / f"lib-{n}.sqlite3"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        print(f"building {n} items into {path} (once) ...", file=sys.stderr)
        t0 = time.perf_counter()
        partial = path.with_suffix(".partial")
        corpus.build(partial, n, progress=lambda k: print(f"  {k}", file=sys.stderr) if k % 20000 == 0 else None)
        for suffix in ("-wal", "-shm"):
            Path(str(partial) + suffix).unlink(missing_ok=True)
        partial.rename(path)
        print(f"built in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(work: Path, lib: Path, engine: str) -> tuple[subprocess.Popen, str]:
    port = free_port()
    config = work / "config.toml"
    config.write_text(f'[storage]\npath = "{lib}"\n\n[server]\nport = {port}\n\n[search]\nengine = "{engine}"\n\n'
                      f'[[clients]]\nname = "bench"\nkey_sha256 = "{hashlib.sha256(KEY.encode()).hexdigest()}"\n')
    jezero = Path(sys.executable).parent / "jezero"
    proc = subprocess.Popen([str(jezero), "serve", "--log-level", "warning"], env={**os.environ, "JEZERO_CONFIG": str(config)},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return proc, base
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("jezero serve did not start")


SLOW_S = 1.0  # a server this slow still answers within the hooks' 2.5 s
SLOW_RUNS = 20


def slow_proxy(upstream: str, delay: float):
    """A server in front of `upstream` that answers every request `delay` seconds late (the hooks
    send one HTTP/1.0 request per connection). Returns its base URL and a function that stops it."""
    host, port = upstream.rsplit("/", 1)[-1].split(":")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    listener.settimeout(0.2)
    stop = threading.Event()

    def relay(client: socket.socket) -> None:
        with client:
            client.settimeout(10)
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = client.recv(65536)
                if not chunk:
                    return
                data += chunk
            head, _, body = data.partition(b"\r\n\r\n")
            length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                           if line.lower().startswith(b"content-length:")), 0)
            while len(body) < length:
                chunk = client.recv(65536)
                if not chunk:
                    return
                body += chunk
            time.sleep(delay)
            with socket.create_connection((host, int(port)), timeout=10) as up:
                up.sendall(head + b"\r\n\r\n" + body)
                while chunk := up.recv(65536):
                    client.sendall(chunk)

    def accept() -> None:
        while not stop.is_set():
            try:
                client, _ = listener.accept()
            except OSError:
                continue
            threading.Thread(target=relay, args=(client,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()

    def close() -> None:
        stop.set()
        listener.close()

    return f"http://127.0.0.1:{listener.getsockname()[1]}", close


def device(work: Path, server: str) -> dict[str, str]:
    home = work / f"device-{server.rsplit(':', 1)[-1]}"
    home.mkdir(parents=True, exist_ok=True)
    (home / "client.json").write_text(json.dumps({"server": server, "device": "bench"}))
    (home / "device.key").write_text(KEY + "\n")
    return {**os.environ, "JEZERO_CLIENT_HOME": str(home)}


def hook(event: str, payload: dict, env: dict[str, str], python: str,
         before: bool = False) -> tuple[float, subprocess.CompletedProcess]:
    """One hook as the plugins run it; `before`: as they ran it before jezero_hook.py and its flags."""
    command = [python, str(CORE), "hook", event] if before else [python, *FLAGS, str(HOOK), event]
    cpu0, t0 = children_cpu(), time.perf_counter()
    done = subprocess.run(command + ["--agent", "claude"], input=json.dumps(payload),
                          capture_output=True, text=True, env=env, timeout=30)
    CPU.append(children_cpu() - cpu0)
    return (time.perf_counter() - t0) * 1000, done


# The CPU time of each hook process (user + system), which a loaded machine moves far less than
# the wall time: appended by hook(), read right after it by timed().
CPU: list[float] = []


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (usage.ru_utime + usage.ru_stime) * 1000


def figures(ms: list[float], cpu: list[float] | None = None) -> str:
    ms = sorted(ms)
    text = f"p50 {statistics.median(ms):6.1f} ms   p95 {p95(ms):6.1f} ms   max {ms[-1]:6.1f} ms   (n={len(ms)})"
    if cpu:
        text += f"   CPU p50 {statistics.median(cpu):5.1f} p95 {p95(cpu):5.1f} ms"
    return text


def p95(values: list[float]) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(0.95 * len(values))) - 1)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--python", default=sys.executable, help="the interpreter a device runs the core with")
    parser.add_argument("--engine", default="fts5", help="the server's search index engine (fts5 or tantivy)")
    args = parser.parse_args()

    lib = library(args.items)
    if args.engine != "fts5":
        from jezero.store import engines

        t0 = time.perf_counter()
        engines.sync(args.engine, lib)  # the engine's index, built once beside the library
        print(f"{args.engine} index ready in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    rng = random.Random(5)
    words = [w for w in corpus.vocabulary()[:3000] if len(w) >= 4]
    work = Path(tempfile.mkdtemp(prefix="jezero-hooks-bench-"))
    workdir = work / "src" / PROJECT
    (workdir / ".git").mkdir(parents=True)
    # The interpreter alone, for scale: what a hook costs before it does anything.
    bare: dict[str, tuple[list[float], list[float]]] = {"flags": ([], []), "plain": ([], [])}
    for _ in range(20):
        for name, flags in (("flags", FLAGS), ("plain", [])):
            cpu0, t0 = children_cpu(), time.perf_counter()
            subprocess.run([args.python, *flags, "-c", "pass"])
            bare[name][0].append((time.perf_counter() - t0) * 1000)
            bare[name][1].append(children_cpu() - cpu0)
    print(f"library: {args.items} items; engine: {args.engine}; python: {args.python}; "
          f"load average at the start: {os.getloadavg()[0]:.1f}")
    print(f"python -I -S -c pass                {figures(*bare['flags'])}")
    print(f"python -c pass                      {figures(*bare['plain'])}")
    proc, base = serve(work, lib, args.engine)
    rows: dict[str, tuple[list[float], list[float]]] = {}  # row -> (wall ms, CPU ms of the hook process)

    def run(row: str, event: str, payload: dict, env: dict[str, str], before: bool = False):
        ms, done = hook(event, payload, env, args.python, before)
        assert done.returncode == 0 and not done.stderr, done.stderr
        wall, cpu = rows.setdefault(row, ([], []))
        wall.append(ms)
        cpu.append(CPU[-1])
        return done

    try:
        env = device(work, base)
        hook("session-start", {"session_id": "warm", "cwd": str(workdir)}, env, args.python)  # first request
        injected, found = 0, 0
        for i in range(args.runs):
            done = run("start", "session-start", {"session_id": f"s{i}", "cwd": str(workdir)}, env)
            found += "Newest items" in done.stdout
            text = " ".join(rng.sample(words, rng.randint(3, 8)))
            done = run("prompt", "prompt", {"session_id": f"s{i}", "cwd": str(workdir), "prompt": text}, env)
            injected += bool(done.stdout.strip())
        for i in range(min(args.runs, 30)):  # the same no-op hook, started as now and as before
            payload = {"session_id": f"s{i}", "cwd": str(workdir), "prompt": "again"}
            run("later", "prompt", payload, env)
            run("before", "prompt", payload, env, before=True)
        # The server's share: the same calls made from this process over HTTP (no interpreter
        # start), and the searches alone, as CPU time of the thread that runs them.
        import importlib.util

        from jezero.config import SearchConfig
        from jezero.query import search
        from jezero.store import open_readonly

        spec = importlib.util.spec_from_file_location("jezero_client", CORE)
        core = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(core)
        os.environ["JEZERO_CLIENT_HOME"] = env["JEZERO_CLIENT_HOME"]
        client = core.Client(core.client_home())
        conn, options = open_readonly(lib), SearchConfig(engine=args.engine)
        calls: dict[str, list[float]] = {"timeline": [], "search": [], "fused": [], "search cpu": [], "fused cpu": []}
        for i in range(args.runs):
            t0 = time.perf_counter()
            core.mcp_tool(client, "timeline", {"project": PROJECT, "limit": core.NEWEST_ITEMS}, 10)
            calls["timeline"].append((time.perf_counter() - t0) * 1000)
            arguments = core.first_prompt_search(" ".join(rng.sample(words, rng.randint(3, 8))))
            both = {"query": arguments["query"], "limit": arguments["limit"]}  # as the hook asked before
            for name, given in (("search", arguments), ("fused", both)):
                t0 = time.perf_counter()
                core.mcp_tool(client, "search", given, 10)
                calls[name].append((time.perf_counter() - t0) * 1000)
                c0 = time.thread_time()
                search(conn, given["query"], limit=given["limit"], options=options, **(
                    {"lanes": given["lanes"]} if "lanes" in given else {}))
                calls[name + " cpu"].append((time.thread_time() - c0) * 1000)
        conn.close()
        # A slow server: every request answered SLOW_S later (a proxy in front of the real one).
        slow, stop_slow = slow_proxy(base, SLOW_S)
        slow_env = device(work, slow)
        shown_slow = added_slow = 0
        for i in range(SLOW_RUNS):
            done = run("slow session-start", "session-start", {"session_id": f"w{i}", "cwd": str(workdir)}, slow_env)
            shown_slow += "Newest items" in done.stdout
            text = " ".join(rng.sample(words, rng.randint(3, 8)))
            done = run("slow prompt", "prompt", {"session_id": f"w{i}", "cwd": str(workdir), "prompt": text}, slow_env)
            added_slow += bool(done.stdout.strip())
        stop_slow()
        print(f"session start (timeline)            {figures(*rows['start'])}   newest items shown in {found}/{args.runs}")
        print(f"first prompt (search + rule)        {figures(*rows['prompt'])}   items added in {injected}/{args.runs}")
        print(f"later prompt (nothing to do)        {figures(*rows['later'])}")
        print(f"  the same, started as before       {figures(*rows['before'])}   python jezero_client.py hook, no flags")
        print(f"  in process: timeline call         {figures(calls['timeline'])}")
        print(f"  in process: search call           {figures(calls['search'])}   items ranking alone, as the hook asks")
        print(f"  in process: search, both lanes    {figures(calls['fused'])}   as the hook asked before")
        print(f"  search() alone, CPU: items        {figures(calls['search cpu'])}")
        print(f"  search() alone, CPU: both lanes   {figures(calls['fused cpu'])}")
        print(f"server slow ({SLOW_S:.1f} s), session-start {figures(*rows['slow session-start'])}   "
              f"newest items shown in {shown_slow}/{SLOW_RUNS}")
        print(f"server slow ({SLOW_S:.1f} s), prompt        {figures(*rows['slow prompt'])}   "
              f"items added in {added_slow}/{SLOW_RUNS}")
    finally:
        proc.terminate()
        proc.wait(timeout=30)

    # Server down: nothing listens on the port.
    env = device(work, f"http://127.0.0.1:{free_port()}")
    for i in range(20):
        for event in ("session-start", "prompt"):
            run(f"down {event}", event, {"session_id": f"d{i}", "cwd": str(workdir), "prompt": "billing timeout migration"},
                env)
    for event in ("session-start", "prompt"):
        print(f"server down, {event:13s}         {figures(*rows[f'down {event}'])}")

    # A server that accepts and never answers: the hook's budget is all it may cost.
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    held, stop = [], threading.Event()

    def accept():
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                pass

    threading.Thread(target=accept, daemon=True).start()
    env = device(work, f"http://127.0.0.1:{listener.getsockname()[1]}")
    for i in range(5):
        for event in ("session-start", "prompt"):
            run(f"silent {event}", event, {"session_id": f"h{i}", "cwd": str(workdir), "prompt": "billing timeout migration"},
                env)
    stop.set()
    for event in ("session-start", "prompt"):
        print(f"server never answers, {event:13s} {figures(*rows[f'silent {event}'])}")
    for conn in held:
        conn.close()
    shutil.rmtree(work, ignore_errors=True)
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
