"""Blocks say what each tool call did (action, command, paths), and that survives every stage:
the redactor scrubs the command and the paths as well as the text, and `jezero resummarize`,
which reads blocks back from the stored original, asks the connector type to say it again."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from jezero import config as config_mod
from jezero import plugins
from jezero.demo import SessionSpec, Turn
from jezero.ingest.runner import resummarize, run_connectors
from jezero.store import open_readonly
from jz_support import needs_plugin

pytestmark = [needs_plugin("jezero-summarizers")]

SECRET = "S3cr3t-Passw0rd"
TURNS = [Turn("user", "Migrate the billing database and run the tests."),
         Turn("command", f"DATABASE_URL=postgres://app:{SECRET}@db.internal:5432/app alembic upgrade head",
              "sqlalchemy.exc.OperationalError: connection refused", failed=True),
         Turn("command", "pytest tests/test_invoices.py -x", "FAILED tests/test_invoices.py::test_bulk", failed=True),
         Turn("assistant", "Fixed: the migration needed the database up; the invoice tests pass now.")]


def library(tmp_path):
    from jezero_connectors_claude.demo import write_claude
    from jezero_connectors_codex.demo import write_codex

    start = datetime.now(timezone.utc) - timedelta(days=2)
    turns = TURNS
    write_claude(tmp_path / "claude", SessionSpec("claude", "/home/ana/src/billing", start, turns))
    write_codex(tmp_path / "codex", SessionSpec("codex", "/home/ana/src/billing", start, turns))
    path = tmp_path / "config.toml"
    path.write_text(f'[storage]\npath = "{tmp_path / "lib.sqlite3"}"\n[ingest]\nsettle_minutes = 0\n\n'
                    f'[[connectors]]\nname = "c"\ntype = "claude"\noptions = {{ path = "{tmp_path / "claude"}" }}\n\n'
                    f'[[connectors]]\nname = "x"\ntype = "codex"\noptions = {{ path = "{tmp_path / "codex"}" }}\n')
    return config_mod.load(path)


def atoms(cfg) -> dict[str, list]:
    conn = open_readonly(cfg.library_path())
    try:
        return {source: json.loads(a) for source, a in conn.execute("SELECT source, atoms FROM items ORDER BY source")}
    finally:
        conn.close()


def commands(found: list) -> list[str]:
    return sorted(a["text"] for a in found if a["type"] == "command")


@needs_plugin("jezero-connectors-claude")
@needs_plugin("jezero-connectors-codex")
def test_commands_are_atoms_with_their_secrets_scrubbed_and_resummarize_keeps_them(tmp_path):
    cfg = library(tmp_path)
    assert all(r.sessions_written == 1 for r in run_connectors(cfg))
    first = atoms(cfg)
    for source in ("c", "x"):
        found = commands(first[source])
        assert "pytest tests/test_invoices.py -x" in found
        assert any("alembic upgrade head" in c for c in found)
        assert SECRET not in json.dumps(first[source])  # the command was scrubbed, not only the text
    report = resummarize(cfg)
    assert report.summarized == 2
    assert {s: commands(a) for s, a in atoms(cfg).items()} == {s: commands(a) for s, a in first.items()}


@pytest.mark.parametrize("kind", [pytest.param("gemini", marks=needs_plugin("jezero-connectors-gemini")),
                                  pytest.param("copilot", marks=needs_plugin("jezero-connectors-copilot")),
                                  pytest.param("opencode", marks=needs_plugin("jezero-connectors-opencode"))])
def test_resummarize_keeps_the_commands_and_errors_of_every_agent(tmp_path, kind):
    start = datetime.now(timezone.utc) - timedelta(days=2)
    options = plugins.connector_types()[kind].demo(tmp_path / kind, [SessionSpec(kind, "/home/ana/src/billing", start, TURNS)])
    path = tmp_path / "config.toml"
    path.write_text(f'[storage]\npath = "{tmp_path / "lib.sqlite3"}"\n[ingest]\nsettle_minutes = 0\n\n'
                    f'[[connectors]]\nname = "{kind}"\ntype = "{kind}"\noptions = {{ path = "{options["path"]}" }}\n')
    cfg = config_mod.load(path)
    assert [r.sessions_written for r in run_connectors(cfg)] == [1]
    first = atoms(cfg)[kind]
    assert "pytest tests/test_invoices.py -x" in commands(first) and SECRET not in json.dumps(first)
    assert resummarize(cfg).summarized == 1
    again = atoms(cfg)[kind]
    assert commands(again) == commands(first)
    assert sorted(a["text"] for a in again if a["type"] == "error") == sorted(a["text"] for a in first if a["type"] == "error")
