"""The messages layer against every search index engine (one fixture over the engine's name): what
recall and search's messages lane find, the filters before the cut, and that a derived messages
index (tantivy) never answers from a state the library did not have: writes, rewrites, retags,
deletes, a writer killed between its library commit and the index update, a library swapped for
an older copy. With a derived engine every answer checked here must come from its index, not
from the FTS5 fallback."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
from datetime import datetime, timedelta, timezone

import pytest

from jezero.config import SearchConfig
from jezero.query import fused, recall, search
from jezero.query.fused import messages_lane, rules
from jezero.query import messages as mq
from jezero.store import ItemRecord, Store, engines, open_readonly
from jezero.store.messages import MessageRecord
import pg_support
from test_messages import at, ingest  # noqa: F401 (a fixture)
from test_redact import POSITIVES

T0 = datetime(2026, 3, 1, 9, tzinfo=timezone.utc)


@pytest.fixture(params=["fts5", "tantivy"])
def engine(request, store_backend):
    if request.param == "tantivy":
        if store_backend == "postgres":
            pytest.skip("the postgres backend ranks the messages in PostgreSQL, whatever [search] engine names")
        pytest.importorskip("jezero_index_tantivy", reason="jezero-index-tantivy is not installed")
    engines.forget()
    ANSWERS["by"] = "postgres" if store_backend == "postgres" else request.param
    yield request.param
    engines.forget()


ANSWERS = {"by": "fts5"}  # the engine that must have matched: the configured one, or the backend's own


def session(sid, texts, *, source="claude-local", project="shop", parent=None, day=0, uid=None):
    start = T0 + timedelta(days=day)
    msgs = [MessageRecord(role, text, start + timedelta(minutes=i), "Bash" if role == "tool" else None)
            for i, (role, text) in enumerate(texts)]
    return ItemRecord(uid=uid or f"{source}:{sid}:0", source=source, agent="claude-code", session_id=sid,
                      segment_index=0, occurred_at=start + timedelta(minutes=len(texts)), title=f"session {sid}",
                      summary="nothing about it", questions=[], atoms=[], original="(see messages)",
                      content_hash=f"{source}{sid}{day}{texts}", summarizer="x", summary_schema=1,
                      project=project, parent_session_id=parent, messages=msgs)


class Recaller:
    def __init__(self, path, engine):
        self.path, self.engine = path, engine
        self.options = SearchConfig(engine=engine)

    def __call__(self, query, **kw):
        with open_readonly(self.path) as conn:
            found = recall(conn, query, options=self.options, window=0, **kw)
        assert all(h["explain"]["engine"] == ANSWERS["by"] for h in found["hits"]), "answered by the fallback"
        return found

    def sessions(self, query, **kw):
        return [h["session_id"] for h in self(query, **kw)["hits"]]

    def lane(self, query, **kw):
        """Search's messages lane: its sessions, best first."""
        with open_readonly(self.path) as conn:
            if ANSWERS["by"] != "fts5":  # the lane's engine (or backend) path answers (not the FTS5 loop)
                terms = [t for t in mq.terms_for(conn, query) if fused._ranking(t)]
                assert mq.engine_term_matches(conn, self.engine, terms, mq.MessageFilters(), 10) is not None
            hits = fused.message_lane(conn, query, sources=None, source=kw.get("source"), project=kw.get("project"),
                                      since=kw.get("since"), time_budget_ms=5000, engine=self.engine)
        return [h.session_id for h in hits]


def write(path, records, **kw):
    with Store(path) as store:
        return store.write(records, **kw)


def test_recall_and_the_lane_find_the_same_sessions(tmp_path, engine):
    path = tmp_path / "lib.sqlite3"
    write(path, [
        session("a", [("user", "the kubelet keeps restarting"), ("assistant", "check the kubelet logs")], day=0),
        session("b", [("user", "set fs.inotify.max_user_watches=524288"), ("tool", "sysctl applied")], day=1),
        session("c", [("user", "Crème brûlée for dinner"), ("assistant", "a recipe")], day=2),
        session("d", [("user", "signing the release"), ("assistant", "signed with the new key")], day=3),
        *[session(f"f{i}", [("user", f"filler words number {i}")], day=4 + i) for i in range(10)],
    ])
    r = Recaller(path, engine)
    assert r.sessions("kubelet") == ["a", "a"]
    assert r.sessions("fs.inotify.max_user_watches") == ["b"]  # a phrase of its parts
    assert r.sessions("creme brulee") == ["c"] and r.sessions("BRÛLÉE") == ["c"]
    assert r.sessions("signed") == ["d"]  # recall is literal: "signing" is another word
    assert r.sessions("zzqx") == []
    assert r.lane("kubelet restarting")[0] == "a"
    assert r.lane("sign")[0] == "d"  # the lane also reads a word's other forms
    assert r.lane("filler", project="nowhere") == []


