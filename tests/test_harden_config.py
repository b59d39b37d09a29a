"""A config whose paths name an environment variable that is not set, several processes opening one
new or older library at once, and what is at the run lock's path, through the real CLI
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


# -- several processes opening one new or older library at once ----------------------------------


def status_config(tmp_path):
    path = tmp_path / "status.toml"
    path.write_text(f'[storage]\npath = "{tmp_path / "lib" / "library.sqlite3"}"\n[summarizer]\nname = "offline"\n')
    return path


@pytest.fixture(scope="module")
def version_8(tmp_path_factory):
    """A library at schema version 8 holding 1,500 items of 20 messages each: its migration to 9
    (the messages renumbered) takes long enough for the processes to meet."""
    from datetime import datetime, timedelta, timezone

    from jezero.store import ItemRecord, Store
    from jezero.store.messages import MessageRecord

    path = tmp_path_factory.mktemp("v8") / "library.sqlite3"
    t0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
    with Store(path, migrate_to=8) as store:
        for first in range(0, 1500, 250):
            items = []
            for i in range(first, first + 250):
                t = t0 + timedelta(minutes=(i * 7919) % 100_000)
                messages = [MessageRecord("user" if j % 2 else "assistant", f"step {j} of session {i} deploy",
                                          t + timedelta(seconds=j)) for j in range(20)]
                items.append(ItemRecord(uid=f"src:s{i}:0", source="src", agent="claude-code", session_id=f"s{i}",
                                        segment_index=0, occurred_at=t, title=f"session {i}", summary="deploy",
                                        questions=[], atoms=[], original="\n".join(m.text for m in messages),
                                        content_hash=f"h{i}", summarizer="offline", summary_schema=1,
                                        messages=messages))
            store.write(items, connector="src", cursor={f"s{first}": 1})
    return path


@pytest.mark.parametrize("start", ["new", "version 8"])
def test_processes_opening_one_library_at_once_all_succeed(tmp_path, start, request):
    """Before: each process read the library's schema version, then migrated: two at once both
    read the old version and the second ran the first one's migrations again once it had the lock
    ("SQLError: table meta already exists", a traceback), or failed on a snapshot the first had
    moved past ("locked by another process"). 2 of 6 pairs of `jezero status` failed so on a new
    library, 3 of 3 on a version 8 one. Now the second waits for the lock and finds the migration
    done."""
    import shutil

    from jezero.store import LATEST, Store

    config = status_config(tmp_path)
    library = tmp_path / "lib" / "library.sqlite3"
    for round in range(3):
        shutil.rmtree(library.parent, ignore_errors=True)
        library.parent.mkdir()
        if start != "new":
            shutil.copy(request.getfixturevalue("version_8"), library)
        procs = [subprocess.Popen([*jezero_command(), "--config", str(config), "status"], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True) for _ in range(4)]
        errors = [p.communicate(timeout=120)[1] for p in procs]
        assert [p.returncode for p in procs] == [0] * 4, errors
        with Store(library) as store:
            assert store.schema_version() == LATEST and store.integrity_check() == "ok"
            assert store.counts()["messages"] == (0 if start == "new" else 30_000)


# -- the run lock ----------------------------------------------------------------------------------


def test_a_folder_where_the_run_lock_goes_is_one_line(tmp_path):
    """Before: a traceback ending in IsADirectoryError from inside filelock."""
    config = write(tmp_path, tmp_path / "library.sqlite3")
    assert cli(config, "run", "-q").returncode == 0
    (tmp_path / "library.sqlite3.lock").unlink()
    (tmp_path / "library.sqlite3.lock").mkdir()
    ran = cli(config, "run")
    assert ran.returncode == 1 and "Traceback" not in ran.stderr, ran.stderr
    assert "cannot take the run lock" in ran.stderr and "library.sqlite3.lock" in ran.stderr


def test_a_lock_file_left_by_a_killed_run_does_not_hold_the_next(tmp_path):
    import signal
    import time

    config = write(tmp_path, tmp_path / "library.sqlite3")
    proc = subprocess.Popen([*jezero_command(), "--config", str(config), "run", "-q"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not (tmp_path / "library.sqlite3.lock").exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert (tmp_path / "library.sqlite3.lock").exists()
    assert cli(config, "run", "-q").returncode == 0
