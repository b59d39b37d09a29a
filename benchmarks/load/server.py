"""Runs the HTTP app the way the load benchmark wants to compare it, in its own process:

    python benchmarks/load/server.py CONFIG PORT [--connections thread|request]
                                     [--stateful] [--sse] [--workers N] [--threads N] [--readers N]
                                     [--http auto|h11|httptools] [--loop auto|asyncio|uvloop] [--no-lean]
                                     [--nothing-kept] [--inline] [--python-gc] [--shared-socket]

With --workers > 1, that many processes serve the port, each on its own listening socket as
`jezero serve --workers N` runs them (jezero.server.http.run_workers; --shared-socket: uvicorn's
own, one socket for all), each building the app through `make_app` from the environment
variables set here.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))


def make_app():
    from jezero.server.http import build_http_app

    if os.environ.get("LOAD_SWITCH_MS"):
        sys.setswitchinterval(float(os.environ["LOAD_SWITCH_MS"]) / 1000)
    if os.environ.get("LOAD_NOTHING_KEPT") == "1":
        nothing_kept()
    if os.environ.get("LOAD_INLINE") == "1":
        inline_tools()
    if os.environ.get("LOAD_PYTHON_GC") != "1":
        from jezero.server.process import tune_gc

        tune_gc()  # as `jezero serve` does

    app = build_http_app(
        os.environ["JEZERO_CONFIG"],
        stateless=os.environ.get("LOAD_STATEFUL") != "1",
        json_response=os.environ.get("LOAD_SSE") != "1",
        connections=os.environ.get("LOAD_CONNECTIONS", "thread"),
        readers=int(os.environ.get("LOAD_READERS", "0")) or None,
        lean=os.environ.get("LOAD_NO_LEAN") != "1",
    )
    threads = int(os.environ.get("LOAD_THREADS", "0"))
    if threads:
        from contextlib import asynccontextmanager

        import anyio.to_thread

        inner = app.router.lifespan_context

        @asynccontextmanager
        async def lifespan(app_):
            # How many tool calls may run at once (anyio's default is 40 worker threads).
            anyio.to_thread.current_default_thread_limiter().total_tokens = threads
            async with inner(app_) as state:
                yield state

        app.router.lifespan_context = lifespan
    return app


def inline_tools() -> None:
    """An experiment: the tools' functions run on the event loop's thread instead of one of
    anyio's worker threads (the SDK runs a plain function through anyio.to_thread.run_sync), so a
    process answers one call at a time with no hand-off between threads. Everything else that
    anyio would run on a thread (the overview, the config's reloads) runs inline too."""
    import anyio.to_thread

    async def run_sync(func, *args, abandon_on_cancel=False, cancellable=None, limiter=None):
        return func(*args)

    anyio.to_thread.run_sync = run_sync


def nothing_kept() -> None:
    """No answer kept between searches: the tantivy messages lane's items' sessions and terms'
    answers per index state (jezero.query.messages.SESSIONS_KEPT, jezero_index_tantivy's
    TERMS_KEPT), for figures without them."""
    from jezero.query import messages

    messages.SESSIONS_KEPT = 0
    try:
        from jezero_index_tantivy import messages as tantivy_messages
    except ImportError:
        return
    tantivy_messages.TERMS_KEPT = 0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("config")
    ap.add_argument("port", type=int)
    ap.add_argument("--connections", default="thread", choices=["thread", "request"])
    ap.add_argument("--stateful", action="store_true", help="keep MCP sessions (the SDK's default)")
    ap.add_argument("--sse", action="store_true", help="answer with an SSE stream (the SDK's default)")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--shared-socket", action="store_true",
                    help="with --workers: uvicorn's own supervisor, every process on one listening socket "
                         "(before 2026-12-02), not a socket each (jezero.server.http.run_workers)")
    ap.add_argument("--threads", type=int, default=0, help="tool calls at once per process (0: anyio's 40)")
    ap.add_argument("--readers", type=int, default=0, help="library reads at once (0: the server's default)")
    ap.add_argument("--no-lean", action="store_true", help="every tool call through the SDK's full path")
    ap.add_argument("--switch-ms", type=float, default=0,
                    help="the interpreter's thread switch interval in ms (sys.setswitchinterval; 0: Python's 5)")
    ap.add_argument("--http", default="auto", choices=["auto", "h11", "httptools"],
                    help="uvicorn's HTTP parser (auto: jezero serve's, jezero.server.parser; httptools: uvicorn's own, unbounded head)")
    ap.add_argument("--loop", default="auto", choices=["auto", "asyncio", "uvloop"], help="uvicorn's event loop")
    ap.add_argument("--nothing-kept", action="store_true", help="no answers kept between searches (nothing_kept)")
    ap.add_argument("--inline", action="store_true",
                    help="run the tools on the event loop's thread, not anyio's worker threads (inline_tools)")
    ap.add_argument("--python-gc", action="store_true",
                    help="Python's own GC thresholds, not jezero serve's (jezero.server.process)")
    args = ap.parse_args()
    if args.workers > 1 and not args.readers:
        # as `jezero serve --workers N` does: the cores shared out (before 2026-12-01 15:00 each
        # process had the single-process default, one reader per core)
        from jezero.server.http import worker_readers

        args.readers = worker_readers(args.workers)
    os.environ.update({"JEZERO_CONFIG": args.config, "LOAD_CONNECTIONS": args.connections,
                       "LOAD_STATEFUL": "1" if args.stateful else "0", "LOAD_SSE": "1" if args.sse else "0",
                       "LOAD_THREADS": str(args.threads), "LOAD_READERS": str(args.readers),
                       "LOAD_NO_LEAN": "1" if args.no_lean else "0",
                       "LOAD_SWITCH_MS": str(args.switch_ms) if args.switch_ms else "",
                       "LOAD_NOTHING_KEPT": "1" if args.nothing_kept else "0",
                       "LOAD_PYTHON_GC": "1" if args.python_gc else "0",
                       "LOAD_INLINE": "1" if args.inline else "0"})
    import logging

    import uvicorn

    logging.basicConfig(level=logging.WARNING)
    from jezero.server.http import WORKER_HEALTHCHECK_S

    from jezero.server import parser

    from jezero.config import load

    # auto: what `jezero serve` runs (httptools with h11's bound on a request's head, or h11, with
    # the config's deadline on a head)
    head_seconds = load(args.config).server.head_timeout_seconds
    http = parser.protocol(head_seconds) if args.http == "auto" else args.http
    options = dict(factory=True, host="127.0.0.1", port=args.port, workers=args.workers, log_level="warning",
                   access_log=False, http=http, loop=args.loop, timeout_worker_healthcheck=WORKER_HEALTHCHECK_S)
    if args.workers > 1 and not args.shared_socket:
        # as `jezero serve --workers N` runs them: a listening socket per process (SO_REUSEPORT)
        from jezero.server.http import run_workers

        sys.path.insert(0, str(HERE))  # "server:make_app" in the workers (spawned with this path)
        run_workers(uvicorn.Config("server:make_app", **options))
        return
    uvicorn.run("server:make_app", app_dir=str(HERE), **options)


if __name__ == "__main__":
    main()
