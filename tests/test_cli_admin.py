"""`jezero --help`, `init` and `check-config` as a user runs them."""

from __future__ import annotations

import json


def test_help_teaches_where_to_start(run_cli):
    for flag in ("--help", "-h"):
        proc = run_cli(flag, check=True)
        assert "jezero up" in proc.stdout and "Start here" in proc.stdout
    assert "Usage" in run_cli().stdout + run_cli().stderr  # no arguments: the help


def test_init_creates_config_and_library_in_platform_folders(run_cli, isolated_home):
    proc = run_cli("init", "--json", check=True)
    result = json.loads(proc.stdout)
    assert result["config"] == str(isolated_home / "config" / "jezero" / "config.toml")
    assert result["library"] == str(isolated_home / "data" / "jezero" / "library.sqlite3")
    assert result["library_created"] and result["config_created"] and result["schema_version"] >= 2
    assert (isolated_home / "data" / "jezero" / "library.sqlite3").exists()
    again = json.loads(run_cli("init", "--json", check=True).stdout)
    assert not again["library_created"] and not again["config_created"]
    assert run_cli("check-config", check=True).stdout.strip().endswith("summarizer 'offline')")


def test_init_at_a_configured_path(run_cli, tmp_path):
    cfg = tmp_path / "jz.toml"
    cfg.write_text(f'[storage]\npath = "{tmp_path / "elsewhere" / "lib.sqlite3"}"\n')
    run_cli("--config", str(cfg), "init", check=True)
    assert (tmp_path / "elsewhere" / "lib.sqlite3").exists()


def test_init_prints_a_path_with_brackets_as_it_is(run_cli, tmp_path):
    # Rich markup dropped "[dev]" from "lib[dev]" as a style tag.
    cfg = tmp_path / "jz.toml"
    cfg.write_text(f'[storage]\npath = "{tmp_path / "lib[dev]" / "lib.sqlite3"}"\n')
    proc = run_cli("--config", str(cfg), "init", env={"COLUMNS": "300"}, check=True)
    assert str(tmp_path / "lib[dev]" / "lib.sqlite3") in proc.stdout


def test_init_refuses_a_library_built_with_another_tokenizer(run_cli, tmp_path):
    cfg = tmp_path / "jz.toml"
    cfg.write_text(f'[storage]\npath = "{tmp_path / "lib.sqlite3"}"\n')
    run_cli("--config", str(cfg), "init", check=True)
    cfg.write_text(f'[storage]\npath = "{tmp_path / "lib.sqlite3"}"\ntokenizer = "unicode61"\n')
    proc = run_cli("--config", str(cfg), "init")
    assert proc.returncode == 2 and "rebuild" in proc.stderr and "Traceback" not in proc.stderr


def test_a_bad_config_is_a_clear_message_not_a_traceback(run_cli, tmp_path):
    cfg = tmp_path / "jz.toml"
    cfg.write_text("[search]\nmax_limit = 'many'\n")
    proc = run_cli("--config", str(cfg), "init")
    assert proc.returncode == 2
    assert "search.max_limit" in proc.stderr and "Traceback" not in proc.stderr