def test_filters_apply_before_the_cut(tmp_path, engine):
    path = tmp_path / "lib.sqlite3"
    # Sixty short sessions rank above the one long session for "quasar"; only the long one has
    # four messages, and only two sessions are in project "rare": a cut before the filters would
    # lose them.
    write(path, [
        *[session(f"s{i}", [("user", "quasar quasar")], day=i % 5) for i in range(60)],
        session("long", [("user", "a quasar among many other words said here"), ("assistant", "one"),
                         ("user", "two"), ("assistant", "three")], day=6),
        session("r1", [("user", "quasar seen in the rare project, among other words")], project="rare", day=7),
        session("sub", [("user", "quasar quasar, from a subagent")], parent="s1", day=8),
        session("tool", [("tool", "quasar quasar")], day=9),
    ])
    r = Recaller(path, engine)
    assert r.sessions("quasar", min_messages=4, limit=1) == ["long"]
    assert r.sessions("quasar", projects=["rare"], limit=1) == ["r1"]
    assert r.sessions("quasar", since="2026-03-09", limit=1) == []  # sub and tool are left out by default
    assert r.sessions("quasar", since="2026-03-09", include_subagents=True) == ["sub"]
    assert r.sessions("quasar", role="tool") == ["tool"]
    # a bare date includes its whole day
    assert set(r.sessions("quasar", before="2026-03-02", limit=100)) == {f"s{i}" for i in range(60) if i % 5 < 2}
    assert r.sessions("quasar", allowed=["nobody-*"]) == []
    newest = r.sessions("quasar", sort="newest", include_tools=True, include_subagents=True, limit=3)
    assert newest == ["tool", "sub", "r1"]
    assert r.lane("quasar", project="rare") == ["r1"]


def test_time_order_breaks_ties_by_message_id(tmp_path, engine):
    path = tmp_path / "lib.sqlite3"
    same = T0 + timedelta(days=1)
    records = [session(f"t{i}", [("user", "pulsar")]) for i in range(30)]
    for rec in records:  # every message at the same time
        rec.messages = [MessageRecord("user", "pulsar", same)]
    write(path, records)
    r = Recaller(path, engine)
    with open_readonly(path) as conn:
        ids = [row[0] for row in conn.execute("SELECT id FROM messages ORDER BY id")]
    assert [h["message_id"] for h in r("pulsar", sort="newest", limit=7)["hits"]] == ids[::-1][:7]
    assert [h["message_id"] for h in r("pulsar", sort="oldest", limit=7)["hits"]] == ids[:7]


def test_writes_rewrites_retags_and_deletes_stay_in_step(tmp_path, engine):
    path = tmp_path / "lib.sqlite3"
    (a,) = write(path, [session("a", [("user", "kafka consumer lag")], uid="x:a:0")])[:1]
    r = Recaller(path, engine)
    assert r.sessions("kafka") == ["a"]
    write(path, [session("a", [("user", "rabbitmq queue depth")], uid="x:a:0")])  # same uid: rewritten
    (b,) = write(path, [session("b", [("user", "kafka partitions rebalanced")])])
    with Store(path) as store:
        store.set_project(b, "streaming")
    assert r.sessions("rabbitmq") == ["a"] and r.sessions("kafka") == ["b"]
    assert r.sessions("kafka", projects=["streaming"]) == ["b"] and r.sessions("kafka", projects=["shop"]) == []
    assert r.lane("kafka", project="streaming") == ["b"]
    write(path, [], delete_uids=["x:a:0"])
    assert r.sessions("rabbitmq") == [] and r.lane("rabbitmq") == []



