"""The planner's exact term counts are saved beside the library, so a new process starts warm;
after a write they belong to another state and are not used."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from datetime import datetime, timezone

from jezero.query import persisted, search, stats
from jezero.store import ItemRecord, Store, open_readonly

WHEN = datetime(2025, 1, 1, tzinfo=timezone.utc)


def item(n: int, title: str) -> ItemRecord:
    return ItemRecord(uid=f"s:{n}:0", source="s", agent="a", session_id=str(n), segment_index=0, occurred_at=WHEN,
                      title=title, summary="notes", questions=[], atoms=[], original="o", content_hash=str(n),
                      summarizer="t", summary_schema=1)


SEARCH = textwrap.dedent("""
    import sys
    from jezero.query import search
    from jezero.store import open_readonly
    with open_readonly(sys.argv[1]) as conn:
        print(len(search(conn, "common rare")))
""")


def test_a_new_process_starts_with_the_counts_of_the_same_state(tmp_path):
    library = tmp_path / "lib.sqlite3"
    # "common" in every item (counted exactly: the gate sees it everywhere), "rare" in one.
    with Store(library) as store:
        store.write([item(n, f"common word {n}" + (" rare" if n == 0 else "")) for n in range(40)])
    done = subprocess.run([sys.executable, "-c", SEARCH, str(library)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    saved = json.loads(persisted.path_for(str(library)).read_text())
    assert saved["state"] and any(n >= 20 for _, n in saved["counts"])  # "common", counted to N/2

    stats._states.clear()  # this process now knows nothing, like a new one
    stats._newest.clear()
    with open_readonly(library) as conn:
        state = stats.index_stats(conn)
        assert state.counts and max(state.counts.values()) >= state.half  # the floored count, from the file
        hits = search(conn, "common rare")
        assert len(hits) == 10 and hits[0]["title"] == "common word 0 rare"

    with Store(library) as store:  # a write: a new index state, the file's counts do not apply
        store.write([item(99, "another")])
    stats._states.clear()
    stats._newest.clear()
    with open_readonly(library) as conn:
        assert stats.index_stats(conn).counts == {}
