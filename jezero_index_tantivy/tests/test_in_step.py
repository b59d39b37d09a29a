"""The in-step rule: a writer that follows the library holds the index's catch-up lock across its
library commit and the index update, so a reader that sees the new head meanwhile answers from
the state before (one the library had) and never applies the change itself; a writer that dies
inside the hold lets go of the lock, and a reader then catches up. Also: a rebuild in parts."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
from datetime import datetime, timedelta, timezone

import pytest

from jezero.config import SearchConfig
from jezero.query import search
from jezero.store import ItemRecord, Store, engines, open_readonly
from jezero.store.engines import library_head
from jezero_index_tantivy import TantivyIndex, folder_for
from jezero_index_tantivy import index as index_module
from jezero_index_tantivy.index import DerivedIndex

NOW = datetime.now(timezone.utc)
OPTIONS = SearchConfig(engine="tantivy")


def item(n: int, title: str) -> ItemRecord:
    return ItemRecord(uid=f"s:{n}:0", source="s", agent="a", session_id=str(n), segment_index=0,
                      occurred_at=NOW - timedelta(days=1), title=title, summary="notes", questions=[], atoms=[],
                      original="o", content_hash=str(n), summarizer="t", summary_schema=1)


def titles(library, query: str) -> list[str]:
    with open_readonly(library) as conn:
        hits = search(conn, query, options=OPTIONS, explain=True)
    assert {h["explain"]["candidates"] for h in hits} <= {"tantivy"}
    return sorted(h["title"] for h in hits)


def applied_by_a_new_process_view(library):
    return TantivyIndex(library)._current()[1]


def test_a_reader_never_applies_a_change_a_holding_writer_is_applying(tmp_path, monkeypatch):
    library = tmp_path / "library.sqlite3"
    with Store(library) as store:
        store.write([item(1, "Vault unseal keys")])
    engines.forget()
    assert titles(library, "vault") == ["Vault unseal keys"]  # the reader's index, in step
    applies = []
    real = DerivedIndex._apply

    def counted(self, *args):
        applies.append(self.folder.name)
        return real(self, *args)

    writer_index = TantivyIndex(library)  # the writer's own (as in another process: its own file lock)
    monkeypatch.setattr(DerivedIndex, "_apply", counted)
    with Store(library) as store:
        with writer_index.holding():
            store.write([item(2, "Vault audit log")])
            assert applies == []
            # The library has the write, the index not yet: the reader sees a catch-up under
            # way and answers from the state before, without applying anything itself.
            assert titles(library, "vault") == ["Vault unseal keys"]
            assert applies == []
            with open_readonly(library) as conn:
                assert applied_by_a_new_process_view(library).seq < library_head(conn).seq
        # Let go: the writer applied both indexes (once each) before releasing.
        assert sorted(applies) == sorted([folder_for(library).name, writer_index.message_index.folder.name])
    with open_readonly(library) as conn:
        assert applied_by_a_new_process_view(library) == library_head(conn)
    assert titles(library, "vault") == ["Vault audit log", "Vault unseal keys"]
    assert len(applies) == 2  # the reader only took the new state; it applied nothing
    engines.forget()


def test_a_following_store_brings_the_index_in_step_after_every_write(tmp_path):
    """Store enters the follower's hold around each write: two writes in a row (within the old
    follower's 2 s) are both in the index as soon as each returns, before any reader looks."""
    library = tmp_path / "library.sqlite3"
    engines.forget()
    with Store(library) as store:
        follow = engines.follower("tantivy", library)
        store.after_write.append(follow)
        for n, title in enumerate(["Traefik middleware", "Traefik router", "Traefik tls"], 1):
            store.write([item(n, title)])
            with open_readonly(library) as conn:
                assert applied_by_a_new_process_view(library) == library_head(conn)
        assert follow.stats["holds"] == 3 and follow.stats["skipped"] == 0
    assert titles(library, "traefik") == ["Traefik middleware", "Traefik router", "Traefik tls"]
    engines.forget()


