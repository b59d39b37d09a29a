"""An embedder's costs: `prepare` (CPU and wall time, its size on disk), `build`, throughput on
item-sized texts (800-1,500 characters), latency of one query; for `minilm-static`, for scale,
the full MiniLM transformer (the same numpy encoder) one text at a time. `--embedder minilm` measures
the full-model embedder itself (its length-sorted batches): run it with OPENBLAS_NUM_THREADS=1 for
the rate of one core.

The texts are windows of the real transcripts in ../shared/samples (tool output, code, prose)
when they are there, else the sentences of pairs.py joined to item length.

    .venv/bin/python benchmarks/embed/speed.py [--cache DIR] [--items 2000]
    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/embed/speed.py --embedder minilm --items 256 --repeats 1
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from pairs import CHAT, CODING  # noqa: E402

from jezero_embedders import minilm, minilm_static, source  # noqa: E402
from jezero_embedders.transformer import Encoder  # noqa: E402

SAMPLES = Path(__file__).resolve().parents[3] / "shared" / "samples"


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def item_texts(count: int, rng: random.Random) -> tuple[list[str], str]:
    words: list[str] = []
    if SAMPLES.is_dir():
        for path in sorted(SAMPLES.rglob("*.jsonl")):
            for line in path.read_text(errors="replace").splitlines():
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                for s in _strings(record):
                    if len(s) > 40 and not s.startswith(("data:", "{")):  # text, not ids or base64
                        words.extend(s.split())
        origin = f"windows of the transcripts in {SAMPLES}"
    if len(words) < 10_000:
        words = " ".join(t for row in CODING + CHAT for t in row).split()
        origin = "sentences of pairs.py"
    texts = []
    for _ in range(count):
        size = rng.randint(800, 1500)
        start = rng.randrange(len(words))
        text, i = [], start
        while sum(map(len, text)) + len(text) < size:
            text.append(words[i % len(words)])
            i += 1
        texts.append(" ".join(text)[:size])
    return texts, origin


def timed(fn, *args):
    c, w = time.process_time(), time.perf_counter()
    out = fn(*args)
    return out, time.process_time() - c, time.perf_counter() - w


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cache", type=Path, help="prepare into (or reuse) this cache folder; default a temporary one")
    ap.add_argument("--items", type=int, default=2000)
    ap.add_argument("--batch", type=int, default=64, help="texts per embed call, as a re-embedding run would send")
    ap.add_argument("--embedder", choices=("minilm-static", "minilm"), default="minilm-static")
    ap.add_argument("--repeats", type=int, default=3, help="throughput runs (the median is reported)")
    args = ap.parse_args()
    rng = random.Random(17)
    cache = args.cache or Path(tempfile.mkdtemp(prefix="jezero-embed-bench-"))
    options = {"cache_dir": str(cache)}

    module = minilm if args.embedder == "minilm" else minilm_static
    folder = (minilm.model_folder(minilm.parse_options(options)) if module is minilm
              else minilm_static.table_folder(minilm_static.parse_options(options)))
    if not (folder / "manifest.json").exists():
        line, cpu, wall = timed(module.prepare, options)
        print(f"prepare: {wall:.1f} s wall, {cpu:.1f} s CPU\n  {line}")
    else:
        print(f"prepare: reusing {folder}")
    print(f"on disk: {folder_bytes(folder) / 1e6:.1f} MB ({folder})")
    embedder, cpu, wall = timed(module.build, options)
    print(f"build: {wall * 1000:.1f} ms wall; dimension {embedder.dimension}; model id {embedder.model_id}")

    texts, origin = item_texts(args.items, rng)
    tokens = sum(len(e.ids) for e in embedder.tokenizer.encode_batch(texts[:200], add_special_tokens=False)) / 200
    print(f"items: {len(texts)} texts of 800-1,500 characters ({origin}), {tokens:.0f} tokens each on average")

    rates, cpu_rates = [], []
    for _ in range(args.repeats):
        _, cpu, wall = timed(lambda: [embedder.embed(texts[i:i + args.batch]) for i in range(0, len(texts), args.batch)])
        rates.append(len(texts) / wall)
        cpu_rates.append(len(texts) / cpu)
    print(f"throughput: {statistics.median(rates):,.1f} items/s wall (median of {args.repeats}: "
          f"{', '.join(f'{r:,.1f}' for r in rates)}), {statistics.median(cpu_rates):,.1f} items per CPU second")

    queries = [row[0] for row in CODING + CHAT] * 5
    lat, lat_cpu = [], []
    for q in queries:
        _, cpu, wall = timed(embedder.embed, [q])
        lat.append(wall * 1000)
        lat_cpu.append(cpu * 1000)
    lat.sort()
    print(f"one query: p50 {lat[len(lat) // 2]:.3f} ms, p99 {lat[int(len(lat) * 0.99)]:.3f} ms wall, "
          f"p50 {statistics.median(lat_cpu):.3f} ms CPU ({len(lat)} queries)")
    if module is minilm:
        return 0

    # For scale: the full transformer on the same items (256-token window, one text per call).
    encoder = Encoder(source.find().folder)
    tok = minilm_static.source_tokenizer(source.find().folder)
    tok.enable_truncation(256)
    sample = texts[:20]

    def full():
        for enc in tok.encode_batch(sample):
            ids = np.asarray([enc.ids])
            encoder.mean_pooled(ids, np.ones_like(ids))

    _, cpu, wall = timed(full)
    print(f"full MiniLM (numpy, for scale): {len(sample) / wall:.1f} items/s wall, {len(sample) / cpu:.1f} items per CPU second")
    one = [q for q in queries[:20]]

    def full_query():
        for q in one:
            ids = np.asarray([tok.encode(q).ids])
            encoder.mean_pooled(ids, np.ones_like(ids))

    _, cpu, wall = timed(full_query)
    print(f"full MiniLM one query: {wall / len(one) * 1000:.1f} ms wall on average")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
