"""Ingest throughput: parsing + redaction + segmenting + writing, with a trivial summarizer.

Generates a few hundred sessions in the real Claude Code and Codex formats (the connectors' demo
writers), then runs the real connectors and pipeline into a fresh SQLite file, several times, and
reports sessions/s and MB/s (medians). The summarizer is a stub that costs nothing, so the figure is
the pipeline's own cost; a real model call dominates it by orders of magnitude.

    .venv/bin/python benchmarks/ingest/bench.py --sessions 300 --repeat 3
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from jezero import hookimpl, plugins
from jezero.config import Config
from jezero.demo import SessionSpec, Turn
from jezero_connectors_claude.demo import write_claude
from jezero_connectors_codex.demo import write_codex
from jezero.ingest.runner import run_connectors
from jezero.models import Atom, Summary, Usage

WORDS = ("deploy migrate invoice webhook stripe postgres docker nginx cache redis queue worker retry "
         "timeout schema index trigger cron backup restore token refresh session cookie banner consent "
         "analytics plausible checkout cart payment refund export import csv parser lexer ast compile").split()


def fake_text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def make_sessions(folder: Path, n: int, seed: int = 7) -> int:
    rng = random.Random(seed)
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    total = 0
    for i in range(n):
        turns = []
        for _ in range(rng.randint(4, 30)):
            kind = rng.random()
            if kind < 0.3:
                turns.append(Turn("user", fake_text(rng, rng.randint(10, 60))))
            elif kind < 0.6:
                turns.append(Turn("assistant", fake_text(rng, rng.randint(20, 200))))
            else:
                out = "\n".join(fake_text(rng, 12) for _ in range(rng.randint(1, 80)))
                if rng.random() < 0.05:
                    out += "\nAWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
                turns.append(Turn("command", f"pytest -k {rng.choice(WORDS)}", out, failed=rng.random() < 0.2))
        spec = SessionSpec("claude" if i % 2 else "codex", f"/home/dev/src/proj{i % 7}",
                           start + timedelta(hours=i), turns)
        path = (write_claude(folder / "claude" / "projects", spec) if spec.agent == "claude"
                else write_codex(folder / "codex", spec))
        total += path.stat().st_size
    return total


class Stub:
    name, model, max_in_flight = "stub", None, 1

    def summarize(self, segment):
        first = segment.blocks[0].text[:80] or "x"
        return Summary(title=first, summary=first, questions=[first, first, first],
                       atoms=[Atom(type="fact", text=first)]), Usage()


class StubPlugin:
    @hookimpl
    def register_summarizers(self, register):
        register("stub", lambda config: Stub())


def run_once(sessions: Path, library: Path) -> tuple[float, int, int]:
    cfg = Config.model_validate({
        "storage": {"path": str(library)},
        "summarizer": {"name": "stub"},
        "ingest": {"settle_minutes": 0},
        "connectors": [
            {"name": "claude", "type": "claude", "options": {"path": str(sessions / "claude" / "projects")}},
            {"name": "codex", "type": "codex", "options": {"path": str(sessions / "codex")}},
        ],
    })
    started = time.perf_counter()
    reports = run_connectors(cfg)
    elapsed = time.perf_counter() - started
    return elapsed, sum(r.sessions_written for r in reports), sum(r.items_written for r in reports)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    plugins.get_plugin_manager().register(StubPlugin(), name="bench-stub")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        size = make_sessions(folder / "sessions", args.sessions)
        times = []
        for i in range(args.repeat):
            elapsed, sessions, items = run_once(folder / "sessions", folder / f"lib{i}.sqlite3")
            times.append(elapsed)
            print(f"run {i + 1}: {sessions} sessions, {items} items in {elapsed:.2f} s", file=sys.stderr)
        median = statistics.median(times)
        print(f"sessions: {args.sessions}, transcript bytes: {size / 1e6:.1f} MB")
        print(f"median: {median:.2f} s = {args.sessions / median:.0f} sessions/s, {size / 1e6 / median:.1f} MB/s")


if __name__ == "__main__":
    main()
