"""Commands that read the SQLite file itself refuse, in one line, a library on another backend
(they would otherwise report on a file that is not the library), and leave nothing behind."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("command", [["embed"], ["health"], ["reindex"]])
def test_a_sqlite_only_command_refuses_another_backend(run_cli, tmp_path, command):
    config = tmp_path / "config.toml"
    library = tmp_path / "library.sqlite3"
    config.write_text(f'[storage]\nbackend = "postgres"\nurl_env = "JEZERO_TEST_PG_URL"\npath = "{library}"\n')
    r = run_cli(*command, env={"JEZERO_CONFIG": str(config)})
    assert r.returncode == 2, r.stdout + r.stderr
    assert "works on a SQLite library only" in r.stderr and "'postgres'" in r.stderr
    assert "Traceback" not in r.stderr
    assert not library.exists()
