"""Time bounds that no time is between. recall's since at or after its before, timeline's since
at or after its until: before, an empty answer ("no message holds these words", "no items for
these filters"), which an agent that swapped the two took for an answer about the library. Now a
QueryError that says so (the tools' error, the CLI's one line). Bounds one bare day apart still
answer: recall's `before` given as a date includes that day."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from jezero.query.errors import QueryError
from jezero.query.recall import recall
from jezero.query.search import timeline
from jezero.store import Store, open_readonly
from jz_support import jezero_command

FIXTURE = Path(__file__).parent / "data" / "main-e85cee8-library.sqlite3"  # 14 items, 2025


@pytest.fixture
def library(tmp_path):
    path = tmp_path / "library.sqlite3"
    shutil.copy(FIXTURE, path)
    with Store(path):  # brought to this schema
        pass
    config = tmp_path / "config.toml"
    config.write_text(f'[storage]\npath = "{path}"\n')
    conn = open_readonly(path)
    yield conn, config
    conn.close()


@pytest.mark.parametrize("since, before", [("2026-01-01", "2025-01-01"), ("2025-03-01T10:00:00Z", "2025-03-01T10:00:00Z"),
                                           ("2025-03-02", "2025-03-01T12:00:00+00:00")])
def test_recall_refuses_bounds_with_no_time_between(library, since, before):
    conn, _ = library
    with pytest.raises(QueryError, match="is not before before"):
        recall(conn, "deploy", since=since, before=before)
    with pytest.raises(QueryError, match="is not before until"):
        timeline(conn, project="p1", since=since, until=before)


def test_bounds_that_hold_time_still_answer(library):
    conn, _ = library
    assert recall(conn, "deploy", since="2024-01-01", before="2026-01-01")["hits"]
    assert recall(conn, "deploy", since="2025-01-01", before="2025-01-01")["hits"] is not None  # that whole day
    assert timeline(conn, project="p1", since="2024-01-01", until="2026-01-01")


def test_the_cli_says_it_in_one_line(library):
    _, config = library
    for args in (["recall", "deploy", "--since", "2026-01-01", "--before", "2025-01-01"],
                 ["timeline", "-p", "p1", "--since", "2026-01-01", "--until", "2025-01-01"]):
        done = subprocess.run([*jezero_command(), "--config", str(config), *args], capture_output=True, text=True,
                              timeout=120)
        assert done.returncode != 0 and "is not before" in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_a_negative_min_messages_is_named_as_such(library):
    """Before: "min_messages must be a whole number, got -5", of a whole number."""
    conn, _ = library
    with pytest.raises(QueryError, match="0 or more, got -5"):
        recall(conn, "deploy", min_messages=-5)
