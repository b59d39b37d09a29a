"""The messages layer in the store: written by the pipeline with the items, in the same
transaction, redacted, bounded, kept in step with their item, and built for existing libraries by
migration _v5."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from fixture_plugins import EchoSummarizer, SummarizerPlugin, TestConnectorPlugin, write_session
from jezero.config import Config
from jezero.ingest.runner import run_connectors
from jezero.store import ItemRecord, Store, messages as layer, open_readonly
from test_redact import POSITIVES

NOW = datetime(2026, 3, 1, tzinfo=timezone.utc)
T0 = datetime(2026, 1, 1, 9, tzinfo=timezone.utc)


@pytest.fixture
def ingest(tmp_path, register_plugin):
    register_plugin(TestConnectorPlugin(), "test-connector")
    register_plugin(SummarizerPlugin(EchoSummarizer()), "test-summarizer")
    sessions = tmp_path / "sessions"
    cfg = Config.model_validate({
        "storage": {"path": str(tmp_path / "lib.sqlite3")},
        "summarizer": {"name": "echo"},
        "ingest": {"settle_minutes": 0, "max_input_chars": 4000},
        "connectors": [{"name": "local", "type": "testdir", "options": {"path": str(sessions)}}],
    })

    def run(name, blocks, **kw):
        write_session(sessions, name, blocks, **kw)
        [report] = run_connectors(cfg, now=NOW)
        assert report.error is None, report.error
        return tmp_path / "lib.sqlite3"

    return run


def rows(library, sql="SELECT role, tool, text, at, session_id, segment_index, seq FROM messages "
                      "JOIN message_texts USING (id) ORDER BY session_id, segment_index, seq", args=()):
    conn = open_readonly(library)
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


def at(minutes):
    return (T0 + timedelta(minutes=minutes)).isoformat()


def test_the_pipeline_stores_each_message_with_its_role_time_and_place(ingest):
    library = ingest("s1", [
        {"role": "user", "text": "why does the webhook fail?", "time": at(0)},
        {"role": "assistant", "kind": "tool_call", "tool": "Bash", "text": "pytest tests/test_hooks.py", "time": at(1)},
        {"role": "tool", "kind": "tool_result", "tool": "Bash", "text": "1 failed: InvalidClientTokenId", "time": at(2)},
        {"role": "assistant", "kind": "thinking", "text": "the token expired", "time": at(3)},
        {"role": "assistant", "text": "Rotate the token.", "time": at(4)},
    ], cwd="/home/me/src/shop")
    got = rows(library)
    assert [(r[0], r[1]) for r in got] == [("user", None), ("tool", "Bash"), ("tool", "Bash"), ("assistant", None),
                                           ("assistant", None)]
    assert got[2][2] == "1 failed: InvalidClientTokenId"
    assert got[0][3] == "2026-01-01T09:00:00.000000Z" and got[4][3] == "2026-01-01T09:04:00.000000Z"
    assert [r[6] for r in got] == [0, 1, 2, 3, 4]
    project, source, item_id = rows(library, "SELECT DISTINCT project, source, item_id FROM messages")[0]
    assert (project, source) == ("shop", "local")
    assert rows(library, "SELECT id FROM items") == [(item_id,)]
    # the index finds the exact word the summary may have missed
    assert rows(library, "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'invalidclienttokenid'") == [(1,)]


def test_tool_output_is_bounded_head_and_tail(ingest):
    log = "START " + "line of build output\n" * 2000 + " FINAL_ERROR_LINE"
    library = ingest("s1", [{"role": "user", "text": "build it", "time": at(0)},
                            {"role": "tool", "kind": "tool_result", "text": log, "time": at(1)}])
    [(text,)] = rows(library, "SELECT text FROM messages JOIN message_texts USING (id) WHERE role = 'tool'")
    assert len(text) == layer.TOOL_MESSAGE_CHARS
    assert text.startswith("START") and text.endswith("FINAL_ERROR_LINE") and layer.CUT_MARK in text


def test_messages_follow_their_item_when_it_is_rewritten_retagged_or_deleted(tmp_path):
    path = tmp_path / "lib.sqlite3"

    def item(text, uid="src:s1:a"):
        return ItemRecord(uid=uid, source="src", agent="a", session_id="s1", segment_index=0, occurred_at=T0,
                          title="t", summary="s", questions=[], atoms=[], original=f"[user]\n{text}\n",
                          content_hash=text, summarizer="x", summary_schema=1, project="shop")

    with Store(path) as store:
        [item_id] = store.write([item("first words")])
        store.write([item("second words")])
        assert store.db.execute("SELECT text FROM message_texts").fetchall() == [("second words",)]
        assert store.db.execute("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'first'").fetchone() == (0,)
        store.set_project(item_id, "billing")
        assert store.db.execute("SELECT project FROM messages").fetchall() == [("billing",)]
        store.write([], delete_uids=["src:s1:a"])
        assert store.counts() == {"items": 0, "fts": 0, "messages": 0}
        assert store.db.execute("SELECT count(*) FROM message_texts").fetchone() == (0,)
        assert store.db.execute("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'second'").fetchone() == (0,)
        assert store.db.execute("INSERT INTO messages_fts(messages_fts) VALUES('integrity-check')").fetchall() == []


def test_a_failure_while_writing_messages_leaves_nothing_half_written(tmp_path, monkeypatch):
    path = tmp_path / "lib.sqlite3"
    records = [ItemRecord(uid=f"src:s{i}:a", source="src", agent="a", session_id=f"s{i}", segment_index=0,
                          occurred_at=T0, title="t", summary="s", questions=[], atoms=[],
                          original=f"[user]\nwords {i}\n", content_hash=f"h{i}", summarizer="x", summary_schema=1)
               for i in range(3)]
    real = layer.replace
    calls = []

    def failing(*args, **kw):
        calls.append(1)
        if len(calls) == 3:
            raise OSError("disk gone")
        return real(*args, **kw)

    with Store(path) as store:
        monkeypatch.setattr(layer, "replace", failing)
        with pytest.raises(OSError):
            store.write(records, connector="c", cursor={"k": 1})
        monkeypatch.setattr(layer, "replace", real)
        assert store.counts() == {"items": 0, "fts": 0, "messages": 0}
        assert store.cursor("c") == {}
        assert store.db.execute("SELECT count(*) FROM messages_fts").fetchone() == (0,)
        store.write(records, connector="c", cursor={"k": 1})
        assert store.counts() == {"items": 3, "fts": 3, "messages": 3}


def test_migration_v5_builds_messages_from_the_stored_originals(tmp_path):
    path = tmp_path / "lib.sqlite3"
    with Store(path, migrate_to=4) as old:
        old.db.execute(
            "INSERT INTO items(uid, source, agent, session_id, parent_session_id, segment_index, occurred_at, title,"
            " summary, questions, atoms, original, content_hash, summarizer, summary_schema, project, ingested_at,"
            " updated_at) VALUES ('u', 'src', 'a', 'sub', 'root', 1, '2026-01-01T00:00:00.000000Z', 't', 's', '[]',"
            " '[]', ?, 'h', 'offline', 1, 'shop', 'now', 'now')",
            ("[user]\nwhere is the kubeconfig?\n[assistant tool_call Bash]\ncat ~/.kube/config\n"
             "[tool tool_result Bash]\napiVersion: v1\n[assistant]\nIn ~/.kube.\n",))
        cursor_before = old.cursor("src")
    with Store(path) as new:
        assert new.schema_version() >= 5
        got = new.db.execute("SELECT role, tool, text, at, session_id, parent_session_id, project, segment_index "
                             "FROM messages JOIN message_texts USING (id) ORDER BY seq").fetchall()
        assert [g[:3] for g in got] == [("user", None, "where is the kubeconfig?"), ("tool", "Bash", "cat ~/.kube/config"),
                                       ("tool", "Bash", "apiVersion: v1"), ("assistant", None, "In ~/.kube.")]
        assert {g[3:] for g in got} == {("2026-01-01T00:00:00.000000Z", "sub", "root", "shop", 1)}
        assert new.db.execute("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'kubeconfig'").fetchone() == (1,)
        assert new.db.execute("SELECT value FROM meta WHERE key = 'messages_tokenizer'").fetchone() == (
            layer.MESSAGES_TOKENIZER,)
        assert new.cursor("src") == cursor_before  # nothing is read again


def test_no_secret_of_the_redaction_cases_reaches_the_messages_index(ingest):
    blocks = []
    for i, (_, text, _, _) in enumerate(POSITIVES):
        kind = ("text", "tool_call", "tool_result")[i % 3]
        role = ("user", "assistant", "tool")[i % 3]
        blocks.append({"role": role, "kind": kind, "text": f"case {i}: {text}", "time": at(i)})
    library = ingest("secrets", blocks)
    conn = open_readonly(library)
    stored = "\n".join(t for (t,) in conn.execute("SELECT text FROM message_texts"))
    assert conn.execute("SELECT count(*) FROM messages").fetchone()[0] == len(POSITIVES)
    for kind, _, secret, _ in POSITIVES:
        assert secret not in stored, kind
        longest = max(secret.split(), key=len)
        phrase = '"' + longest.replace('"', '""') + '"'
        assert conn.execute("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH ?", (phrase,)).fetchone() == (0,), kind
    conn.close()


def test_term_matches_reads_a_terms_newest_messages_with_their_own_bm25(tmp_path):
    # The messages lane of the fused search reads each term this way (query/messages.py,
    # term_matches): newest first, at most `cap`, within the filters, scored by bm25 for that term.
    from jezero.query import messages as mq
    from jezero.query.terms import parse_terms

    path = tmp_path / "lib.sqlite3"
    texts = ["a greyhound", "greyhound greyhound greyhound", "a greyhound " + " ".join(f"w{i}" for i in range(50)),
             "no dog here"]
    with Store(path) as store:
        store.write([ItemRecord(uid=f"src:s{i}:0", source="src", agent="a", session_id=f"s{i}", segment_index=0,
                                occurred_at=T0 + timedelta(days=i), title="t", summary="s", questions=[], atoms=[],
                                original=f"[user]\n{text}\n", content_hash=text, summarizer="x", summary_schema=1,
                                project="shop" if i != 1 else "home") for i, text in enumerate(texts)])
    conn = open_readonly(path)
    try:
        [term] = parse_terms("greyhound", layer.MESSAGES_TOKENIZER)
        found = mq.term_matches(conn, term, mq.MessageFilters(), 10)
        assert [session for _, _, session, _ in found] == ["s2", "s1", "s0"]  # newest first
        relevance = {session: r for _, _, session, r in found}
        assert relevance["s1"] > relevance["s0"] > relevance["s2"] > 0  # term frequency, then length
        assert [session for _, _, session, _ in mq.term_matches(conn, term, mq.MessageFilters(), 2)] == ["s2", "s1"]
        shop = mq.term_matches(conn, term, mq.MessageFilters(projects=["shop"]), 10)
        assert [session for _, _, session, _ in shop] == ["s2", "s0"]
        [plural] = parse_terms("greyhounds", layer.MESSAGES_TOKENIZER)  # another form of the word
        assert [session for _, _, session, _ in mq.term_matches(conn, plural, mq.MessageFilters(), 10)] == [
            "s2", "s1", "s0"]
        [exact] = parse_terms('"greyhounds"', layer.MESSAGES_TOKENIZER)  # quoted: as written only
        assert mq.term_matches(conn, exact, mq.MessageFilters(), 10) == []
    finally:
        conn.close()
