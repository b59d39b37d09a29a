"""Shared fixtures: an isolated home for every test, the CLI as a real subprocess, and a way to
register a plugin for one test."""

from __future__ import annotations

import os
import subprocess

import pytest

from jezero import plugins

from jz_support import jezero_command
# The query and server modules run against both store backends (pg_support.BOTH_BACKENDS).
from pg_support import pytest_collection_modifyitems, pytest_generate_tests, store_backend  # noqa: F401


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory, monkeypatch):
    """Nothing a test does touches the real home: platform folders and HOME point into tmp."""
    home = tmp_path_factory.mktemp("home")
    for var, sub in (("XDG_CONFIG_HOME", "config"), ("XDG_DATA_HOME", "data"), ("XDG_CACHE_HOME", "cache"),
                     ("XDG_STATE_HOME", "state")):
        monkeypatch.setenv(var, str(home / sub))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("JEZERO_CONFIG", raising=False)
    monkeypatch.delenv("JEZERO_PLUGINS", raising=False)
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    yield home


@pytest.fixture
def run_cli(isolated_home):
    """Run the real `jezero` command in a subprocess with the isolated environment."""

    def run(*args: str, env: dict | None = None, check: bool = False, timeout: float = 120, input: str | None = None):
        full_env = {**os.environ, **(env or {})}
        proc = subprocess.run([*jezero_command(), *args], capture_output=True, text=True, env=full_env,
                              timeout=timeout, input=input)
        if check and proc.returncode != 0:
            raise AssertionError(f"jezero {' '.join(args)} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
        return proc

    return run


@pytest.fixture
def register_plugin():
    """Register plugin objects for one test; they are removed afterwards."""
    pm = plugins.get_plugin_manager()
    names = []

    def register(plugin, name: str):
        pm.register(plugin, name=name)
        names.append(name)
        return plugin

    yield register
    for name in names:
        pm.unregister(name=name)
