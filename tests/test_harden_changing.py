"""Transcripts whose times or files do not behave: a session dated in the future (a device's clock
set wrong), read by every connector type that writes a demo store, through the real CLI
(`jezero run` in a subprocess, the offline summarizer, the default settle time). A session must
come in on the first run it can, with a warning when its times cannot be trusted, and a second run
changes nothing."""

from __future__ import annotations

import subprocess
from datetime import datetime, timedelta, timezone

import pytest

from jz_support import jezero_command, needs_plugin
from jezero import plugins
from jezero.demo import SessionSpec, Turn
from jezero.store import open_readonly

pytestmark = [needs_plugin("jezero-summarizers")]

DEMO_TYPES = sorted(name for name, t in plugins.connector_types().items() if t.demo is not None
                    and name in ("claude", "codex", "copilot", "gemini", "opencode"))


def write_config(tmp_path, ctype, options, *, settle_minutes=None):
    path = tmp_path / "config.toml"
    settle = "" if settle_minutes is None else f"[ingest]\nsettle_minutes = {settle_minutes}\n"
    opts = ", ".join(f'{k} = "{v}"' for k, v in options.items())
    path.write_text(f'[storage]\npath = "{tmp_path / "library.sqlite3"}"\n{settle}'
                    f'[summarizer]\nname = "offline"\n'
                    f'[[connectors]]\nname = "src"\ntype = "{ctype}"\noptions = {{ {opts} }}\n')
    return path


def run(config):
    done = subprocess.run([*jezero_command(), "--config", str(config), "run"], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout + done.stderr


def stored_sessions(library):
    conn = open_readonly(library)
    try:
        return sorted(r[0] for r in conn.execute("SELECT DISTINCT session_id FROM items"))
    finally:
        conn.close()


def spec(ident, started, words):
    return SessionSpec("any", "/home/dev/src/shop", started,
                       [Turn("user", f"please look at the {words} problem"), Turn("assistant", f"the {words} is fixed"),
                        Turn("command", "make test", "all 12 tests passed")], id=ident)


@pytest.mark.parametrize("ctype", DEMO_TYPES)
@pytest.mark.parametrize("ahead", [timedelta(days=400), timedelta(days=3)])
def test_a_session_dated_in_the_future_comes_in_with_a_warning(tmp_path, ctype, ahead):
    """Before: a session whose last time was ahead of the clock was "still active" on every run
    until that time came (400 days ahead: a year of runs), and nothing said why."""
    now = datetime.now(timezone.utc)
    past, future = "00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002"
    options = plugins.connector_types()[ctype].demo(tmp_path / "store", [
        spec(past, now - timedelta(days=2), "invoice rounding"),
        spec(future, now + ahead, "webhook retry"),
    ])
    config = write_config(tmp_path, ctype, options)  # the default settle time (30 minutes)
    out = run(config)
    assert "in the future" in out and "0 still active" in out, out
    assert len(stored_sessions(tmp_path / "library.sqlite3")) == 2
    again = run(config)
    assert "0 session(s) written" in again and "in the future" not in again, again


@pytest.mark.parametrize("ctype", DEMO_TYPES[:1])
def test_a_session_a_little_ahead_still_waits_to_settle(tmp_path, ctype):
    """A clock a few minutes (or hours) ahead is not taken for a wrong one: that session waits, as
    one that has just ended does."""
    now = datetime.now(timezone.utc)
    options = plugins.connector_types()[ctype].demo(tmp_path / "store", [
        spec("00000000-0000-4000-8000-000000000003", now + timedelta(hours=2), "cache warmup")])
    out = run(write_config(tmp_path, ctype, options))
    assert "1 still active" in out and "in the future" not in out, out
    assert stored_sessions(tmp_path / "library.sqlite3") == []
