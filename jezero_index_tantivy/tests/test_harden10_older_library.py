"""`jezero status` with the tantivy engine over a library of a schema older than the change log
(migration 7) that an index follows: every search of it is FTS5's, but status said only
"search engine: tantivy", as of an index in step. Now it says why and what ends it; an empty
library file (nothing written yet) still says nothing here (status names it elsewhere)."""

from __future__ import annotations

from jezero.store import Store, engines


def test_status_of_a_library_older_than_the_change_log_says_fts5_answers(tmp_path):
    library = tmp_path / "library.sqlite3"
    with Store(library, migrate_to=6):
        pass
    engines.forget()
    try:
        said = engines.engine_for("tantivy", library).condition()
        assert said is not None and "predates the change log" in said and "`jezero run` upgrades it" in said, said
        with Store(library):  # what `jezero run` does first
            pass
        engines.sync("tantivy", library)  # ... and at its end
        engines.forget()
        assert engines.engine_for("tantivy", library).condition() is None
    finally:
        engines.forget()


def test_an_empty_library_file_says_nothing_of_the_change_log(tmp_path):
    library = tmp_path / "library.sqlite3"
    library.touch()
    engines.forget()
    try:
        assert engines.engine_for("tantivy", library).condition() is None
    finally:
        engines.forget()