def test_an_item_id_given_again_is_shown_by_its_new_session(tmp_path, engine, store_backend):
    """SQLite gives the highest item id, once deleted, to the next item: the lane must show the
    new item's session. (The tantivy lane keeps the items' sessions per index state, read from
    the library once: a map kept across states would show the deleted item's.)"""
    path = tmp_path / "lib.sqlite3"
    write(path, [session("f", [("user", "filler words")], uid="x:f:0")])
    (a,) = write(path, [session("a", [("user", "kettle descaled")], uid="x:a:0")])
    r = Recaller(path, engine)
    assert r.lane("kettle") == ["a"] and r.lane("kettle filler") == ["a", "f"]
    if engine == "tantivy":  # the map was kept, with both items
        kept = engines.engine_for(engine, path).message_index._kept.sessions
        assert kept.get(a) == ("claude-local", "a") and len(kept) == 2
    write(path, [], delete_uids=["x:a:0"])
    (b,) = write(path, [session("b", [("user", "kettle boiled")], uid="x:b:0")])
    assert b == a or store_backend == "postgres"  # the same id, now another session's (a sequence on PostgreSQL)
    assert r.lane("kettle") == ["b"] and r.lane("kettle filler") == ["b", "f"]
    assert r.sessions("kettle") == ["b"]
    with open_readonly(path) as conn:  # the sessions the lane scored (the items' gate reads them)
        hits = fused.message_lane(conn, "kettle filler", sources=None, source=None, project=None, since=None,
                                  time_budget_ms=5000, engine=engine)
    assert sorted(hits.evidence) == [("claude-local", "b"), ("claude-local", "f")]


def test_a_word_read_again_after_a_write_finds_the_new_messages(tmp_path, engine):
    """The tantivy lane keeps its terms' answers per index state: a write is a new state, whose
    answer holds the new session (an answer kept across states would not)."""
    path = tmp_path / "lib.sqlite3"
    write(path, [session("a", [("user", "kettle descaled")], uid="x:a:0")])
    r = Recaller(path, engine)
    assert r.lane("kettle") == ["a"] and r.lane("kettle") == ["a"]
    write(path, [session("b", [("user", "kettle boiled")], uid="x:b:0", day=1)])
    assert sorted(r.lane("kettle")) == ["a", "b"]
    with Store(path) as store:
        store.set_project(store.db.execute("SELECT id FROM items WHERE uid = 'x:a:0'").fetchone()[0], "other")
    assert r.lane("kettle", project="other") == ["a"] and r.lane("kettle", project="shop") == ["b"]


def test_the_sessions_kept_per_index_state_give_the_answers_read_each_time(tmp_path, engine, monkeypatch):
    """The lane's answers with the tantivy lane's kept sessions (mq.SESSIONS_KEPT) and without
    (each search reads its items' sessions from the library) are the same, over writes; with a
    bound smaller than the items, the map stops growing and answers stay the same."""
    path = tmp_path / "lib.sqlite3"
    write(path, [session(f"s{i}", [("user", f"walnut tree {i}"), ("assistant", f"pruned {i % 3}")], day=i)
                 for i in range(12)])
    queries = ["walnut", "walnut pruned", "tree 3", "pruned 1 walnut"]
    r = Recaller(path, engine)
    tantivy_messages = sys.modules.get("jezero_index_tantivy.messages")
    for step in range(2):
        answers = {}
        for kept in (0, 5, 50_000):
            monkeypatch.setattr(mq, "SESSIONS_KEPT", kept)
            if tantivy_messages is not None:  # the terms' answers kept too (none, fewer than asked, all)
                monkeypatch.setattr(tantivy_messages, "TERMS_KEPT", min(kept, 512))
            answers[kept] = [r.lane(q) for q in queries] + [r.lane(q) for q in queries]
        assert answers[0] == answers[5] == answers[50_000] and answers[0][0]
        if engine == "tantivy":
            assert len(engines.engine_for(engine, path).message_index._kept.sessions) == 12 - step
        write(path, [session("s3", [("user", "walnut tree moved")], day=3)], delete_uids=["claude-local:s4:0"])


