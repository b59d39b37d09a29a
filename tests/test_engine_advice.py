"""`jezero status` and `jezero serve` say which engine searches the library, and tell the admin of
a large FTS5 library how to move to tantivy (jezero/cli/index.py: FTS5_ADVICE_ITEMS)."""

from __future__ import annotations

import sys
from importlib.util import find_spec
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from jezero.cli.index import FTS5_ADVICE_ITEMS  # noqa: E402
from test_query import build, item  # noqa: E402


def _config(tmp_path: Path, library: Path, engine: str = "fts5") -> Path:
    path = tmp_path / f"config-{engine}.toml"
    path.write_text(f'[storage]\npath = "{library}"\n\n[search]\nengine = "{engine}"\n')
    return path


def test_a_small_fts5_library_gets_no_advice(tmp_path, run_cli):
    library, _ = build(tmp_path, [item("Database migrations cleanup", "Squashed the migrations.")])
    status = run_cli("--config", str(_config(tmp_path, library)), "status", check=True)
    assert "search engine: fts5 (inside the library)\n" in status.stdout
    assert "tantivy" not in status.stdout


def test_a_large_fts5_library_is_told_how_to_move_to_tantivy(tmp_path, run_cli):
    items = [item(f"session {i}", "Worked on the billing service.", original="o") for i in range(FTS5_ADVICE_ITEMS)]
    library, _ = build(tmp_path, items)
    status = run_cli("--config", str(_config(tmp_path, library)), "status", check=True)
    line = next(x for x in status.stdout.splitlines() if x.startswith("search engine:"))
    assert f"{FTS5_ADVICE_ITEMS:,} items" in line
    assert 'set [search] engine = "tantivy" and run `jezero reindex`' in line
    # Where jezero-index-tantivy is installed (the suite; not the core-alone run) no pip line.
    assert ("pip install 'jezero[tantivy]'" in line) == (find_spec("jezero_index_tantivy") is None)
    tantivy = run_cli("--config", str(_config(tmp_path, library, "tantivy")), "status", check=True)
    if find_spec("jezero_index_tantivy") is not None:
        # (no advice to move; the index was never built for this library, and status says so)
        line = next(x for x in tantivy.stdout.splitlines() if x.startswith("search engine:"))
        assert line == ("search engine: tantivy; its items index is not built: fts5 answers until "
                        "`jezero run` or `jezero reindex` builds it; its messages index is not built: fts5 "
                        "answers until `jezero run` or `jezero reindex` builds it"), line
    else:
        assert "search engine: tantivy, but no installed plugin gives it" in tantivy.stdout
    unknown = run_cli("--config", str(_config(tmp_path, library, "nope")), "status", check=True)
    assert "search engine: nope, but no installed plugin gives it: searching with fts5" in unknown.stdout


def test_status_prints_a_last_error_as_written(tmp_path, run_cli):
    # The status table is Rich: a cell holding "[inbox] path" lost the bracketed word as a style tag.
    pytest.importorskip("jezero_connectors_claude")  # the connector the config names
    from jezero.store import Store

    library, _ = build(tmp_path, [item("Database migrations cleanup", "Squashed the migrations.")])
    config = _config(tmp_path, library)
    config.write_text(config.read_text() + f'\n[[connectors]]\nname = "laptop"\ntype = "claude"\n'
                      f'options = {{ path = "{tmp_path}" }}\n')
    with Store(library) as store:
        store.record_run("laptop", error="cannot read [inbox] path [bold]x[/bold]", warnings=[], ok=False)
    status = run_cli("--config", str(config), "status", env={"COLUMNS": "200"}, check=True)
    assert "cannot read [inbox] path [bold]x[/bold]" in status.stdout
