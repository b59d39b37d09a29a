"""The tantivy engine over a library seen through a read-only bind mount: tantivy's reader must
write `.tantivy-meta.lock` in the index folder, which it cannot there (tantivy-py 0.27 has no
way to open an index without it), so FTS5 answers every search.

Before: `jezero status` said "its index cannot be read (ValueError: Failed to acquire Lockfile:
IoError(Os { code: 30, ... })). None)", naming neither the cause nor that FTS5 answers, and
`jezero health` said nothing (test_status_and_health_say_fts5_answers failed). Now both say the
index cannot be read here because tantivy must write a lock file, and that FTS5 answers;
health counts it as no problem (every search is answered). Mounting needs root; elsewhere this
skips."""

from __future__ import annotations

import json

import pytest

from jz_support import needs_plugin
from test_harden_read_only import cli, mounted

pytestmark = [needs_plugin("jezero-connectors-claude"), needs_plugin("jezero-summarizers"),
              needs_plugin("jezero-index-tantivy")]


@pytest.fixture
def read_only(tmp_path):
    with mounted(tmp_path, '[search]\nengine = "tantivy"\n') as (config, _library):
        yield config


def test_status_and_health_say_fts5_answers(read_only):
    config = read_only
    status = cli(config, "status")
    assert status.returncode == 0, status.stderr
    line = next(x for x in status.stdout.splitlines() if x.startswith("search engine"))
    assert "cannot be read here" in line and "lock file" in line and "Read-only file system" in line, line
    assert "fts5 answers every search" in line and "None)" not in line, line
    health = cli(config, "health")
    assert health.returncode == 0, health.stdout + health.stderr  # every search is answered: no problem
    assert "fts5 answers every search" in health.stdout and "lock file" in health.stdout, health.stdout
    report = json.loads(cli(config, "health", "--json").stdout)
    assert report["problems"] == [] and "fts5 answers" in report["search_engine"]
    found = cli(config, "search", "invoice rounding", "--json")
    assert found.returncode == 0 and len(json.loads(found.stdout)) == 4
