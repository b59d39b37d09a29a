"""Warnings: each said once, kept once, not re-read every run, and silenced only by an admin's
acknowledgement (issue 10, defects 7 and the "newest record types" part)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from jz_support import needs_plugin
from jezero.demo import SessionSpec, Turn
from jezero.models import ConnectorContext
from jezero.store import Store
from jezero.store.warnings import unacknowledged_warnings


def write_claude(projects, spec):
    from jezero_connectors_claude.demo import write_claude  # imported late: the core alone lacks it

    return write_claude(projects, spec)

T0 = datetime(2026, 2, 1, tzinfo=timezone.utc)


def spec(i: int) -> SessionSpec:
    return SessionSpec("claude", "/home/dev/src/shop", T0 + timedelta(hours=i),
                       [Turn("user", f"task {i}: fix the invoice webhook"), Turn("assistant", f"done {i}")],
                       id=f"00000000-0000-4000-8000-{i:012d}")


def config(tmp_path) -> str:
    path = tmp_path / "config.toml"
    path.write_text(f'[storage]\npath = "{tmp_path / "lib.sqlite3"}"\n[ingest]\nsettle_minutes = 0\n'
                    f'[[connectors]]\nname = "claude"\ntype = "claude"\n'
                    f'options = {{ path = "{tmp_path / "projects"}" }}\n')
    return str(path)


@needs_plugin("jezero-connectors-claude")
@needs_plugin("jezero-summarizers")
def test_a_bad_line_warns_once_and_only_an_acknowledgement_silences_it(tmp_path, run_cli):
    cfg = config(tmp_path)
    bad = write_claude(tmp_path / "projects", spec(1))
    with bad.open("a") as f:
        f.write("{this line is not json\n")
    first = run_cli("--config", cfg, "run", check=True)
    assert first.stderr.count("not a JSON object") == 1, first.stderr  # said once, not twice
    again = run_cli("--config", cfg, "run", "--json", check=True)
    [report] = json.loads(again.stdout)
    assert report["sessions_seen"] == 0 and report["warnings"] == []  # not re-read, not re-warned
    status = json.loads(run_cli("--config", cfg, "status", "--json", check=True).stdout)
    assert status[0]["warnings"] == 1 and not status[0]["last_error"]
    assert "not acknowledged" in run_cli("--config", cfg, "status", check=True).stdout

    listed = json.loads(run_cli("--config", cfg, "warnings", "--json", check=True).stdout)
    assert len(listed) == 1 and "not a JSON object" in listed[0]["message"]
    acked = json.loads(run_cli("--config", cfg, "warnings", "ack", "--match", "*not a JSON*", "--json",
                               check=True).stdout)
    assert acked == {"acknowledged": 1, "open": 0}
    assert json.loads(run_cli("--config", cfg, "status", "--json", check=True).stdout)[0]["warnings"] == 0

    # The same file growing repeats the acknowledged warning: still acknowledged. A new bad file is news.
    write_claude(tmp_path / "projects", spec(1)).open("a").write("{still not json\n")
    other = write_claude(tmp_path / "projects", spec(2))
    with other.open("a") as f:
        f.write("[1, 2]\n")
    run_cli("--config", cfg, "run", check=True)
    with Store(tmp_path / "lib.sqlite3") as store:
        open_ = store.unacknowledged_warnings()
    assert [w["message"].split(":")[0] for w in open_] == [str(other)]


def test_acknowledge_covers_what_exists_not_what_comes(tmp_path):
    with Store(tmp_path / "lib.sqlite3") as store:
        store.record_run("c", error=None, warnings=["a.jsonl: unknown record type 'x'", "b.jsonl:3: bad"], ok=True)
        assert store.acknowledge_warnings(everything=True) == 2
        store.record_run("c", error=None, warnings=["a.jsonl: unknown record type 'x'", "c.jsonl:9: bad"], ok=True)
        assert [w["message"] for w in unacknowledged_warnings(store.db)] == ["c.jsonl:9: bad"]
        assert unacknowledged_warnings(store.db, "other") == []
        assert store.acknowledge_warnings(ids=[999]) == 0


@needs_plugin("jezero-connectors-claude")
def test_claude_warns_for_a_file_removed_mid_run(tmp_path, monkeypatch):
    from jezero_connectors_claude import connector

    _kept, gone = (write_claude(tmp_path / "projects", spec(i)) for i in (1, 2))
    real = connector.read_transcript

    def removed_first(path, **kw):
        if path == gone:
            path.unlink()
        return real(path, **kw)

    monkeypatch.setattr(connector, "read_transcript", removed_first)
    warned: list[str] = []
    conn = connector.build_connector({"path": str(tmp_path / "projects")}, ConnectorContext("claude", warned.append))
    sessions = list(conn.read({}))
    assert len(sessions) == 1
    assert len(warned) == 1 and str(gone) in warned[0] and "removed" in warned[0]


@pytest.mark.parametrize("n", [1])
def test_status_reads_an_old_library_without_the_table(tmp_path, n):
    with Store(tmp_path / "old.sqlite3", migrate_to=4) as store:
        assert store.unacknowledged_warnings() == []
