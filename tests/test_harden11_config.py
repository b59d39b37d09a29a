"""`check-config` over a `[storage] backend` that no installed distribution gives (a typo, or
jezero-store-postgres not installed here).

Before: check-config said "ok", and then `run`, `status`, `search` each refused the config
("no installed distribution gives that backend") and `health` said it works on SQLite only
(benchmarks/faults/configs.py: the one case of 1,000 where check-config passed what every
command refused). Now check-config names it as a problem, exit 1."""

from __future__ import annotations

import json
import subprocess
from datetime import datetime, timedelta, timezone

import pytest

from jz_support import jezero_command, needs_plugin


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


def test_a_connector_name_that_is_a_list_is_one_problem(tmp_path):
    """Before: check-config (and every command) ended in a traceback, TypeError: unhashable type:
    'list', from the duplicate-name check."""
    config = tmp_path / "config.toml"
    config.write_text('[[connectors]]\nname = []\ntype = "claude"\n[[connectors]]\nname = {}\ntype = "claude"\n')
    for args in (["check-config"], ["status"]):
        ran = cli(config, *args)
        assert ran.returncode in (1, 2) and "Traceback" not in ran.stderr and "connectors[0].name" in ran.stderr, ran.stderr[-2000:]


@needs_plugin("jezero-connectors-claude")
@pytest.mark.parametrize("value", ["inf", "1e308"])
def test_lengths_too_long_for_a_timedelta_mean_never(tmp_path, value):
    """Before: `[ingest] settle_minutes = inf` passed check-config and every run failed
    (OverflowError: cannot convert float infinity to integer), nothing ever stored; a connector's
    `interval_minutes = inf` or `1e308` made every `jezero health` a traceback and `run --due` too.
    Now such a length is the longest there is: sessions wait to settle for good, a connector is
    due once and never stale."""
    from jezero.demo import SessionSpec, Turn
    from jezero_connectors_claude.demo import write_claude

    write_claude(tmp_path / "projects", SessionSpec("claude", "/home/dev/src/shop", datetime.now(timezone.utc) - timedelta(days=1), [
        Turn("user", "why does the invoice rounding fail"), Turn("assistant", "fixed")]))
    config = tmp_path / "config.toml"
    head = f'[storage]\npath = "{tmp_path / "library.sqlite3"}"\n[summarizer]\nname = "offline"\n'
    connector = f'[[connectors]]\nname = "claude"\ntype = "claude"\noptions = {{ path = "{tmp_path / "projects"}" }}\n'
    config.write_text(head + f"[ingest]\nsettle_minutes = {value}\n" + connector)
    assert cli(config, "check-config").returncode == 0
    ran = cli(config, "run", "--json")
    assert ran.returncode == 0 and "Traceback" not in ran.stderr, ran.stderr[-2000:]
    [report] = json.loads(ran.stdout)
    assert report["error"] is None and report["sessions_deferred"] == 1, report
    config.write_text(head + "[ingest]\nsettle_minutes = 0\n" + connector.replace('type = "claude"\n', f'type = "claude"\ninterval_minutes = {value}\n'))
    for args in (["run", "--due"], ["health"], ["health", "--stale-after", "1e300"], ["run", "--due"]):
        ran = cli(config, *args)
        assert ran.returncode == 0 and "Traceback" not in ran.stderr, (args, ran.stdout[-1000:], ran.stderr[-2000:])
