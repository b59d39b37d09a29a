"""The messages index kept in step: a run brings it in step with the library (so no reader has to),
a reader too far behind leaves recall to FTS5 (correctly, with a warning once) until the index is
rebuilt, and a reader that cannot take the index's writer answers from the state before."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import tantivy

from jezero import demo, plugins
from jezero.config import Config, SearchConfig
from jezero.ingest.runner import run_connectors
from jezero.query import recall
from jezero.store import ItemRecord, Store, engines, open_readonly
from jezero.store.engines import library_head
from jezero.store.messages import MessageRecord
from jezero_index_tantivy import messages as messages_module
from jezero_index_tantivy.messages import MessageIndex, folder_for

NOW = datetime.now(timezone.utc)
OPTIONS = SearchConfig(engine="tantivy")


def item(n, text):
    when = NOW - timedelta(days=1)
    return ItemRecord(uid=f"s:{n}:0", source="s", agent="a", session_id=str(n), segment_index=0, occurred_at=when,
                      title=f"item {n}", summary="notes", questions=[], atoms=[], original="o", content_hash=str(n),
                      summarizer="t", summary_schema=1, messages=[MessageRecord("user", text, when)])


def engines_of(found):
    return {h["explain"]["engine"] for h in found["hits"]}


def test_a_run_brings_the_messages_index_in_step(tmp_path):
    written = demo.build(tmp_path / "sessions", plugins.connector_types(), NOW)
    library = tmp_path / "library.sqlite3"
    config = Config.model_validate({
        "storage": {"path": str(library)}, "search": {"engine": "tantivy"}, "ingest": {"settle_minutes": 0},
        "connectors": [{"name": name, "type": name, "options": options} for name, options in written],
    })
    engines.forget()
    assert sum(r.items_written for r in run_connectors(config, now=NOW + timedelta(hours=2))) > 0
    _, applied = MessageIndex(library)._current()  # a fresh process's view
    with open_readonly(library) as conn:
        assert applied == library_head(conn)
        word = conn.execute("SELECT text FROM message_texts WHERE length(text) > 20 LIMIT 1").fetchone()[0].split()[0]
        found = recall(conn, word, options=OPTIONS, window=0)
    assert found["hits"] and engines_of(found) == {"tantivy"}
    engines.forget()


def far_behind(tmp_path, monkeypatch, word: str):
    """A library whose messages index answered `word` once, then fell 4 changes behind, more than
    a reader may catch up (READER_CATCH_UP 2); the engines forgotten, as in a new process."""
    library = tmp_path / "library.sqlite3"
    with Store(library) as store:
        store.write([item(1, f"{word} first")])
    engines.forget()
    with open_readonly(library) as conn:
        assert engines_of(recall(conn, word, options=OPTIONS, window=0)) == {"tantivy"}
    with Store(library) as store:
        store.write([item(n, f"{word} later {n}") for n in range(2, 6)])
    monkeypatch.setattr(messages_module, "READER_CATCH_UP", 2)
    engines.forget()
    return library


def test_a_reader_far_behind_leaves_recall_to_fts5_until_a_rebuild(tmp_path, monkeypatch, caplog):
    library = far_behind(tmp_path, monkeypatch, "vault")
    with caplog.at_level("WARNING"), open_readonly(library) as conn:
        for _ in range(2):
            found = recall(conn, "vault", options=OPTIONS, window=0)
            assert len(found["hits"]) == 5 and engines_of(found) == {"fts5"}  # correct, from the library
    assert len([r for r in caplog.records if "far behind" in r.getMessage()]) == 1
    assert engines.sync("tantivy", library, rebuild=True) is not None
    with open_readonly(library) as conn:
        found = recall(conn, "vault", options=OPTIONS, window=0)
    assert len(found["hits"]) == 5 and engines_of(found) == {"tantivy"}
    engines.forget()


def test_a_reader_that_cannot_take_the_writer_answers_from_the_state_before(tmp_path):
    library = tmp_path / "library.sqlite3"
    with Store(library) as store:
        store.write([item(1, "nomad job spec")])
    engines.forget()
    with open_readonly(library) as conn:
        assert engines_of(recall(conn, "nomad", options=OPTIONS, window=0)) == {"tantivy"}
    with Store(library) as store:
        store.write([item(2, "nomad client drained")])
    other = tantivy.Index.open(str(folder_for(library)))  # another process catching up
    writer = other.writer(heap_size=15_000_000, num_threads=1)
    try:
        engines.forget()
        with open_readonly(library) as conn:
            found = recall(conn, "nomad", options=OPTIONS, window=0)
        assert [h["session_id"] for h in found["hits"]] == ["1"] and engines_of(found) == {"tantivy"}
    finally:
        writer.rollback()
        del writer
    engines.forget()
    with open_readonly(library) as conn:
        found = recall(conn, "nomad", options=OPTIONS, window=0)
    assert sorted(h["session_id"] for h in found["hits"]) == ["1", "2"] and engines_of(found) == {"tantivy"}
    engines.forget()


def test_a_broken_messages_index_costs_one_warning_not_the_answer(tmp_path, caplog):
    library = tmp_path / "library.sqlite3"
    with Store(library) as store:
        store.write([item(1, "traefik middleware chain")])
    folder_for(library).mkdir()
    (folder_for(library) / "meta.json").write_text("{ not json")
    engines.forget()
    with caplog.at_level("WARNING"), open_readonly(library) as conn:
        for _ in range(3):
            found = recall(conn, "traefik", options=OPTIONS, window=0)
            assert [h["session_id"] for h in found["hits"]] == ["1"] and engines_of(found) == {"fts5"}
    warnings = [r for r in caplog.records if "tantivy" in r.getMessage()]
    assert len(warnings) == 1 and "fts5 answers" in warnings[0].getMessage()
    engines.forget()


def test_far_behind_is_checked_again_only_when_the_library_or_the_index_moves(tmp_path, monkeypatch):
    library = far_behind(tmp_path, monkeypatch, "consul")
    attempts = []
    real = MessageIndex._apply

    def counted(self, rebuild, limit, *pending, **options):
        attempts.append(limit)
        return real(self, rebuild, limit, *pending, **options)

    monkeypatch.setattr(MessageIndex, "_apply", counted)
    with open_readonly(library) as conn:
        for _ in range(3):
            found = recall(conn, "consul", options=OPTIONS, window=0)
            assert len(found["hits"]) == 5 and engines_of(found) == {"fts5"}
    assert len(attempts) == 1  # the same head and index state: the same verdict, not counted again
    with Store(library) as store:
        store.write([item(6, "consul acl bootstrap")])
    with open_readonly(library) as conn:
        found = recall(conn, "consul", options=OPTIONS, window=0)
    assert len(found["hits"]) == 6 and engines_of(found) == {"fts5"} and len(attempts) == 2  # a new head: tried
    monkeypatch.setattr(messages_module, "READER_CATCH_UP", 200)
    with Store(library) as store:
        store.write([item(7, "consul acl replication")])
    with open_readonly(library) as conn:
        found = recall(conn, "consul", options=OPTIONS, window=0)
    assert len(found["hits"]) == 7 and engines_of(found) == {"tantivy"}  # caught up inline again
    engines.forget()