HOLDER = textwrap.dedent("""
    import os, signal, sys
    from datetime import datetime, timezone
    from jezero.store import ItemRecord, Store
    from jezero_index_tantivy import TantivyIndex
    when = datetime(2025, 5, 30, tzinfo=timezone.utc)
    index = TantivyIndex(sys.argv[1])
    with Store(sys.argv[1]) as store:
        with index.holding():
            store.write([ItemRecord(uid="x:crash:0", source="s", agent="a", session_id="crash",
                                    segment_index=0, occurred_at=when, title="Zookeeper quorum lost",
                                    summary="notes", questions=[], atoms=[], original="o",
                                    content_hash="hc", summarizer="t", summary_schema=1)])
            # Killed inside the hold: after the library's commit, before the index update.
            os.kill(os.getpid(), signal.SIGKILL)
""")


def test_a_writer_killed_inside_its_hold_lets_a_reader_catch_up(tmp_path):
    library = tmp_path / "library.sqlite3"
    with Store(library) as store:
        store.write([item(1, "Etcd member removed")])
    engines.forget()
    assert titles(library, "etcd") == ["Etcd member removed"]
    proc = subprocess.run([sys.executable, "-c", HOLDER, str(library)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    with open_readonly(library) as conn:
        assert applied_by_a_new_process_view(library).seq < library_head(conn).seq  # the index lacks it
    # The dead writer's lock is free: the reader (the same process as before) catches up itself.
    assert titles(library, "zookeeper") == ["Zookeeper quorum lost"]
    with open_readonly(library) as conn:
        assert applied_by_a_new_process_view(library) == library_head(conn)
    engines.forget()


@pytest.mark.parametrize("count", [15, 35, 90])
def test_a_rebuild_commits_parts_of_at_least_the_part_size(tmp_path, monkeypatch, count):
    library = tmp_path / "library.sqlite3"
    with Store(library) as store:
        store.write([item(n, f"Nomad job {n}") for n in range(count)])
    monkeypatch.setattr(TantivyIndex, "rebuild_part", 10)
    index = TantivyIndex(library)
    assert index.catch_up(rebuild=True) == count
    meta = json.loads((folder_for(library) / "meta.json").read_text())
    sizes = sorted(s["max_doc"] for s in meta["segments"])
    assert sum(sizes) == count + 1  # (the state document)
    if count // 10 < index_module.MERGED_PARTS:
        # 15: one part; 35: 3 parts of 10 written as 8 smaller ones, merged by tantivy into one
        assert sizes == [count + 1]
    else:  # 90 // 10 = 9 parts: none under the part size (tantivy may merge them)
        assert min(sizes) >= 10
    with open_readonly(library) as conn:
        assert index._current()[1] == library_head(conn)
    engines.forget()
    assert len(titles(library, "nomad")) == 10  # the search's default limit, all from tantivy
    engines.forget()


def test_past_its_budget_a_follower_leaves_writes_to_the_readers(tmp_path, monkeypatch):
    """A backfill writing back to back: once the writer's index updates have used their share of
    its time, a write is not held (the index lacks it until a reader or the next held write
    applies it), and a reader then catches up itself and answers with everything."""
    library = tmp_path / "library.sqlite3"
    monkeypatch.setattr(engines, "FOLLOW_SHARE", 0.0)  # no budget builds up with the clock
    monkeypatch.setattr(engines, "FOLLOW_BURST_S", 0.0)
    engines.forget()
    with Store(library) as store:
        follow = engines.follower("tantivy", library, interval=3600)
        store.after_write.append(follow)
        store.write([item(1, "Consul gossip key")])  # the first write: held (nothing ended yet)
        store.write([item(2, "Consul acl token")])  # over budget: left to the readers
        assert follow.stats["holds"] == 1 and follow.stats["skipped"] == 1
        with open_readonly(library) as conn:
            assert applied_by_a_new_process_view(library).seq < library_head(conn).seq
    # The held write's merges finish in a thread of their own (_settle_later); a search meanwhile
    # answers from the state before, by design (_in_step): this test is about the search after.
    engines.engine_for("tantivy", library)._wait_settled()
    assert titles(library, "consul") == ["Consul acl token", "Consul gossip key"]  # caught up by the reader
    with open_readonly(library) as conn:
        assert applied_by_a_new_process_view(library) == library_head(conn)
    engines.forget()
