"""Imports the first-party plugin packages before pytest collects their tests. Each plugin folder
has the same name as its package; under --import-mode=importlib pytest would otherwise register
the folder itself as an empty namespace module and hide the real package (in src/)."""

import importlib
import os
import sys

# This machine's environment sets PYTHONDONTWRITEBYTECODE=1, so every `jezero` (and server, hook,
# client) process a test starts compiled each module it imported from source: about half of its
# start-up CPU, over hundreds of processes. The suite lets Python keep its bytecode as it does by
# default (a __pycache__ beside each source, ignored by git), for this process, the xdist workers
# (started after this file is read) and every subprocess that inherits the environment.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False


def pytest_xdist_auto_num_workers(config):
    """`-n auto` (the README's command): two workers per core, not one. A worker spends about half
    its time waiting on the processes its tests start (the CLI, servers, hooks), so on two cores
    four workers ran the whole suite in 8-29% less time than two (benchmarks/cli/README.md)."""
    return 2 * (os.cpu_count() or 1)

for _name in ("jezero_connectors_claude", "jezero_connectors_codex", "jezero_connectors_copilot", "jezero_connectors_gemini",
              "jezero_connectors_inbox", "jezero_connectors_opencode", "jezero_summarizers", "jezero_index_tantivy", "jezero_embedders",
              "jezero_store_postgres"):
    try:
        importlib.import_module(_name)
    except ImportError:  # a core-only run: those tests skip or are not collected
        pass


import pytest  # noqa: E402


@pytest.fixture(scope="session", autouse=True)
def _postgres_stopped_at_the_end():
    """The PostgreSQL server that some tests start (tests/pg_support.py) stops when the session ends."""
    yield
    started = sys.modules.get("pg_support")  # imported only by a test that asked for a server
    if started is not None:
        started.stop()


@pytest.fixture
def pg_url():
    """A new, empty database on a real PostgreSQL server (skips with the reason where none starts)."""
    import pg_support

    return pg_support.fresh_database()
