"""Writes tests/data/main-e85cee8-library.sqlite3: a small library as main's code at e85cee8
wrote it (schema 8: message ids numbered as stored), for test_message_order.py's migration test.
Run with that commit's code first on the path:

    git worktree add /tmp/e85 e85cee8 && PYTHONPATH=/tmp/e85 .venv/bin/python tests/data/make_main_library.py
"""

from __future__ import annotations

import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

from jezero.store import ItemRecord, Store
from jezero.store.messages import MessageRecord

OUT = Path(__file__).resolve().parent / "main-e85cee8-library.sqlite3"
T0 = datetime(2025, 1, 6, 9, tzinfo=timezone.utc)
WORDS = "deploy rollback canary migration vacuum checkpoint flaky retry timeout webhook invoice cache".split()


def item(n: int, day: float, *, messages=True, parent=None, source="claude"):
    when = T0 + timedelta(days=day)
    msgs = []
    for i in range(6 + n % 5):
        role = ("user", "assistant", "tool", "assistant")[i % 4]
        text = f"{WORDS[(n + i) % len(WORDS)]} {WORDS[(n * 3 + i) % len(WORDS)]} session {n} message {i}"
        # some messages carry their own time, others take the item's (at None)
        msgs.append(MessageRecord(role, text, when + timedelta(seconds=30 * i) if i % 3 else None,
                                  tool="Bash" if role == "tool" else None))
    original = "".join(f"[{m.role}]\n{m.text}\n" for m in msgs)
    return ItemRecord(uid=f"{source}:s{n}:0", source=source, agent="claude-code", session_id=f"s{n}", segment_index=0,
                      occurred_at=when, title=f"session {n}", summary=f"work on {WORDS[n % len(WORDS)]}", questions=[],
                      atoms=[], original=original, content_hash=f"h{n}", summarizer="x", summary_schema=1,
                      project=f"p{n % 3}", parent_session_id=parent, messages=msgs if messages else None)


def main() -> int:
    if OUT.exists():
        OUT.unlink()
    with Store(OUT) as store:
        if store.schema_version() != 8:
            raise SystemExit(f"run with e85cee8's code (schema 8), not {store.schema_version()}")
        store.write([item(n, 300 - 20 * n) for n in range(6)])  # newest first: a backfill after the latest
        store.write([item(n, 10 * n, parent="s1" if n == 8 else None) for n in range(6, 12)])
        store.write([item(12, 50, messages=False), item(13, 50, source="codex")])  # from its original; same time
        store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        store.db.execute("VACUUM")
    return 0


if __name__ == "__main__":
    sys.exit(main())
