"""The query suite run against every search index engine (one fixture over the engine's name):
what a person searches for is found, the filters apply before the cut, recency re-ranks, later
works, the hits have the same keys, and a derived index never answers from a state the library
did not have (writes, deletes, a writer killed between its library commit and the index update,
a library swapped for an older copy)."""

from __future__ import annotations

import itertools
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from datetime import datetime, timedelta, timezone

import pytest

from jezero.config import SearchConfig
from jezero.query import later, search
from jezero.store import ItemRecord, Store, engines, open_readonly
from jezero.store.messages import MessageRecord

NOW = datetime(2025, 6, 1, 12, 0, tzinfo=timezone.utc)
_uid = itertools.count(1)
FILLER = ["kettle", "pigeon", "walnut", "meadow", "copper", "lantern", "harbour", "violet", "saddle", "quarry"]
HIT_KEYS = {"id", "title", "summary", "project", "source", "agent", "session_id", "occurred_at", "score"}


def item(title="", summary="", *, source="claude-local", project="shop", days_ago=10.0, questions=(), atoms=(),
         uid=None) -> ItemRecord:
    n = next(_uid)
    return ItemRecord(
        uid=uid or f"{source}:s{n}:0", source=source, agent="claude", session_id=f"s{n}", segment_index=0,
        occurred_at=NOW - timedelta(days=days_ago), title=title, summary=summary, questions=list(questions),
        atoms=[{"type": "fact", "text": a} for a in atoms], original="the transcript", content_hash=f"h{n}",
        summarizer="test", summary_schema=1, project=project,
    )


def filler(n: int) -> list[ItemRecord]:
    return [item(" ".join(FILLER[(i + k) % 10] for k in range(2)), " ".join(FILLER[(i + k) % 10] for k in range(4)),
                 days_ago=300) for i in range(n)]


@pytest.fixture(params=["fts5", "tantivy"])
def engine(request):
    if request.param == "tantivy":
        pytest.importorskip("jezero_index_tantivy", reason="jezero-index-tantivy is not installed")
    engines.forget()
    yield request.param
    engines.forget()


def message_session(sid, start, texts, title, summary, project):
    """A Claude Code session of `texts` (user and assistant in turn, a minute apart, from `start`)
    with its item's title and summary, for the fused search's rule tests."""
    msgs = [MessageRecord("user" if i % 2 == 0 else "assistant", t, start + timedelta(minutes=i), None)
            for i, t in enumerate(texts)]
    return ItemRecord(uid=f"claude-local:{sid}:0", source="claude-local", agent="claude-code", session_id=sid,
                      segment_index=0, occurred_at=start + timedelta(minutes=len(texts)), title=title,
                      summary=summary, questions=[], atoms=[], original="(see messages)", content_hash=sid,
                      summarizer="x", summary_schema=1, project=project, messages=msgs)


def stored(path, records, engine):
    """`records` written one write each (storage order is their order), and the derived engine's
    index built from the library when `engine` is not FTS5."""
    with Store(path) as store:
        for rec in records:
            store.write([rec])
    if engine != "fts5":
        assert engines.sync(engine, path, rebuild=True) is not None
    return path


def explained(path, query, engine, now):
    """The sessions the fused search ranks for `query` on `engine`, in order, and each one's
    explanation, for the fused search's rule tests."""
    with open_readonly(path) as conn:
        hits = search(conn, query, options=SearchConfig(engine=engine), now=now, explain=True)
    return [h["session_id"] for h in hits], {h["session_id"]: h["explain"] for h in hits}


class Searcher:
    """search() and later() with the engine under test; with a derived engine, every answer must
    come from it (explain says which engine gave the candidates), not from the FTS5 fallback."""

    def __init__(self, path, engine):
        self.path, self.engine = path, engine
        self.options = SearchConfig(engine=engine)

    def __call__(self, query, **kw):
        with open_readonly(self.path) as conn:
            hits = search(conn, query, options=self.options, now=NOW, explain=True, **kw)
        if self.engine != "fts5":
            assert all(h["explain"]["candidates"] == self.engine for h in hits), "answered by the fallback"
        return hits

    def ids(self, query, **kw):
        return [h["id"] for h in self(query, **kw)]

    def later(self, item_id, query=None):
        with open_readonly(self.path) as conn:
            return later(conn, item_id, query, options=self.options, now=NOW)


@pytest.fixture
def lib(tmp_path, engine):
    items = [
        item("Shop site: add the analytics script", "Added the analytics script with a consent banner.", days_ago=30,
             questions=["How was analytics added to the shop?"], atoms=["gtag snippet in base.html"]),
        item("Crème brûlée recipe page", "A page for the crème brûlée recipe.", project="website", days_ago=20),
        item("Database migrations cleanup", "Squashed the migrations of the orders service.", project="billing",
             days_ago=15, atoms=["src/order_cache.py", "payment-render-4"]),
        item("Agent laptop note on stripe webhook", "Stripe webhook signature check.", source="agent-laptop",
             project="billing", days_ago=5),
        item("Agent CI run about stripe webhook", "CI run for the stripe webhook.", source="agent-ci",
             project="billing", days_ago=2),
        item("Notes", "The webhook came up in passing.", days_ago=1),
        *filler(30),
    ]
    path = tmp_path / "lib.sqlite3"
    with Store(path) as store:
        ids = store.write(items)
    return Searcher(path, engine), ids