WRITER = textwrap.dedent("""
    import os, signal, sys
    from datetime import datetime, timezone
    from jezero.store import ItemRecord, Store
    from jezero.store.messages import MessageRecord
    when = datetime(2026, 3, 5, tzinfo=timezone.utc)
    if sys.argv[1].startswith("postgresql://"):  # the same library on PostgreSQL (pg_support)
        from jezero_store_postgres.store import PostgresStore
        Store = lambda url: PostgresStore(url, "trigram remove_diacritics 1")
    with Store(sys.argv[1]) as store:
        store.write([ItemRecord(uid="x:crash:0", source="claude-local", agent="claude", session_id="crash",
                                segment_index=0, occurred_at=when, title="t", summary="s", questions=[],
                                atoms=[], original="o", content_hash="hc", summarizer="t", summary_schema=1,
                                project="shop", messages=[MessageRecord("user", "zookeeper quorum lost", when)])],
                    delete_uids=["x:gone:0"])
        # Killed after the library's commit, before anything updates a derived index.
        os.kill(os.getpid(), signal.SIGKILL)
""")


def test_a_writer_killed_between_library_commit_and_index_update(tmp_path, engine, store_backend):
    path = tmp_path / "lib.sqlite3"
    write(path, [session("gone", [("user", "etcd member removed")], uid="x:gone:0"),
                 session("kept", [("user", "etcd backup kept")])])
    r = Recaller(path, engine)
    assert sorted(r.sessions("etcd")) == ["gone", "kept"]  # the derived index (if any) is built here
    assert r.lane("etcd")
    where = pg_support.library_url(path) if store_backend == "postgres" else str(path)
    proc = subprocess.run([sys.executable, "-c", WRITER, where], capture_output=True, text=True, timeout=60)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    # The index opened again (a new process: nothing cached) catches up before it answers.
    engines.forget()
    assert r.sessions("zookeeper") == ["crash"] and r.sessions("etcd") == ["kept"]
    engines.forget()
    assert r.lane("zookeeper quorum") == ["crash"] and r.lane("etcd") == ["kept"]


def test_a_library_replaced_by_an_older_copy_is_not_answered_from_the_newer_index(tmp_path, engine):
    path = tmp_path / "lib.sqlite3"
    write(path, [session("old", [("user", "kettle walnut")])])
    shutil.copyfile(path, tmp_path / "older.sqlite3")
    write(path, [session("new", [("user", "consul gossip encryption")])])
    r = Recaller(path, engine)
    assert r.sessions("consul") == ["new"]
    for suffix in ("-wal", "-shm"):
        if os.path.exists(f"{path}{suffix}"):
            os.remove(f"{path}{suffix}")
    shutil.copyfile(tmp_path / "older.sqlite3", path)
    engines.forget()
    assert r.sessions("consul") == [] and r.lane("consul") == []
    assert r.sessions("kettle") == ["old"]


def test_the_fused_search_reads_the_messages_through_the_engine(tmp_path, engine):
    path = tmp_path / "lib.sqlite3"
    write(path, [session("a", [("user", "the flag is InvalidClientTokenId")]),
                 *[session(f"f{i}", [("user", "other words")]) for i in range(5)]])
    with open_readonly(path) as conn:
        hits = search(conn, "InvalidClientTokenId", options=SearchConfig(engine=engine), explain=True)
    assert [h["session_id"] for h in hits] == ["a"]
    assert hits[0]["explain"]["fusion"]["messages_rank"] == 1


def test_the_lane_reads_a_common_word_at_its_newest_messages(tmp_path, engine, monkeypatch):
    """A word in more than LANE_MAX_ROWS messages is read at its newest that pass the filters,
    each scored alike, on either engine (tantivy bounds its search to the last ids and widens the
    range while it holds too few: here the filter leaves only the oldest)."""
    path = tmp_path / "lib.sqlite3"
    write(path, [
        *[session(f"n{i}", [("user", f"kettle note {i}"), ("assistant", "noted")], project="p" if i < 2 else "shop",
                  day=i) for i in range(8)],
        *[session(f"f{i}", [("user", f"walnut {i}")], day=10 + i) for i in range(6)],
    ])
    monkeypatch.setattr(rules, "LANE_MAX_ROWS", 3)
    r = Recaller(path, engine)
    assert r.lane("kettle") == ["n7", "n6", "n5"]
    with open_readonly(path) as conn:
        hits = fused.message_lane(conn, "kettle", sources=None, source=None, project=None, since=None,
                                  time_budget_ms=5000, engine=engine)
    assert all(h.capped == ["kettle"] for h in hits)  # explained as read at its newest
    assert r.lane("kettle", project="p") == ["n1", "n0"]


