"""The planner's exact term counts, kept in a file beside the library so that a new process (a
server restarted, a CLI search) starts warm instead of counting its terms again.

The counts belong to one index state (stats.py: FTS5's structure record identifies it), so the
file names the state it was counted in, and a process reads it only for that same state: after
any write the file is simply out of date and ignored until a reader saves the new state's
counts. The file is written whole to a temporary name and renamed, so a reader never sees half
of it, and a process that cannot write beside the library (a read-only folder) just stays cold.
Nothing in it changes an answer: counts only decide how a query runs, and they are exact.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import logging
import os
import threading
import time
from pathlib import Path

log = logging.getLogger(__name__)

# Save at most this often per index state: a count costs 1-50 ms, a save a few ms.
SAVE_EVERY_S = 5.0
SUFFIX = ".term-counts.json"


def path_for(library: str) -> Path:
    return Path(f"{library}{SUFFIX}")


def state_id(averages: bytes, structure: bytes) -> str:
    return hashlib.sha1(bytes(averages) + b"\0" + bytes(structure)).hexdigest()


def load(library: str, state: str) -> dict[tuple, int]:
    """The counts saved for this index state, or nothing."""
    try:
        data = json.loads(path_for(library).read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("state") != state:
        return {}
    try:
        return {tuple(k): int(n) for k, n in data["counts"]}
    except (KeyError, TypeError, ValueError):
        return {}


_pending: dict[tuple[str, str], dict] = {}  # (library, state) -> counts not yet saved
_pending_lock = threading.Lock()


def maybe_save(library: str, state: str, counts: dict[tuple, int], last: list[float]) -> None:
    """Write the counts if the last save of this state (`last[0]`, monotonic) is old enough;
    else keep them for the next save or for the process's exit (a CLI search lives a second)."""
    now = time.monotonic()
    if now - last[0] < SAVE_EVERY_S:
        with _pending_lock:
            _pending[(library, state)] = counts
        return
    last[0] = now
    with _pending_lock:
        _pending.pop((library, state), None)
    save(library, state, counts)


@atexit.register
def _flush() -> None:
    with _pending_lock:
        pending = list(_pending.items())
        _pending.clear()
    for (library, state), counts in pending:
        save(library, state, counts)


def save(library: str, state: str, counts: dict[tuple, int]) -> None:
    target = path_for(library)
    tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps({"state": state, "counts": [[list(k), n] for k, n in counts.items()]}))
        os.replace(tmp, target)
    except OSError as e:
        log.debug("term counts not saved beside %s: %s", library, e)
        try:
            tmp.unlink()
        except OSError:
            pass