def test_words_fragments_identifiers_and_accents(lib):
    s, ids = lib
    assert s.ids("analytics")[0] == ids[0]
    assert s.ids("creme brulee")[0] == ids[1] and s.ids("CRÈME")[0] == ids[1]
    assert s.ids("migrat") == [ids[2]]  # a fragment of a word
    assert s.ids("src/order_cache.py") == [ids[2]]  # an identifier
    assert s.ids("order_cache")[0] == ids[2]
    assert s.ids("payment-render") == [ids[2]]  # a fragment of an identifier
    assert s.ids('"consent banner"') == [ids[0]]
    assert s.ids("zzzqqq") == [] and s.ids("") == [] and s.ids("!! ??") == []


def test_title_weighs_more_than_summary(lib):
    s, ids = lib
    # Both items are about the webhook; the one naming it in its title comes before the one that
    # names it only in its summary, and both before the passing mention (newest of all).
    got = s.ids("stripe webhook", recency_weight=0)
    assert set(got[:2]) == {ids[3], ids[4]} and got.index(ids[5]) > 1


def test_filters_apply_before_the_cut(lib):
    s, ids = lib
    assert sorted(s.ids("webhook", allowed=["agent-*"])) == [ids[3], ids[4]]
    assert s.ids("webhook", source="agent-ci") == [ids[4]]
    assert s.ids("webhook", project="shop") == [ids[5]]
    assert set(s.ids("webhook", since="2025-05-28")) == {ids[4], ids[5]}
    assert s.ids("webhook", allowed=["nobody"]) == []
    # a pool smaller than the matches still holds the filtered ones
    few = s.ids("kettle", project="billing")
    assert few == []


def test_recency_reorders_equal_matches(tmp_path, engine):
    path = tmp_path / "lib.sqlite3"
    with Store(path) as store:
        old, new = store.write([item("webhook retry", days_ago=200), item("webhook retry", days_ago=1), *filler(10)])[:2]
    s = Searcher(path, engine)
    assert s.ids("webhook retry") == [new, old]
    hits = s("webhook retry")
    assert hits[0]["score"] > hits[1]["score"] > 0


def test_hits_have_the_same_keys_and_limits(lib):
    s, ids = lib
    hits = s("webhook", limit=2)
    assert len(hits) == 2
    assert all(set(h) == HIT_KEYS | {"explain"} for h in hits)
    assert {"bm25", "relevance", "recency_factor", "age_days", "score", "candidates"} <= set(hits[0]["explain"])


def test_later_finds_the_newer_item_on_the_subject(lib):
    s, ids = lib
    got = s.later(ids[3])  # the laptop note; the CI run is newer, same project and subject
    assert got["matched_by"] == "subject" and [h["id"] for h in got["items"]] == [ids[4]]


def test_writes_updates_and_deletes_stay_in_step(tmp_path, engine):
    path = tmp_path / "lib.sqlite3"
    first = item("Kafka consumer lag", "Lag on the orders topic.", uid="x:a:0")
    with Store(path) as store:
        (a,) = store.write([first, *filler(10)])[:1]
    s = Searcher(path, engine)
    assert s.ids("kafka") == [a]
    with Store(path) as store:
        store.write([item("RabbitMQ queue depth", "Depth on the orders queue.", uid="x:a:0")])  # same uid: update
        (b,) = store.write([item("Kafka partitions", "Rebalanced the partitions.")])
        store.set_project(b, "streaming")
    assert s.ids("rabbitmq") == [a] and s.ids("kafka") == [b]
    assert s.ids("kafka", project="streaming") == [b] and s.ids("kafka", project="shop") == []
    with Store(path) as store:
        store.write([], delete_uids=["x:a:0"])
    assert s.ids("rabbitmq") == [] and s.ids("orders") == []


WRITER = textwrap.dedent("""
    import os, signal, sys
    from datetime import datetime, timezone
    from jezero.store import ItemRecord, Store
    when = datetime(2025, 5, 30, tzinfo=timezone.utc)
    with Store(sys.argv[1]) as store:
        store.write([ItemRecord(uid="x:crash:0", source="claude-local", agent="claude", session_id="crash",
                                segment_index=0, occurred_at=when, title="Zookeeper quorum lost",
                                summary="Quorum lost after a restart.", questions=[], atoms=[], original="o",
                                content_hash="hc", summarizer="t", summary_schema=1, project="shop")],
                    delete_uids=["x:gone:0"])
        # Killed after the library's commit, before anything updates a derived index.
        os.kill(os.getpid(), signal.SIGKILL)
""")


def test_a_writer_killed_between_library_commit_and_index_update(tmp_path, engine):
    path = tmp_path / "lib.sqlite3"
    with Store(path) as store:
        store.write([item("Etcd member removed", "Removed a dead etcd member.", uid="x:gone:0"), *filler(10)])
    s = Searcher(path, engine)
    assert len(s.ids("etcd")) == 1  # the derived index (if any) is built and in step here
    proc = subprocess.run([sys.executable, "-c", WRITER, str(path)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    # The index opened again (a new process: nothing cached) catches up before it answers.
    engines.forget()
    assert [h["title"] for h in s("zookeeper")] == ["Zookeeper quorum lost"]
    assert s.ids("etcd") == []


def test_a_library_replaced_by_an_older_copy_is_not_answered_from_the_newer_index(tmp_path, engine):
    path = tmp_path / "lib.sqlite3"
    with Store(path) as store:
        store.write(filler(10))
    shutil.copyfile(path, tmp_path / "older.sqlite3")
    with Store(path) as store:
        store.write([item("Consul gossip encryption", "Rotated the gossip key.")])
    s = Searcher(path, engine)
    assert len(s.ids("consul")) == 1
    for suffix in ("-wal", "-shm"):
        if os.path.exists(f"{path}{suffix}"):
            os.remove(f"{path}{suffix}")
    shutil.copyfile(tmp_path / "older.sqlite3", path)
    engines.forget()
    assert s.ids("consul") == []
    assert len(s.ids("kettle")) > 0
