"""Upload throughput into the inbox, and the server's memory while many devices upload at once.

A real `jezero serve` on 127.0.0.1, N devices each made with the client core (`init`), approved
with jezero.devices, each with a made-up Claude Code store of F session files of S KB. Then all
N run `jezero_client.py upload --wait` at the same moment, each in its own process, as N laptops
would. Measured per round:

- new:       every file is new on the server (the normal first upload of a device)
- unchanged: the devices forgot what they sent and send it all again; the server finds the same
             bytes and keeps its files untouched (the worst case of a lost client state)
- nothing:   nothing changed on the devices: each only looks at its store and sends nothing

The same uploads are also made without the client processes (20 threads in the benchmark, one
keep-alive connection each, the core's own Connection class), which leaves out what the devices
spend starting Python and reading their stores: that is the server's own throughput.

Throughput is the bytes (and files) sent, over the wall time from the first process start to the
last exit. The server's memory is its resident set (VmRSS, sampled every 20 ms; VmHWM at the end).

    uv run --locked python benchmarks/upload/bench.py [--devices 20] [--files 25] [--kb 200] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))

from device_support import CLIENT, Device, jezero_serve, wait_for  # noqa: E402

from jezero.devices import approve  # noqa: E402


def make_store(device: Device, index: int, files: int, kb: int) -> int:
    """A Claude Code store of `files` sessions of about `kb` KB each; returns its bytes."""
    total = 0
    line_text = ("word " * 180).strip()
    for f in range(files):
        project = device.claude / "projects" / f"-home-dev{index}-src-proj{f % 4}"
        project.mkdir(parents=True, exist_ok=True)
        lines = []
        size = 0
        n = 0
        while size < kb * 1024:
            line = json.dumps({"type": "user" if n % 2 == 0 else "assistant", "cwd": f"/home/dev{index}/src/proj{f % 4}",
                               "sessionId": f"s{index}-{f}", "message": {"role": "user", "content": f"{n} {line_text}"}})
            lines.append(line)
            size += len(line) + 1
            n += 1
        path = project / f"{index:04d}{f:04d}-0000-4000-8000-000000000000.jsonl"
        path.write_text("\n".join(lines) + "\n")
        total += path.stat().st_size
    return total


def rss_kb(pid: int, field: str = "VmRSS") -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


class Sampler(threading.Thread):
    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.pid, self.peak, self.stop = pid, 0, threading.Event()

    def run(self):
        while not self.stop.is_set():
            self.peak = max(self.peak, rss_kb(self.pid))
            time.sleep(0.02)


def upload_all(devices: list[Device], pid: int) -> tuple[float, int]:
    """Start every device's upload at once; (wall seconds, peak server RSS in KB)."""
    sampler = Sampler(pid)
    sampler.start()
    start = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, str(CLIENT), "upload", "--wait"], env=d.env(),
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for d in devices]
    for p in procs:
        _, err = p.communicate(timeout=600)
        if p.returncode != 0:
            raise SystemExit(f"an upload failed ({p.returncode}): {err.decode()}")
    seconds = time.perf_counter() - start
    sampler.stop.set()
    sampler.join()
    return seconds, sampler.peak


def load_core():
    import importlib.util

    spec = importlib.util.spec_from_file_location("jezero_client_core", CLIENT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def put_all_threads(devices: list[Device], base: str, pid: int) -> tuple[float, int]:
    """Every device's files PUT from a thread of its own; (wall seconds, peak server RSS in KB)."""
    core = load_core()
    jobs = []
    for d in devices:
        key = (d.home / "device.key").read_text().strip()
        jobs.append((key, [(rel, path.read_bytes()) for rel, path in core.store_files("claude", d.claude)]))
    failures = []

    def run(key, files):
        conn = core.Connection(base)
        for rel, body in files:
            status, _, data = conn.request("PUT", f"/inbox/v1/claude/{rel}", body=body, headers={
                "Authorization": "Bearer " + key, "Content-Type": "application/octet-stream"})
            if status != 200:
                failures.append((status, data))
        conn.close()

    sampler = Sampler(pid)
    sampler.start()
    start = time.perf_counter()
    threads = [threading.Thread(target=run, args=job) for job in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.perf_counter() - start
    sampler.stop.set()
    sampler.join()
    if failures:
        raise SystemExit(f"uploads failed: {failures[:3]}")
    return seconds, sampler.peak


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--devices", type=int, default=20)
    parser.add_argument("--files", type=int, default=25)
    parser.add_argument("--kb", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    results: dict[str, list] = {"new": [], "unchanged": [], "nothing": [], "http new": [], "http unchanged": []}
    peaks: dict[str, list] = {k: [] for k in results}
    with tempfile.TemporaryDirectory(prefix="jezero-upload-bench-") as tmp:
        root = Path(tmp)
        os.environ.setdefault("XDG_CONFIG_HOME", str(root / "xdg"))
        with jezero_serve(root / "server") as server:
            baseline = rss_kb(server.pid)
            devices, total = [], 0
            for i in range(args.devices):
                device = Device(root / f"device{i}")
                made = device.client("init", "--server", server.base, "--device", f"dev{i}")
                approve(server.config, f"dev{i}", made.stdout.split()[-1])
                total += make_store(device, i, args.files, args.kb)
                devices.append(device)
            wait_for(lambda: all(d.client("status").returncode == 0 for d in devices[-1:]))
            files = args.devices * args.files
            for _ in range(args.rounds):
                shutil.rmtree(root / "server" / "inbox", ignore_errors=True)
                for d in devices:
                    (d.home / "upload-state.json").unlink(missing_ok=True)
                seconds, peak = upload_all(devices, server.pid)
                results["new"].append(seconds)
                peaks["new"].append(peak)
                for d in devices:
                    (d.home / "upload-state.json").unlink(missing_ok=True)
                seconds, peak = upload_all(devices, server.pid)
                results["unchanged"].append(seconds)
                peaks["unchanged"].append(peak)
                seconds, peak = upload_all(devices, server.pid)
                results["nothing"].append(seconds)
                peaks["nothing"].append(peak)
                shutil.rmtree(root / "server" / "inbox", ignore_errors=True)
                for kind in ("http new", "http unchanged"):
                    seconds, peak = put_all_threads(devices, server.base, server.pid)
                    results[kind].append(seconds)
                    peaks[kind].append(peak)
            hwm = rss_kb(server.pid, "VmHWM")

    mb = total / 1e6
    print(f"{args.devices} devices x {args.files} files x ~{args.kb} KB = {files} files, {mb:.1f} MB; "
          f"{args.rounds} rounds, medians; server RSS before uploads {baseline / 1024:.0f} MB")
    print(f"{'round':<15} {'wall s':>8} {'MB/s':>8} {'files/s':>9} {'peak RSS MB':>12}")
    for kind in results:
        s = statistics.median(results[kind])
        sent_mb = mb if kind != "nothing" else 0.0
        print(f"{kind:<15} {s:8.2f} {sent_mb / s:8.1f} {(files if kind != 'nothing' else 0) / s:9.1f} "
              f"{statistics.median(peaks[kind]) / 1024:12.0f}")
    print(f"server VmHWM over the whole run: {hwm / 1024:.0f} MB")


if __name__ == "__main__":
    main()
