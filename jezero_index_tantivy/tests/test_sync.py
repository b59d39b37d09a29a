"""The index kept in step by the writer (a run syncs it after writing, so no reader has to), and
what a reader does when it cannot catch up (another process holds the index's writer): FTS5
answers, correctly, and nothing is lost."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import tantivy

from jezero import demo, plugins
from jezero.config import Config, SearchConfig
from jezero.ingest.runner import run_connectors
from jezero.query import search
from jezero.store import ItemRecord, Store, engines, open_readonly
from jezero.store.engines import library_head as library_head_of
from jezero_index_tantivy import TantivyIndex, folder_for
from jezero_index_tantivy import index as index_module

NOW = datetime.now(timezone.utc)


def test_a_run_brings_the_index_in_step(tmp_path):
    written = demo.build(tmp_path / "sessions", plugins.connector_types(), NOW)
    library = tmp_path / "library.sqlite3"
    config = Config.model_validate({
        "storage": {"path": str(library)}, "search": {"engine": "tantivy"},
        "ingest": {"settle_minutes": 0},
        "connectors": [{"name": name, "type": name, "options": options} for name, options in written],
    })
    engines.forget()
    reports = run_connectors(config, now=NOW + timedelta(hours=2))
    assert sum(r.items_written for r in reports) > 0
    # A fresh process's view of the index: it already records the library's last change.
    fresh = TantivyIndex(library)
    _, applied = fresh._current()
    with open_readonly(library) as conn:
        assert applied == library_head_of(conn)
        hits = search(conn, "analytics", options=SearchConfig(engine="tantivy"), explain=True)
    assert hits and all(h["explain"]["candidates"] == "tantivy" for h in hits)
    engines.forget()


def test_a_reader_that_cannot_catch_up_answers_from_the_state_before_or_by_fts5(tmp_path, monkeypatch):
    """While another process holds the index's writer (it is catching up), a search answers from
    the index's older state, one the library had, without waiting; when that state is more than
    READER_CATCH_UP changes behind, FTS5 answers, correctly; once the writer is free, the index
    catches up and answers with everything."""
    library = tmp_path / "library.sqlite3"
    when = NOW - timedelta(days=1)

    def item(n, title):
        return ItemRecord(uid=f"s:{n}:0", source="s", agent="a", session_id=str(n), segment_index=0,
                          occurred_at=when, title=title, summary="notes", questions=[], atoms=[], original="o",
                          content_hash=str(n), summarizer="t", summary_schema=1)

    with Store(library) as store:
        store.write([item(1, "Vault unseal keys"), item(2, "Kettle walnut")])
    engines.forget()
    options = SearchConfig(engine="tantivy")
    with open_readonly(library) as conn:
        assert [h["explain"]["candidates"] for h in search(conn, "vault", options=options, explain=True)] == ["tantivy"]
    with Store(library) as store:
        store.write([item(3, "Vault audit log")])
    # Another process holds the index's writer (here: this test, through tantivy itself).
    other = tantivy.Index.open(str(folder_for(library)))
    writer = other.writer(heap_size=15_000_000, num_threads=1)
    try:
        engines.forget()
        with open_readonly(library) as conn:
            hits = search(conn, "vault", options=options, explain=True)
        assert [h["title"] for h in hits] == ["Vault unseal keys"]  # the state before the last write
        assert {h["explain"]["candidates"] for h in hits} == {"tantivy"}
        monkeypatch.setattr(index_module, "READER_CATCH_UP", 0)
        engines.forget()
        with open_readonly(library) as conn:
            hits = search(conn, "vault", options=options, explain=True)
        assert sorted(h["title"] for h in hits) == ["Vault audit log", "Vault unseal keys"]
        assert "tantivy" not in {h["explain"]["candidates"] for h in hits}  # FTS5 answered
        monkeypatch.undo()
    finally:
        writer.rollback()
        del writer
    engines.forget()
    with open_readonly(library) as conn:
        hits = search(conn, "vault", options=options, explain=True)
    assert {h["explain"]["candidates"] for h in hits} == {"tantivy"} and len(hits) == 2
    engines.forget()


def test_a_search_does_not_wait_for_another_threads_catch_up(tmp_path):
    """One thread applying the library's changes (holding the index's lock) does not hold up a
    search in another: it answers from the state before; the next search after it sees all."""
    library = tmp_path / "library.sqlite3"
    when = NOW - timedelta(days=1)

    def item(n, title):
        return ItemRecord(uid=f"s:{n}:0", source="s", agent="a", session_id=str(n), segment_index=0,
                          occurred_at=when, title=title, summary="notes", questions=[], atoms=[], original="o",
                          content_hash=str(n), summarizer="t", summary_schema=1)

    with Store(library) as store:
        store.write([item(1, "Vault unseal keys")])
    engines.forget()
    options = SearchConfig(engine="tantivy")
    with open_readonly(library) as conn:
        assert len(search(conn, "vault", options=options)) == 1
    with Store(library) as store:
        store.write([item(2, "Vault audit log")])
    index = engines.engine_for("tantivy", library)
    with index._lock:  # what a catch-up under way in another thread holds
        with open_readonly(library) as conn:
            hits = search(conn, "vault", options=options, explain=True)
    assert [h["title"] for h in hits] == ["Vault unseal keys"]
    assert {h["explain"]["candidates"] for h in hits} == {"tantivy"}
    with open_readonly(library) as conn:
        assert len(search(conn, "vault", options=options)) == 2
    engines.forget()


def test_a_broken_index_costs_one_warning_not_the_answer(tmp_path, caplog):
    library = tmp_path / "library.sqlite3"
    with Store(library) as store:
        store.write([ItemRecord(uid="s:1:0", source="s", agent="a", session_id="1", segment_index=0, occurred_at=NOW,
                                title="Nomad job spec", summary="notes", questions=[], atoms=[], original="o",
                                content_hash="1", summarizer="t", summary_schema=1)])
    folder_for(library).mkdir()
    (folder_for(library) / "meta.json").write_text("{ not json")
    engines.forget()
    options = SearchConfig(engine="tantivy")
    with caplog.at_level("WARNING"), open_readonly(library) as conn:
        for _ in range(3):
            assert [h["title"] for h in search(conn, "nomad", options=options)] == ["Nomad job spec"]
    warnings = [r for r in caplog.records if "tantivy" in r.getMessage()]
    assert len(warnings) == 1 and "fts5 answers" in warnings[0].getMessage()
    assert not any(r.exc_info for r in caplog.records)
    engines.forget()


def test_a_writer_keeps_the_index_near_the_library_as_it_writes(tmp_path):
    library = tmp_path / "library.sqlite3"
    config = Config.model_validate({"storage": {"path": str(library)}, "search": {"engine": "tantivy"}})
    from jezero.ingest.runner import open_store

    engines.forget()
    with open_store(config) as store:
        store.write([ItemRecord(uid="s:1:0", source="s", agent="a", session_id="1", segment_index=0,
                                occurred_at=NOW, title="Traefik middleware", summary="notes", questions=[],
                                atoms=[], original="o", content_hash="1", summarizer="t", summary_schema=1)])
        # the first write is followed at once; the index records the library's last change
        _, applied = TantivyIndex(library)._current()
        with open_readonly(library) as conn:
            assert applied == library_head_of(conn)
    engines.forget()
