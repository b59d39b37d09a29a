"""`jezero status` reads: a library on a read-only mount (a snapshot, a backup mounted to look
something up) is shown as it is, and a library that is not there yet is not made by looking.

Before: status opened the library as its writer, so on a read-only mount it failed with
"cannot write the library" although it writes nothing, and on a fresh config it created an empty
library (and chmod-ed its folder) as a side effect of looking."""

from __future__ import annotations

import json
import subprocess

from jz_support import jezero_command, needs_plugin
from test_harden_read_only import cli, read_only  # noqa: F401 (the fixture)

pytestmark = [needs_plugin("jezero-connectors-claude"), needs_plugin("jezero-summarizers")]


def test_status_reads_a_library_on_a_read_only_mount(read_only):  # noqa: F811
    config, library = read_only
    before = (library.stat().st_size, library.stat().st_mtime_ns)
    shown = cli(config, "status", "--json")
    assert shown.returncode == 0, shown.stderr
    [row] = json.loads(shown.stdout)
    assert row["name"] == "claude" and row["items"] == 4 and row["last_success_at"]
    table = cli(config, "status")
    assert table.returncode == 0 and "claude" in table.stdout and "search engine" in table.stdout, table.stderr
    assert (library.stat().st_size, library.stat().st_mtime_ns) == before


def test_status_of_a_library_not_made_yet_makes_none(tmp_path):
    library = tmp_path / "data" / "library.sqlite3"
    config = tmp_path / "config.toml"
    config.write_text(f'[storage]\npath = "{library}"\n[summarizer]\nname = "offline"\n[[connectors]]\n'
                      f'name = "claude"\ntype = "claude"\noptions = {{ path = "{tmp_path / "projects"}" }}\n')
    shown = subprocess.run([*jezero_command(), "--config", str(config), "status", "--json"], capture_output=True,
                           text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout) == [{"name": "claude", "type": "claude", "enabled": True, "items": 0,
                                         "last_run_at": None, "last_success_at": None, "last_error": None,
                                         "warnings": 0}]
    assert not library.exists() and not library.parent.exists()
    table = subprocess.run([*jezero_command(), "--config", str(config), "status"], capture_output=True, text=True,
                           timeout=120)
    assert table.returncode == 0 and "no library" in table.stdout, table.stdout + table.stderr
    assert not library.exists()
