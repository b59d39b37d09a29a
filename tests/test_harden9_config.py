"""Config paths no file system can open are config problems, said by `check-config` and by
every command before it touches anything.

Before: `[storage] path` holding a NUL (a TOML "\\u0000") passed check-config and `jezero run`
failed with a ValueError traceback ("embedded null byte"); a `[storage] path` naming an existing
folder passed too, and `jezero run` then said the folder was "read-only or not yours"."""

from __future__ import annotations

import subprocess

import pytest

from jz_support import jezero_command, needs_plugin


def cli(config, *args):
    return subprocess.run([*jezero_command(), "--config", str(config), *args], capture_output=True, text=True,
                          timeout=120)


def write(tmp_path, storage: str, options_path: str | None = None):
    projects = options_path if options_path is not None else str(tmp_path / "projects")
    config = tmp_path / "config.toml"
    config.write_text(f'[storage]\npath = "{storage}"\n[summarizer]\nname = "offline"\n[[connectors]]\nname = "c"\n'
                      f'type = "claude"\noptions = {{ path = "{projects}" }}\n')
    return config


@needs_plugin("jezero-connectors-claude")
@pytest.mark.parametrize("where", ["storage", "option"])
def test_a_path_holding_a_nul_is_a_config_problem(tmp_path, where):
    library = str(tmp_path / "library.sqlite3")
    config = write(tmp_path, library + "\\u0000x" if where == "storage" else library,
                   str(tmp_path / "projects") + "\\u0000x" if where == "option" else None)
    for args in (["check-config"], ["run"], ["status"]):
        ran = cli(config, *args)
        assert ran.returncode != 0 and "Traceback" not in ran.stderr and "NUL" in ran.stderr, (args, ran.stderr[-2000:])
    assert list(tmp_path.iterdir()) == [config]


@needs_plugin("jezero-connectors-claude")
def test_a_storage_path_naming_a_folder_says_so(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    config = write(tmp_path, str(folder))
    for args in (["check-config"], ["run"], ["status"], ["search", "x"]):
        ran = cli(config, *args)
        assert ran.returncode != 0 and "is a folder" in ran.stderr and str(folder / "library.sqlite3") in ran.stderr, \
            (args, ran.stderr[-2000:])
    assert list(folder.iterdir()) == []
