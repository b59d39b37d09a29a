"""A rebuild killed before its commit (kill -9, the OOM killer, a machine stopped) leaves the
segments it had flushed on disk, referenced by no commit. The next rebuild starts by removing
them, so repeated killed rebuilds (a timer retrying one the OOM killer stops) take no more disk
than one.

Before: tantivy removes such files only at a commit's garbage collection, and a killed rebuild
makes no commit: three kills of a rebuild of the load benchmark's 8,000-item library left 112
orphan files, 119 MB beside a 106 MB index, and each further kill added its own."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import textwrap
from datetime import datetime, timedelta, timezone

from jezero.store import ItemRecord, Store, engines
from jezero_index_tantivy import folder_for

NOW = datetime.now(timezone.utc)


def library_of(path, n: int):
    rng = random.Random(3)
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(4, 10))) for _ in range(5000)]
    with Store(path) as store:
        store.write([ItemRecord(uid=f"s:{i}:0", source="s", agent="a", session_id=str(i), segment_index=0,
                                occurred_at=NOW - timedelta(minutes=i), title=" ".join(rng.choices(words, k=8)),
                                summary=" ".join(rng.choices(words, k=300)), questions=[], atoms=[], original="o",
                                content_hash=str(i), summarizer="t", summary_schema=1) for i in range(n)])


def orphans(folder) -> set[str]:
    """Files of segments that the index's last commit does not list."""
    kept = {s["segment_id"].replace("-", "") for s in json.loads((folder / "meta.json").read_text())["segments"]}
    return {p.name for p in folder.iterdir() if "." in p.name and not p.name.startswith(".")
            and p.name != "meta.json" and p.name.split(".")[0] not in kept}


KILLED_REBUILD = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    import jezero_index_tantivy.index as ix
    from jezero.store import engines
    ix.REBUILD_HEAP = 15_000_000  # tantivy's least: segments flushed to disk as a large rebuild's are
    ix.DerivedIndex.rebuild_part = 10 ** 9  # one part: nothing committed before the kill
    real = ix.TantivyIndex._add_all
    def add_all(self, writer, conn):
        real(self, writer, conn)
        os.kill(os.getpid(), signal.SIGKILL)  # every document added, none committed
    ix.TantivyIndex._add_all = add_all
    engines.sync("tantivy", Path(sys.argv[1]), rebuild=True)
""")


def test_killed_rebuilds_leave_no_more_than_one_rebuilds_files(tmp_path):
    library = tmp_path / "library.sqlite3"
    library_of(library, 2500)
    engines.sync("tantivy", library)
    engines.forget()
    folder = folder_for(library)
    assert orphans(folder) == set()
    left = []
    for _ in range(3):
        killed = subprocess.run([sys.executable, "-c", KILLED_REBUILD, str(library)], capture_output=True, text=True,
                                timeout=300)
        assert killed.returncode == -9, killed.stderr[-2000:]
        left.append(orphans(folder))
    assert left[0], "the killed rebuild flushed no segment: the test shows nothing"
    assert not (left[0] & left[2]) and len(left[2]) <= 2 * len(left[0]), [len(o) for o in left]
    assert engines.sync("tantivy", library, rebuild=True) == 2500
    assert orphans(folder) == set()


def test_status_of_an_index_not_built_names_run_and_reindex_and_run_builds_it(tmp_path):
    """Before (small9): "not built: fts5 answers until `jezero reindex` builds it", though the
    sync at the end of `jezero run` (engines.sync without rebuild) builds it too."""
    library = tmp_path / "library.sqlite3"
    library_of(library, 30)
    engines.forget()
    engine = engines.engine_for("tantivy", library)
    said = engine.condition()
    assert said is not None and said.count("until `jezero run` or `jezero reindex` builds it") == 2, said
    engines.sync("tantivy", library)  # what `jezero run` does at its end
    assert engine.condition() is None