def test_the_lanes_work_for_a_common_word_does_not_grow_with_the_messages_it_skips(tmp_path, engine, monkeypatch):
    """The newest matches of a common word are read from the ends of the indexes, never by a scan
    of the messages table: the same matches among 40 times more other messages cost the lane the
    same SQLite work (VM steps, which no machine's speed changes). A `max(id), min(id)` in one
    SELECT scanned the whole table on every such read."""
    import contextlib

    monkeypatch.setattr(rules, "LANE_MAX_ROWS", 3)
    used = []

    @contextlib.contextmanager
    def counted(conn, ms):
        with budget(conn, ms) as b:
            yield b
        used.append(b.used)

    budget = messages_lane.budget  # (the lane's own: where message_lane looks it up)
    monkeypatch.setattr(messages_lane, "budget", counted)
    kettles = [session(f"n{i}", [("user", f"kettle note {i}"), ("assistant", "noted")], day=i) for i in range(8)]
    steps = []
    for others in (1, 40):
        path = tmp_path / f"lib{others}.sqlite3"
        write(path, [*kettles, *[session(f"f{i}", [("user", f"walnut {i} {j}") for j in range(100)], day=10 + i % 50)
                                 for i in range(others)]])
        assert Recaller(path, engine).lane("kettle") == ["n7", "n6", "n5"]
        steps.append(used[-1])
    assert steps[1] <= 1.5 * steps[0] + 2_000, steps


def test_a_broad_filter_that_passes_few_of_the_best_matches_still_finds_them(tmp_path, engine):
    """The best 250 matches are tool output, left out by default: the one person's message that
    matches, ranked below all of them, is still found (tantivy checks the broad filters on ever
    deeper lists of best matches; it must not stop at the first depth)."""
    path = tmp_path / "lib.sqlite3"
    write(path, [
        *[session(f"t{i}", [("tool", f"gamma ray {i}")], day=1) for i in range(250)],
        session("person", [("user", "and then " + "a long aside about other things " * 8 + "the gamma burst")], day=0),
    ])
    engines.sync(engine, path)  # as the writer's run does (more items than a reader catches up with)
    r = Recaller(path, engine)
    assert r.sessions("gamma", limit=1) == ["person"]
    assert r.sessions("gamma", limit=3, include_tools=True)[0].startswith("t")
    assert r.sessions("gamma", limit=1, before="2026-03-01") == ["person"]


def test_no_secret_of_the_redaction_cases_reaches_a_derived_messages_index(ingest, engine):
    """The derived index is made from the stored (redacted) messages: no secret of the redaction
    cases can be found in it, while the words around each one can."""
    if engine == "fts5":
        pytest.skip("the FTS5 messages index: test_messages.py")
    blocks = []
    for i, (_, text, _, _) in enumerate(POSITIVES):
        kind = ("text", "tool_call", "tool_result")[i % 3]
        role = ("user", "assistant", "tool")[i % 3]
        blocks.append({"role": role, "kind": kind, "text": f"case {i}: {text}", "time": at(i)})
    library = ingest("secrets", blocks)
    assert engines.sync(engine, library, rebuild=True) is not None
    everything = mq.MessageFilters(include_tools=True, include_subagents=True)
    with open_readonly(library) as conn:
        def found(text):
            answer = engines.messages(conn, engine, mq.request_for([(text,)], everything, "relevance", 100))
            assert answer is not None, "the derived index did not answer"
            return answer

        assert len(found("case")) == len(POSITIVES)
        for kind, _, secret, _ in POSITIVES:
            longest = max(secret.split(), key=len)
            assert found(longest) == [], kind


