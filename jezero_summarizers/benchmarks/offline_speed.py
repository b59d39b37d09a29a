"""How fast the offline summarizer is: segments per second on one core, for segments of about
60,000 characters (the pipeline's default max_input_chars) cut from the real samples, plus the
worst case seen: a segment that is all discussion (sample C1 repeated), no tool output.

    .venv/bin/python jezero_summarizers/benchmarks/offline_speed.py [--chars 60000] [--rounds 5]

Not a test: timings depend on the machine and its load. CPU time (process_time) is measured and
the best of several rounds is kept, so other processes on the machine disturb it less."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import summarizer_samples as samples  # noqa: E402

from jezero_summarizers.offline import OfflineSummarizer  # noqa: E402


def windows(chars: int):
    """Segments of about `chars` characters cut from the samples played one after the other (a
    mix of prompts, answers and tool output, as in a backfill), each attributed to the session of
    its first block. The stream is replayed until it gives at least ten segments."""
    sessions = [(name, samples.local_session(relative)) for name, relative in samples.ALL.items()]
    stream = [(name, session, block) for name, session in sessions for block in session.blocks]
    out, start, size = [], 0, 0
    current: list = []
    while len(out) < 10:
        for name, session, block in stream:
            current.append((name, session, block))
            size += len(block.text) + 30  # and its header line
            if size >= chars:
                first_name, first_session, _ = current[0]
                out.append((first_name, samples.segment(first_session, blocks=[b for _, _, b in current], index=start)))
                start += len(current)
                current, size = [], 0
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chars", type=int, default=60_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if not samples.SAMPLES.is_dir():
        sys.exit(f"samples not found at {samples.SAMPLES}")
    segments = list(windows(args.chars))
    summarizer = OfflineSummarizer()
    for _, seg in segments:  # warm up (regex compilation, caches)
        summarizer.summarize(seg)
    best = float("inf")
    for _ in range(args.rounds):
        t0 = time.process_time()
        for _, seg in segments:
            summarizer.summarize(seg)
        best = min(best, time.process_time() - t0)
    chars = sum(len(seg.text) for _, seg in segments)
    print(f"{len(segments)} segments, {chars / len(segments):,.0f} characters on average")
    print(f"best of {args.rounds} rounds: {best / len(segments) * 1000:.2f} ms per segment, "
          f"{len(segments) / best:,.0f} segments/s on one core")
    for name, seg in segments:
        print(f"  from {name}: {len(seg.text):>7,} chars  {_time(summarizer, seg) * 1000:6.2f} ms")
    c1 = samples.local_session(samples.C1)
    blocks = list(c1.blocks)
    while len(samples.render(blocks)) < args.chars:
        blocks += c1.blocks
    prose = samples.segment(c1, blocks=blocks)
    print(f"  all discussion (C1 repeated): {len(prose.text):,} chars  {_time(summarizer, prose) * 1000:.2f} ms")


def _time(summarizer, seg, rounds: int = 5) -> float:
    best = float("inf")
    for _ in range(rounds):
        t0 = time.process_time()
        summarizer.summarize(seg)
        best = min(best, time.process_time() - t0)
    return best


if __name__ == "__main__":
    main()
