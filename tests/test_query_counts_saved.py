"""The planner's exact term counts are stored beside the library as they are made, so another
process (a server's other worker, a new process) looks a term up instead of counting it again;
after a write they belong to another state and are not used."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from datetime import datetime, timezone

import apsw

from jezero.query import persisted, search, stats
from jezero.query.terms import parse_terms
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
        print(len(search(conn, sys.argv[2])))
""")


def forget_all():
    """This process now knows nothing, like a new one."""
    stats._states.clear()
    stats._newest.clear()
    persisted.forget()


def stored(library) -> list[tuple[str, str, int]]:
    with apsw.Connection(str(persisted.path_for(str(library)))) as conn:
        return conn.execute("SELECT s.state, c.term, c.n FROM counts AS c JOIN states AS s ON s.id = c.state").fetchall()


def in_subprocess(library, query: str) -> None:
    done = subprocess.run([sys.executable, "-c", SEARCH, str(library), query], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr


def test_a_new_process_starts_with_the_counts_of_the_same_state(tmp_path):
    library = tmp_path / "lib.sqlite3"
    # "common" in every item (counted exactly: the gate sees it everywhere), "rare" in one.
    with Store(library) as store:
        store.write([item(n, f"common word {n}" + (" rare" if n == 0 else "")) for n in range(40)])
    forget_all()
    in_subprocess(library, "common rare")
    assert any(n >= 20 for _, _, n in stored(library))  # "common", counted to N/2

    forget_all()
    with open_readonly(library) as conn:
        state = stats.index_stats(conn)
        assert state.counts and max(state.counts.values()) >= state.half  # the floored count, from the file
        hits = search(conn, "common rare")
        assert len(hits) == 10 and hits[0]["title"] == "common word 0 rare"

    with Store(library) as store:  # a write: a new index state, the file's counts do not apply
        store.write([item(99, "another")])
    forget_all()
    with open_readonly(library) as conn:
        assert stats.index_stats(conn).counts == {}


def test_a_count_another_process_made_is_not_made_again(tmp_path, monkeypatch):
    """Two processes on one state (a server's two workers): what one counted while the other was
    already running is looked up by the other, not counted again (before, each process counted
    every term itself and read the saved counts only when it first met the state)."""
    library = tmp_path / "lib.sqlite3"
    with Store(library) as store:
        store.write([item(n, f"common word {n}") for n in range(40)])
    forget_all()
    common = parse_terms("common", "trigram")[0]
    with open_readonly(library) as conn:
        state = stats.index_stats(conn)  # this process meets the state first, with nothing stored
        assert state.counts == {}
        in_subprocess(library, "common")  # the other process counts "common" meanwhile
        counted = []
        real = stats.count_rows
        monkeypatch.setattr(stats, "count_rows", lambda *a, **k: counted.append(a) or real(*a, **k))
        assert stats.exact_count(conn, state, common) >= state.half
        assert counted == []  # looked up, not counted
        other = parse_terms("word", "trigram")[0]
        assert stats.exact_count(conn, state, other) >= state.half and len(counted) == 1  # a new term is counted


def test_the_file_keeps_the_last_states_and_replaces_the_json_file(tmp_path):
    library = str(tmp_path / "lib.sqlite3")
    old = tmp_path / "lib.sqlite3.term-counts.json"
    old.write_text('{"state": "x", "counts": []}')
    forget_all()
    for s in range(persisted.STATES_KEPT + 2):
        persisted.record(library, f"state{s}", ("abc", "bcd"), s)
    assert not old.exists()
    kept = sorted(state for state, _, _ in stored(library))
    assert kept == [f"state{s}" for s in range(2, persisted.STATES_KEPT + 2)]
    assert persisted.lookup(library, "state0", ("abc", "bcd")) is None
    assert persisted.lookup(library, f"state{persisted.STATES_KEPT + 1}", ("abc", "bcd")) == persisted.STATES_KEPT + 1
    forget_all()
    assert persisted.load(library, "state3") == {("abc", "bcd"): 3}


def test_the_file_is_its_owners_alone(tmp_path):
    library = str(tmp_path / "lib.sqlite3")
    forget_all()
    persisted.record(library, "s", ("abc",), 1)
    assert persisted.path_for(library).stat().st_mode & 0o777 == 0o600


def test_a_damaged_file_is_made_again(tmp_path, caplog):
    # A counts file that is not a database (a disk fault, another file under its name) would have
    # left every process counting every term itself for good; it holds nothing the library lacks.
    library = str(tmp_path / "lib.sqlite3")
    counts = persisted.path_for(library)
    counts.write_bytes(b"not a database, " * 512)
    forget_all()
    with caplog.at_level("WARNING", logger="jezero.query.persisted"):
        persisted.record(library, "s", ("abc",), 7)
    assert "damaged" in caplog.text and str(counts) in caplog.text
    forget_all()
    assert persisted.lookup(library, "s", ("abc",)) == 7
    assert counts.stat().st_mode & 0o777 == 0o600
