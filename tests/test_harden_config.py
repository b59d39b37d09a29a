"""A config whose paths name an environment variable that is not set, through the real CLI
(`jezero check-config` and `jezero run` in subprocesses). Before: `$NAME` was left as it was, so
check-config said ok and `jezero run` made a second, empty library in a folder literally named
`$NAME` (a cron job without the variable filled that one while the server read the real one), or
looked for a store under `$NAME/...` and found none. Now each is a problem naming the key and the
variable, and nothing is created."""

from __future__ import annotations

import os
import subprocess

import pytest

from jz_support import jezero_command, needs_plugin

pytestmark = [needs_plugin("jezero-summarizers"), needs_plugin("jezero-connectors-claude")]

UNSET = "JEZERO_HARDEN8_UNSET"


def cli(config, *args, env=None):
    environ = {k: v for k, v in os.environ.items() if k != UNSET}
    return subprocess.run([*jezero_command(), "--config", str(config), *args], capture_output=True, text=True,
                          timeout=120, env={**environ, **(env or {})})


def write(tmp_path, library, inbox=None, store=None):
    (tmp_path / "projects").mkdir(exist_ok=True)
    text = f'[storage]\npath = "{library}"\n'
    if inbox:
        text += f'[inbox]\npath = "{inbox}"\n'
    text += ('[ingest]\nsettle_minutes = 0\n[summarizer]\nname = "offline"\n'
             f'[[connectors]]\nname = "claude"\ntype = "claude"\noptions = {{ path = "{store or tmp_path / "projects"}" }}\n')
    path = tmp_path / "config.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("where", ["storage.path", "inbox.path", "connectors[0].options.path"])
def test_a_path_naming_an_unset_variable_is_a_config_problem(tmp_path, where):
    library, inbox, store = tmp_path / "library.sqlite3", None, None
    if where == "storage.path":
        library = f"${UNSET}/library.sqlite3"
    elif where == "inbox.path":
        inbox = f"${{{UNSET}}}/inbox"
    else:
        store = f"${UNSET}/projects"
    config = write(tmp_path, library, inbox, store)
    checked = cli(config, "check-config")
    assert checked.returncode != 0 and where in checked.stdout + checked.stderr, checked.stdout + checked.stderr
    assert f"${UNSET}" in checked.stdout + checked.stderr
    ran = cli(config, "run")
    assert ran.returncode != 0 and "Traceback" not in ran.stderr, ran.stderr
    assert not list(tmp_path.glob("$*")) and not (tmp_path / "library.sqlite3").exists()


def test_the_same_paths_with_the_variable_set_are_read_through_it(tmp_path):
    config = write(tmp_path, f"${UNSET}/library.sqlite3", f"${{{UNSET}}}/inbox", f"${UNSET}/projects")
    env = {UNSET: str(tmp_path)}
    assert cli(config, "check-config", env=env).returncode == 0
    ran = cli(config, "run", env=env)
    assert ran.returncode == 0, ran.stderr
    assert (tmp_path / "library.sqlite3").exists() and not list(tmp_path.glob("$*"))