def test_a_common_words_newest_come_once_per_session_with_what_was_read(tmp_path, engine, monkeypatch,
                                                                       store_backend):
    """A derived engine's common word (messages.Newest): each session's newest message of the
    word's newest `cap` alone, in the engine's order, with how many were read and the lowest id;
    the lane scores a session by its first message per term, so it answers as from every row
    (FTS5's lane reads them all: the same sessions, scores and messages)."""
    if store_backend == "postgres":
        pytest.skip("compared with FTS5's lane, which a PostgreSQL library has not")
    path = tmp_path / "lib.sqlite3"
    write(path, [session(f"k{i}", [("user", f"kettle {i}"), ("assistant", "the kettle"), ("user", "kettle again")],
                         day=i) for i in range(6)])
    monkeypatch.setattr(rules, "LANE_MAX_ROWS", 7)
    with open_readonly(path) as conn:
        term = mq.terms_for(conn, "kettle")
        filters = mq.MessageFilters(include_tools=True, include_subagents=True)
        rows = mq.term_matches(conn, term[0], filters, 7, 1.5)  # what the FTS5 lane reads: newest first
        assert len(rows) == 7 and len({(r[1], r[2]) for r in rows}) == 3
        lane = fused.message_lane(conn, "kettle", sources=None, source=None, project=None, since=None,
                                  time_budget_ms=5000, engine=engine)
        if engine == "fts5":
            assert mq.engine_term_matches(conn, engine, term, filters, 7, None, 1.5) is None
            return
        (text, newest), = mq.engine_term_matches(conn, engine, term, filters, 7, None, 1.5)[0]
    assert isinstance(newest, mq.Newest) and text == "kettle"
    first = {}
    for mid, source, sid, relevance in rows:
        first.setdefault((source, sid), (mid, source, sid, relevance))
    assert list(newest) == list(first.values())
    assert newest.read == 7 and newest.oldest == min(r[0] for r in rows)
    assert [h.session_id for h in lane] == ["k5", "k4", "k3"]
    assert all(h.match.id == first[(h.source, h.session_id)][0] for h in lane)
    with open_readonly(path) as conn:  # the FTS5 lane reads every row: the same answer
        same = fused.message_lane(conn, "kettle", sources=None, source=None, project=None, since=None,
                                  time_budget_ms=5000, engine=None)
    assert [(h.session_id, h.match.id, h.match.bm25) for h in same] == \
        [(h.session_id, h.match.id, h.match.bm25) for h in lane]
    assert same.evidence == lane.evidence and same.common == lane.common


def test_the_items_within_the_filters_come_from_the_index_only_at_the_readers_state(tmp_path, engine,
                                                                                   store_backend):
    """The lane's estimate of a common word's sessions counts the items within the filters
    (fused._common_floors); tantivy's items index counts them (messages.TermMatches.items_within)
    only when its state is exactly the library's head the reader sees: a reader's older snapshot
    gets None (the library's table counts them), never the newer state's count."""
    if engine != "tantivy":
        pytest.skip("a derived engine's count")
    path = tmp_path / "lib.sqlite3"
    write(path, [session(f"s{i}", [("user", f"kettle {i}")], project="p" if i % 3 else "q", day=i,
                         source="claude-local" if i % 2 else "codex-local") for i in range(12)])
    sql = "SELECT count(*) FROM items WHERE project = ? AND source = ? AND occurred_at >= ?"
    since = (T0 + timedelta(days=4)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    cases = [(mq.MessageFilters(projects=["p"]), ("p", None, None)),
             (mq.MessageFilters(source="codex-local", since=since), (None, "codex-local", since)),
             (mq.MessageFilters(projects=["q"], sources=["claude-local", "codex-local"]), ("q", None, None))]

    def counted(conn, project, source, when):
        return conn.execute(sql.replace("project = ?", "coalesce(? = project, 1)").replace(
            "source = ?", "coalesce(? = source, 1)").replace("occurred_at >= ?", "coalesce(occurred_at >= ?, 1)"),
            (project, source, when)).fetchone()[0]

    with open_readonly(path) as conn:
        terms = mq.terms_for(conn, "kettle")
        for filters, args in cases:
            got = mq.engine_term_matches(conn, engine, terms, filters, 10)[0].items_within
            assert got == counted(conn, *args) and got > 0
        assert mq.engine_term_matches(conn, engine, terms, mq.MessageFilters(), 10)[0].items_within is None
        # a reader reads one snapshot: a writer adds to the library meanwhile, a newer reader
        # brings the index up to it
        before = counted(conn, "p", None, None)
        write(path, [session(f"n{i}", [("user", "kettle new")], project="p", day=20 + i) for i in range(3)])
        assert mq.engine_term_matches(conn, engine, terms, cases[0][0], 10)[0].items_within == before
        with open_readonly(path) as newer:
            assert mq.engine_term_matches(newer, engine, terms, cases[0][0], 10)[0].items_within == before + 3
        assert mq.engine_term_matches(conn, engine, terms, cases[0][0], 10)[0].items_within is None
        assert counted(conn, "p", None, None) == before
