"""Queries full of operators and bytes that are not text: each is an answer or a one-line
error, never a traceback, and nothing is written.

Found by fuzzing search, recall (words, boolean, discover) and later on both engines with random
strings of FTS5 operators, column filters, quotes, NUL, lone surrogates and long words (3,000
queries x 5 calls): only a boolean expression holding a lone surrogate (what Python makes of a
byte that is not UTF-8 in a command line: `jezero recall --boolean $'\\xff'`) failed, with a
UnicodeEncodeError and a full traceback instead of the QueryError every other bad expression
gets. Every command's arguments given such a byte: `recall --project/--source` and `timeline
--project` failed the same way (an SQLite parameter cannot hold a lone surrogate); now one line,
exit 2 (jezero.cli.errors.argument_problem). Over MCP a lone surrogate is a parse error already."""

from __future__ import annotations

import subprocess

import pytest

from jezero.query.errors import QueryError
from jezero.query.recall import recall
from jezero.store import Store, open_readonly
from jz_support import jezero_command


@pytest.fixture
def library(tmp_path):
    path = tmp_path / "library.sqlite3"
    with Store(path):
        pass
    config = tmp_path / "config.toml"
    config.write_text(f'[storage]\npath = "{path}"\n')
    return path, config


@pytest.mark.parametrize("expr", ["\ud800", "deploy AND \udcff", "\udfff OR (rollback"])
def test_a_boolean_expression_with_a_lone_surrogate_is_a_query_error(library, expr):
    conn = open_readonly(library[0])
    try:
        with pytest.raises(QueryError, match="not UTF-8"):
            recall(conn, boolean=expr)
    finally:
        conn.close()


def test_a_byte_that_is_not_utf8_in_a_boolean_argument_is_one_line(library):
    path, config = library
    ran = subprocess.run([*jezero_command(), "--config", str(config), "recall", "--boolean", b"deploy \xff".decode(
        "utf-8", "surrogateescape")], capture_output=True, text=True, timeout=120, errors="replace")
    assert ran.returncode == 2 and "Traceback" not in ran.stderr and "not UTF-8" in ran.stderr, ran.stderr[-2000:]


@pytest.mark.parametrize("args", [["recall", "q", "--project", "x\udcffy"], ["recall", "q", "--source", "x\udcffy"],
                                  ["timeline", "--project", "x\udcffy"]])
def test_a_filter_argument_that_is_not_utf8_is_one_line(library, args):
    path, config = library
    ran = subprocess.run([*jezero_command(), "--config", str(config), *args], capture_output=True, text=True,
                         timeout=120, errors="replace")
    assert ran.returncode == 2 and "Traceback" not in ran.stderr and "not UTF-8" in ran.stderr, ran.stderr[-2000:]
