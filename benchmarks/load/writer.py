"""A stand-in connector for the load benchmark: keeps writing new items into the library, through
the same `Store.write` as the pipeline, until it is told to stop (SIGTERM or SIGINT). Prints a
JSON line with what it wrote when it ends. Into a library that holds messages, each item comes with
its session's messages (messages_corpus.py, ~49 a session), as a connector writes them; into an
items-only library, items alone (`--messages`/`--no-messages` say it instead). With a derived index engine it follows the library as
`jezero run` does (jezero.store.engines.follower): each write's index update made right after its
commit, holding the index's catch-up lock across both, so the server's readers do not apply it.

    python benchmarks/load/writer.py LIBRARY --batch 5 --interval 0.2
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "search"))
sys.path.insert(0, str(HERE.parent.parent))

import corpus  # noqa: E402  (benchmarks/search/corpus.py: the same generator as the library)
import messages_corpus  # noqa: E402  (benchmarks/load/messages_corpus.py: with each session's messages)

from jezero.store import Store, engines  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("library", type=Path)
    ap.add_argument("--batch", type=int, default=5, help="items per transaction")
    ap.add_argument("--interval", type=float, default=0.2, help="seconds between transactions")
    ap.add_argument("--seed", type=int, default=99)
    ap.add_argument("--engine", default="fts5", help="keep this engine's index near the library, as `jezero run` does")
    ap.add_argument("--messages", action=argparse.BooleanOptionalAction, default=None,
                    help="write each item's session messages too (default: when the library holds messages)")
    args = ap.parse_args()

    stop = False

    def on_signal(*_):
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    with_messages = holds_messages(args.library) if args.messages is None else args.messages
    gen = messages_corpus.MessagesCorpus(seed=args.seed) if with_messages else corpus.Corpus(seed=args.seed)
    written, messages, commits, slowest, started = 0, 0, 0, 0.0, time.monotonic()
    n = 0
    with Store(args.library) as store:
        follow = engines.follower(args.engine, args.library)
        if follow is not None:
            store.after_write.append(follow)
        while not stop:
            items = []
            for _ in range(args.batch):
                it = gen.item(n, n + 1)  # dated "now" on the corpus' timeline: newest items
                n += 1
                it.uid = f"load-writer:{args.seed}:{n}"
                it.session_id = f"load-{args.seed}-{n}"
                it.content_hash = f"load-{args.seed}-{n}"
                items.append(it)
            t0 = time.perf_counter()
            store.write(items, connector="load-writer", cursor={"n": n})
            slowest = max(slowest, time.perf_counter() - t0)
            written += len(items)
            messages += sum(len(it.messages or ()) for it in items)
            commits += 1
            # on a fixed schedule (a write every `interval`), however long a write and its index
            # update took: the readers meet the same rate of commits whatever the writer does
            time.sleep(max(0.0, started + commits * args.interval - time.monotonic()))
    elapsed = time.monotonic() - started
    stats = getattr(follow, "stats", None) or {}
    print(json.dumps({"items_written": written, "messages_written": messages, "commits": commits, "seconds": round(elapsed, 1),
                      "items_per_second": round(written / elapsed, 1) if elapsed else 0,
                      "slowest_commit_ms": round(slowest * 1e3, 1),
                      # writes whose index update the writer made holding the catch-up lock, and
                      # writes it left to the readers (engines.follower)
                      "index_held": stats.get("holds"), "index_skipped": stats.get("skipped")}), flush=True)


def holds_messages(library: Path) -> bool:
    import apsw

    db = apsw.Connection(str(library), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return db.execute("SELECT EXISTS (SELECT 1 FROM messages)").fetchone()[0] == 1
    except apsw.SQLError:  # a library from before the messages layer
        return False
    finally:
        db.close()


if __name__ == "__main__":
    main()
