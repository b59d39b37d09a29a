"""Library, config folder and key private to their user by default (issue 10, defect 6): a
library holds every item of every source, and was 0644 in a 0755 folder."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from jezero.private import private_folder
from jezero.store import Store


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_library_and_its_folder_are_private_even_under_a_lax_umask(tmp_path):
    old = os.umask(0o022)
    try:
        lib = tmp_path / "data" / "jezero" / "library.sqlite3"
        with Store(lib) as store:
            store.db.execute("CREATE TABLE t(x)")  # something in the WAL
            for suffix in ("-wal", "-shm"):
                assert mode(Path(str(lib) + suffix)) & 0o077 == 0, suffix
        assert mode(lib) == 0o600
        assert mode(lib.parent) == 0o700
    finally:
        os.umask(old)


def test_an_existing_folder_keeps_the_mode_its_owner_gave_it(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o750)
    private_folder(shared / "sub")
    assert mode(shared) == 0o750 and mode(shared / "sub") == 0o700


def test_init_and_run_leave_nothing_readable_by_others(run_cli, isolated_home):
    run_cli("init", check=True)
    config_dir = isolated_home / "config" / "jezero"
    data_dir = isolated_home / "data" / "jezero"
    assert mode(config_dir) == 0o700 and mode(config_dir / "config.toml") == 0o600
    assert mode(data_dir) == 0o700
    for path in data_dir.iterdir():
        assert mode(path) & 0o077 == 0, path
