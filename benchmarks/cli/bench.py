"""Cold-start benchmark of the `jezero` command: what an agent pays each time it shells out to
`jezero search`.

Builds the wheels of a source tree (this checkout, or a git ref for a before/after figure),
installs them with their bytecode into a fresh virtual environment outside the workspace (as
`pip install 'jezero[all]'` would), makes the demo library there with `jezero up --demo
--no-serve`, then runs each command N times, each a new process, and reports the median wall
time and the median CPU time (user + system) of the process. Needs uv and the lock's packages in
uv's cache or on the index.

    .venv/bin/python benchmarks/cli/bench.py                 # this checkout
    .venv/bin/python benchmarks/cli/bench.py --ref af133f5   # another commit, for comparison
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DISTRIBUTIONS = [".", "jezero_connectors_claude", "jezero_connectors_codex", "jezero_connectors_inbox",
                 "jezero_summarizers"]


def uv(*args: str, cwd: Path | None = None) -> str:
    proc = subprocess.run(["uv", *args], capture_output=True, text=True, cwd=cwd)
    if proc.returncode != 0:
        sys.exit(f"uv {' '.join(args)} failed:\n{proc.stderr}")
    return proc.stdout


def source_tree(ref: str | None, work: Path) -> Path:
    if ref is None:
        return REPO
    tree = work / "src"
    tree.mkdir()
    archive = subprocess.run(["git", "-C", str(REPO), "archive", ref], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return tree


def install(tree: Path, work: Path) -> Path:
    wheels = work / "wheels"
    for dist in DISTRIBUTIONS:
        uv("build", "--offline", "--wheel", "-q", "--out-dir", str(wheels), str(tree / dist), cwd=tree)
    constraints = work / "constraints.txt"
    uv("export", "--frozen", "--no-hashes", "--no-dev", "--all-packages", "--no-emit-workspace", "-q",
       "-o", str(constraints), cwd=tree)
    venv = work / "venv"
    uv("venv", "-q", "--python", sys.executable, str(venv))
    wheel_files = [str(w) for w in sorted(wheels.glob("*.whl"))]
    args = ["pip", "install", "-q", "--compile-bytecode", "--python", str(venv / "bin" / "python"), "-c", str(constraints)]
    try:
        uv(*args[:2], "--offline", *args[2:], *wheel_files)
    except SystemExit:
        uv(*args, *wheel_files)
    return venv


def timed(command: list[str], env: dict) -> tuple[float, float]:
    """(wall, cpu) seconds of one run of `command` in a new process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, env=env, check=True, capture_output=True, cwd=env["HOME"])
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ref", help="a git ref to measure instead of this checkout")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args()
    if shutil.which("uv") is None:
        sys.exit("needs uv")
    with tempfile.TemporaryDirectory(prefix="jezero-cli-bench-") as tmp:
        work = Path(tmp)
        venv = install(source_tree(args.ref, work), work)
        jezero = str(venv / "bin" / "jezero")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("JEZERO_", "PYTHON"))}
        env.update(HOME=str(work / "home"), XDG_CONFIG_HOME=str(work / "config"), XDG_DATA_HOME=str(work / "data"),
                   TMPDIR=str(work))
        (work / "home").mkdir()
        up = subprocess.run([jezero, "up", "--demo", "--no-serve"], env=env, capture_output=True, text=True, check=True,
                            cwd=work)
        config = re.search(r"--config (\S+)", up.stdout)[1]
        commands = {
            "python -c pass": [str(venv / "bin" / "python"), "-c", "pass"],
            "jezero --help": [jezero, "--help"],
            "jezero search --json": [jezero, "--config", config, "search", "too many clients", "--json"],
            "jezero search": [jezero, "--config", config, "search", "too many clients"],
            "jezero check-config": [jezero, "--config", config, "check-config"],
        }
        figures = {}
        for name, command in commands.items():
            timed(command, env)  # the first run warms the OS file cache: "cold" is a new process, not a cold disk
            runs = [timed(command, env) for _ in range(args.runs)]
            figures[name] = {"wall_ms": round(statistics.median(w for w, _ in runs) * 1000),
                             "cpu_ms": round(statistics.median(c for _, c in runs) * 1000)}
            print(f"{name:24} wall {figures[name]['wall_ms']:5d} ms   cpu {figures[name]['cpu_ms']:5d} ms   "
                  f"(median of {args.runs})")
        modules = work / "modules.json"
        probe = ("import atexit, json, sys\n"
                 f"sys.argv = ['jezero', '--config', {config!r}, 'search', 'too many clients', '--json']\n"
                 f"atexit.register(lambda: open({str(modules)!r}, 'w').write(json.dumps(sorted(sys.modules))))\n"
                 "from jezero.cli import main\nmain()\n")
        # From the work folder: `python -c` puts the current folder first on sys.path.
        subprocess.run([str(venv / "bin" / "python"), "-c", probe], env=env, cwd=work, capture_output=True)
        top = {m.split(".")[0] for m in json.loads(modules.read_text())}
        heavy = [m for m in ("litellm", "mcp", "starlette", "uvicorn", "rich", "pluggy", "jezero_connectors_claude",
                             "jezero_connectors_codex", "jezero_summarizers") if m in top]
        print(f"a cold `jezero search --json` imports, of the heavy or unneeded: {heavy or 'none'}")
        figures["search_imports"] = heavy
        figures["ref"] = args.ref or "working tree"
        figures["load_average"] = os.getloadavg()[0]
        print(f"load average during the run: {figures['load_average']:.1f} on {os.cpu_count()} CPUs")
        if args.json:
            Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
