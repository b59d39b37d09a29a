"""The load benchmark's 400 searches through the real server, once with each client key, recording
every answer's item ids in order (and scores): run it before and after a change to the server or
the engine, and compare the two files. A change that is only about speed must give the same file.

    .venv/bin/python benchmarks/load/answers.py --engine tantivy --out before.json
    .venv/bin/python benchmarks/load/answers.py --engine tantivy --out after.json --compare before.json

The library is a fresh copy of the benchmark's pristine one (same index state every time) and no
writer runs, so the answers depend only on the code. `--server "--workers 2"` checks another
server shape against the same file.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench  # noqa: E402


async def collect(port: int, qs: list[tuple[str, dict]], concurrency: int) -> dict[str, dict]:
    """Every search once with each key, `concurrency` clients per key at once."""
    out: dict[str, dict] = {}
    queues = {key: [(kind, i, q, f) for i, (q, f) in enumerate(qs)] for kind, key in bench.KEYS.items()}
    clients = [bench.RawClient(port, key, bench.MODERN) for key in queues for _ in range(concurrency)]
    await asyncio.gather(*(c.connect() for c in clients))

    async def worker(client):
        queue = queues[client.key]
        while queue:
            kind, i, q, f = queue.pop(0)
            status, _, data = await client.rpc("tools/call", {"name": "search", "arguments": {"query": q, **f}},
                                               "search")
            answer = json.loads(data.split(b"\n")[-1]) if status == 200 else {"status": status}
            result = answer.get("result") or {}
            content = result.get("structuredContent") or {}
            out[f"{kind}:{i}"] = {"query": q, "filters": f, "error": bool(result.get("isError")) or "result" not in answer,
                                  "ids": [h["id"] for h in content.get("items", [])],
                                  "scores": [h.get("score") for h in content.get("items", [])],
                                  "text": (result.get("content") or [{}])[0].get("text")}

    await asyncio.gather(*(worker(c) for c in clients))
    await asyncio.gather(*(c.close() for c in clients), return_exceptions=True)
    return dict(sorted(out.items(), key=lambda kv: (kv[0].split(":")[0], int(kv[0].split(":")[1]))))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engine", default="tantivy", choices=["fts5", "tantivy"])
    ap.add_argument("--items", type=int, default=100_000)
    ap.add_argument("--data", type=Path, default=HERE / "data")
    ap.add_argument("--server", default="", help="options for server.py")
    ap.add_argument("--concurrency", type=int, default=4, help="clients per key at once")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--compare", type=Path, help="a file from an earlier run: report every difference")
    args = ap.parse_args()

    pristine = bench.pristine_library(args.data, args.items)
    index = bench.engine_index(pristine, args.engine)
    work = bench.run_folder(args.data)
    library = bench.fresh_copy(pristine, work, index)
    config = bench.write_config(work, library, args.engine)
    port = bench.free_port()
    server = bench.start_server(config, port, args.server.split())
    try:
        answers = asyncio.run(collect(port, bench.queries(), args.concurrency))
    finally:
        bench.stop(server)
    args.out.write_text(json.dumps(answers, indent=0, ensure_ascii=False))
    errors = sum(a["error"] for a in answers.values())
    print(f"{len(answers)} searches, {errors} errors, {sum(not a['ids'] for a in answers.values())} empty -> {args.out}")
    if args.compare:
        before = json.loads(args.compare.read_text())
        keys = sorted(set(before) | set(answers))
        # Ids and their order must be the same. A score is relevance times a recency factor of
        # the clock's now: runs minutes apart may round the 4th decimal the other way, so scores
        # are compared to that step (0.0001), and the text with its scores left out.
        ids = [k for k in keys if (before.get(k) or {}).get("ids") != (answers.get(k) or {}).get("ids")]
        scores = [k for k in keys if k not in ids and any(
            a is None or b is None or abs(a - b) > 1.5e-4
            for a, b in zip(before[k]["scores"], answers[k]["scores"]))]
        text = [k for k in keys if k not in ids and _unscored(before.get(k)) != _unscored(answers.get(k))]
        for k in ids[:10]:
            print(f"  differs: {k} {answers.get(k, {}).get('query')!r}: {before.get(k, {}).get('ids')} -> "
                  f"{answers.get(k, {}).get('ids')}")
        print(f"compared with {args.compare}: {len(ids)} of {len(keys)} differ in ids or their order, "
              f"{len(scores)} in scores past the rounding step, {len(text)} in the rest of the answer text")
        raise SystemExit(1 if ids or scores or text else 0)


def _unscored(answer: dict | None) -> str | None:
    if not answer or not answer.get("text"):
        return None
    return re.sub(r'"score":[0-9.e-]+', '"score":_', answer["text"])

if __name__ == "__main__":
    main()
