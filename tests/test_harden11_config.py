"""`check-config` over a `[storage] backend` that no installed distribution gives (a typo, or
jezero-store-postgres not installed here).

Before: check-config said "ok", and then `run`, `status`, `search` each refused the config
("no installed distribution gives that backend") and `health` said it works on SQLite only
(benchmarks/faults/configs.py: the one case of 1,000 where check-config passed what every
command refused). Now check-config names it as a problem, exit 1."""

from __future__ import annotations

import json
import subprocess

from jz_support import jezero_command


def cli(config, *args):
    return subprocess.run([*jezero_command(), "--config", str(config), *args], capture_output=True, text=True, timeout=120)


def test_an_unknown_backend_is_a_config_problem(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text(f'[storage]\nbackend = "postgress"\npath = "{tmp_path / "library.sqlite3"}"\n')
    checked = cli(config, "check-config")
    assert checked.returncode == 1 and "storage.backend" in checked.stderr and "'postgress'" in checked.stderr, checked
    as_json = json.loads(cli(config, "check-config", "--json").stdout)
    assert as_json["ok"] is False and as_json["problems"][0]["key"] == "storage.backend"
    ran = cli(config, "status")
    assert ran.returncode == 1 and "no installed distribution gives that backend" in ran.stderr


def test_sqlite_passes(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text(f'[storage]\nbackend = "sqlite"\npath = "{tmp_path / "library.sqlite3"}"\n')
    assert cli(config, "check-config").returncode == 0
