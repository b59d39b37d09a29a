"""End to end, as a user runs it: the real `jezero` CLI in a subprocess ingests a Gemini folder
named in its config, then `jezero search` finds a word from a session."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from jezero_connectors_gemini import write_demo


def jezero(env: dict, *args: str) -> subprocess.CompletedProcess:
    script = Path(sys.executable).parent / "jezero"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "jezero.cli"]
    return subprocess.run([*command, *args], env=env, capture_output=True, text=True, timeout=300)


def test_run_then_search_through_the_cli(tmp_path):
    options = write_demo(tmp_path / "sessions")
    library = tmp_path / "library.sqlite3"
    config = tmp_path / "config.toml"
    config.write_text(
        f'[storage]\npath = {json.dumps(str(library))}\n\n[ingest]\nsettle_minutes = 0\n\n'
        f'[[connectors]]\nname = "gemini-local"\ntype = "gemini"\noptions = {{ path = {json.dumps(options["path"])} }}\n'
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JEZERO_", "XDG_", "GEMINI_"))}
    env.update({"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "xdg-config"),
                "XDG_DATA_HOME": str(tmp_path / "xdg-data"), "COLUMNS": "200", "NO_COLOR": "1"})

    check = jezero(env, "--config", str(config), "check-config")
    assert check.returncode == 0, check.stderr
    run = jezero(env, "--config", str(config), "run")
    assert run.returncode == 0, run.stderr
    found = jezero(env, "--config", str(config), "search", "Kelvin", "--json")
    assert found.returncode == 0, found.stderr
    items = json.loads(found.stdout)
    assert [(i["source"], i["agent"], i["project"]) for i in items] == [("gemini-local", "gemini-cli", "weather-app")]
    assert "Kelvin" in items[0]["title"] + items[0]["summary"]

    again = jezero(env, "--config", str(config), "run")  # nothing changed: nothing new, no error
    assert again.returncode == 0, again.stderr
