"""The messages layer ranked in PostgreSQL (jezero_store_postgres/messages.py, migration 2): the same
words as FTS5's messages index, the same bm25 numbers, rows kept in step with their items, a
library of schema 1 indexed by the migration, boolean expressions meaning what FTS5 means by them.
Each check compares a real PostgreSQL library with the same library written to a SQLite file."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from jezero.query import QueryError, recall
from jezero.query import messages as mq
from jezero.store import ItemRecord, Store, StoreError, open_readonly
from jezero.store.messages import MESSAGES_TOKENIZER, MessageRecord, time_id

T0 = datetime(2026, 3, 1, 9, tzinfo=timezone.utc)

TEXTS = [
    "the kubelet keeps restarting; check the kubelet logs",
    "set fs.inotify.max_user_watches=524288 in /etc/sysctl.d",
    "Crème brûlée for dinner, ÜBER-cool 日本語 テスト",
    "signing the release, signed with the new key, signs everything",
    "it's O'Brien's back\\slash and a 'quoted' word",
    "deploy then rollback",
    "deploy then revert, then deploy again",
    "deploy only " + " ".join(f"word{i}" for i in range(60)),
    "kubelet " * 300,  # more repeats than a tsvector keeps positions for
]


def session(i, text, *, project="shop", day=0, uid=None):
    start = T0 + timedelta(days=day)
    return ItemRecord(uid=uid or f"src:s{i}:0", source="src", agent="a", session_id=f"s{i}", segment_index=0,
                      occurred_at=start, title=f"session {i}", summary="nothing", questions=[], atoms=[],
                      original="(messages)", content_hash=f"h{i}{text}", summarizer="x", summary_schema=1,
                      project=project, messages=[MessageRecord("user", text, start),
                                                 MessageRecord("assistant", f"answer {i}", start)])


@pytest.fixture
def both(tmp_path, pg_url):
    """(SQLite reader, PostgreSQL reader) of the same library."""
    from jezero_store_postgres import connect_reader
    from jezero_store_postgres.store import PostgresStore

    records = [session(i, t, day=i) for i, t in enumerate(TEXTS)]
    with Store(tmp_path / "lib.sqlite3") as store:
        store.write(records)
    with PostgresStore(pg_url, "trigram remove_diacritics 1") as store:
        store.write(records)
    sqlite, pg = open_readonly(tmp_path / "lib.sqlite3"), connect_reader(pg_url)
    yield sqlite, pg
    sqlite.close()
    pg.close()


def test_the_words_are_fts5s_words(both):
    from jezero_store_postgres.messages import parse_positions, tokens

    sqlite, pg = both
    sqlite.execute("CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, messages_fts, instance)")
    fts5 = {}
    for term, doc, _, offset in sqlite.execute("SELECT term, doc, col, offset FROM temp.v"):
        fts5.setdefault(doc, {}).setdefault(term, set()).add(offset + 1)
    ours = {mid: parse_positions(text) for mid, text in pg.execute("SELECT id, words::text FROM messages_search")}
    for mid, words in fts5.items():
        expected = {t: p if len(p) <= 255 else set(sorted(p)[:255]) for t, p in words.items()}
        assert ours[mid] == expected, mid
    assert tokens("Crème BRÛLÉE") == ["creme", "brulee"]


def _close(got: float, want: float, message_id: int, over_cap: set[int]) -> bool:
    """Equal, but for a message holding a word more often than a tsvector keeps positions for
    (255): its bm25 has saturated, within 1%."""
    return got == pytest.approx(want, rel=0.01 if message_id in over_cap else 1e-9, abs=1e-12)


def _over_cap(sqlite) -> set[int]:
    return {r[0] for r in sqlite.execute("SELECT id FROM message_texts WHERE text LIKE 'kubelet kubelet%'")}


def _compare(sqlite, pg, query, **filters):
    terms = mq.terms_for(sqlite, query)
    f = mq.MessageFilters(**filters)
    want, _ = mq.matches(sqlite, mq.match_expression(terms), f, 50, "relevance", terms)
    mq.cover(sqlite, want, terms)
    got = mq.engine_matches(pg, None, terms, f, 50)
    assert [(m.id, m.coverage) for m in got] == [(m.id, m.coverage) for m in want], query
    for a, b in zip(got, want):
        assert _close(a.bm25, b.bm25, a.id, _over_cap(sqlite)), (query, a.id, a.bm25, b.bm25)


def test_bm25_is_fts5s(both):
    sqlite, pg = both
    for query in ("kubelet", "deploy rollback", "deploy then", '"deploy then"', "fs.inotify.max_user_watches",
                  "brulee creme", "O'Brien", "signed release", "answer 3", "the"):
        _compare(sqlite, pg, query)
    _compare(sqlite, pg, "deploy", roles=["user"], since="2026-03-06T00:00:00.000000Z")


def test_the_lanes_numbers_are_fts5s(both):
    sqlite, pg = both
    for query in ("kubelet restarting", "sign", "deploy"):
        terms = [t for t in mq.terms_for(sqlite, query) if len(t.text) >= 3]
        for t in terms:
            want = {mid: r for mid, _, _, r in mq.term_matches(sqlite, t, mq.MessageFilters(), 300)}
            per_term, _, _ = mq.engine_term_matches(pg, None, [t], mq.MessageFilters(), 300)
            got = {mid: r for mid, _, _, r in (per_term[0][1] if per_term else [])}
            assert got.keys() == want.keys() and all(_close(got[k], want[k], k, _over_cap(sqlite)) for k in want), t
        assert mq.message_count(pg) == mq.message_count(sqlite)


def test_boolean_expressions_mean_what_they_mean_in_fts5(both):
    sqlite, pg = both
    for expr in ("deploy AND (rollback OR revert)", "deploy NOT rollback NOT revert", '"deploy then" OR kubelet',
                 "deploy then NOT revert", "deploy + then", "kubelet OR deploy AND revert", "(deploy)"):
        want = [h["message_id"] for h in recall(sqlite, boolean=expr, window=0, limit=50)["hits"]]
        got = [h["message_id"] for h in recall(pg, boolean=expr, window=0, limit=50)["hits"]]
        assert got == want and want, expr
    discovered = [(p["project"], p["hits"], p["message_id"]) for p in
                  recall(sqlite, boolean="deploy NOT revert", discover=True)["projects"]]
    assert discovered and [(p["project"], p["hits"], p["message_id"]) for p in
                           recall(pg, boolean="deploy NOT revert", discover=True)["projects"]] == discovered
    for expr in ("NEAR(deploy rollback)", "deplo*", "text: deploy"):
        with pytest.raises(QueryError, match="boolean query"):
            recall(pg, boolean=expr)
    with pytest.raises(QueryError, match="not a valid FTS5 expression"):  # FTS5's own check
        recall(pg, boolean="deploy AND (")


def test_rows_follow_their_items_and_the_totals_follow_the_rows(pg_url):
    from jezero_store_postgres import connect_reader
    from jezero_store_postgres.store import PostgresStore

    with PostgresStore(pg_url, "trigram remove_diacritics 1") as store:
        [a] = store.write([session(1, "kafka consumer lag", uid="x:a:0")])
        store.write([session(1, "rabbitmq queue depth", uid="x:a:0")])  # rewritten
        store.write([session(2, "kafka partitions rebalanced")])
        store.set_project(a, "streaming")
        db = store.db
        assert db.execute("SELECT count(*) FROM messages_search").fetchone()[0] == 4
        assert db.execute("SELECT sum(rows), sum(tokens) FROM messages_totals").fetchone() == (4, 10)
        conn = connect_reader(pg_url)
        assert [h["session_id"] for h in recall(conn, "rabbitmq", window=0)["hits"]] == ["s1"]
        assert [h["session_id"] for h in recall(conn, "kafka", window=0, projects=["shop"])["hits"]] == ["s2"]
        store.write([], delete_uids=["x:a:0"])
        assert db.execute("SELECT count(*) FROM messages_search").fetchone()[0] == 2
        assert db.execute("SELECT sum(rows), sum(tokens) FROM messages_totals").fetchone() == (2, 5)
        assert recall(conn, "rabbitmq", window=0)["hits"] == []
        conn.close()


def test_a_schema_1_library_is_refused_to_readers_until_a_writer_indexes_its_messages(pg_url):
    from jezero_store_postgres import connect_reader, schema
    from jezero_store_postgres.db import Connection
    from jezero_store_postgres.store import PostgresStore

    db = Connection(pg_url)
    schema.migrate(db, "trigram remove_diacritics 1", target=1)
    with db:  # messages as a schema-1 writer stored them: rows and texts, nothing ranked
        db.execute("INSERT INTO items(id, uid, source, agent, session_id, segment_index, occurred_at, title, summary,"
                   " questions, atoms, original, content_hash, summarizer, summary_schema, ingested_at, updated_at) "
                   "VALUES (1, 'u', 'src', 'a', 's', 0, '2026-01-01T00:00:00.000000Z', 't', 's', '[]', '[]', 'o', "
                   "'h', 'x', 1, 'now', 'now')")
        for i, text in enumerate(["where is the kubeconfig?", "in ~/.kube, with the kubeconfig"]):
            db.execute("INSERT INTO messages(id, item_id, source, session_id, segment_index, seq, role, at) "
                       "VALUES (?, 1, 'src', 's', 0, ?, 'user', '2026-01-01T00:00:00.000000Z')", (i + 1, i))
            db.execute("INSERT INTO message_texts(id, text) VALUES (?, ?)", (i + 1, text))
    with pytest.raises(StoreError, match="schema version 1.*run `jezero run`"):
        connect_reader(pg_url)  # readers need the term counts of schema 3: refused, with what to run
    PostgresStore(pg_url, "trigram remove_diacritics 1").close()  # a writer migrates it
    conn = connect_reader(pg_url)
    assert "messages" in conn.ranker.lanes
    # migration 4 gave them ids that follow their time (both at one time: the next free one)
    first = time_id("2026-01-01T00:00:00.000000Z")
    assert [h["message_id"] for h in recall(conn, "kubeconfig", window=0)["hits"]] == [first, first + 1]
    assert conn.execute("SELECT rows, tokens FROM messages_totals").fetchone() == (2, 9)
    conn.close()
    db.close()


def test_migration_4_renumbers_messages_stored_out_of_time_order(pg_url, monkeypatch):
    from jezero.store import messages as message_rows
    from jezero_store_postgres import connect_reader, schema
    from jezero_store_postgres.db import Connection
    from jezero_store_postgres.store import PostgresStore

    db = Connection(pg_url)
    schema.migrate(db, "trigram remove_diacritics 1", target=3)
    with PostgresStore(pg_url, "trigram remove_diacritics 1", migrate_to=3) as store:
        # ids as a schema-3 writer gave them (the identity column): numbered as stored
        stored = iter(range(1, 1000))
        monkeypatch.setattr(message_rows, "allocate_ids", lambda db, ats: [next(stored) for _ in ats])
        store.write([session(i, f"deploy number {i}", day=30 - i) for i in range(6)])  # newest first
    monkeypatch.undo()
    before = db.execute("SELECT m.id, m.item_id, m.seq, m.at, t.text FROM messages AS m JOIN message_texts AS t "
                        "ON t.id = m.id ORDER BY m.id").fetchall()
    assert [r[3] for r in before] != sorted(r[3] for r in before)
    library_id = db.execute("SELECT value FROM meta WHERE key = 'library_id'").fetchone()[0]
    PostgresStore(pg_url, "trigram remove_diacritics 1").close()  # a writer migrates it
    after = db.execute("SELECT m.id, m.item_id, m.seq, m.at, t.text FROM messages AS m JOIN message_texts AS t "
                       "ON t.id = m.id ORDER BY m.id").fetchall()
    assert sorted(r[1:] for r in after) == sorted(r[1:] for r in before)  # nothing lost, texts with their rows
    assert [r[3] for r in after] == sorted(r[3] for r in after)  # ids follow time
    assert db.execute("SELECT count(*) FROM messages_search AS s JOIN messages AS m ON m.id = s.id").fetchone()[0] \
        == len(after)
    assert db.execute("SELECT value FROM meta WHERE key = 'library_id'").fetchone()[0] != library_id
    conn = connect_reader(pg_url)
    hits = recall(conn, "deploy", window=0, sort="newest")["hits"]
    assert [h["session_id"] for h in hits] == [f"s{i}" for i in range(6)]
    assert conn.execute("SELECT id FROM messages WHERE session_id = 's0' AND seq = 0").fetchone()[0] == \
        hits[0]["message_id"]
    conn.close()
    db.close()


def test_the_tokenizer_is_the_messages_tokenizer():
    assert MESSAGES_TOKENIZER == "unicode61 remove_diacritics 2"  # messages.py tokenizes with this spec


def test_the_work_budget_counts_statements_and_rows(both, monkeypatch):
    from jezero.config import SearchConfig
    from jezero_store_postgres import db as pg_db

    sqlite, pg = both
    assert "timed_out" not in recall(pg, "kubelet", window=0)  # the default allowance: far from spent
    monkeypatch.setattr(pg_db, "ROW_STEPS", 10**7)  # each row now costs a second of the allowance
    found = recall(pg, "kubelet", window=0, options=SearchConfig(time_budget_ms=10))
    assert found["hits"] == [] and found["timed_out"]
    monkeypatch.setattr(pg_db, "ROW_STEPS", 100)
    assert pg.execute("SELECT count(*) FROM messages").fetchone()[0] == 2 * len(TEXTS)  # no budget left behind
    assert recall(pg, "kubelet", window=0)["hits"][0]["session_id"] in {"s0", "s8"}
