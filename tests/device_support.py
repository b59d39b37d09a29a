"""Helpers for the device tests: a real `jezero serve` subprocess, and the client core run as a
device would run it (its own python3, its own folder, its own agent stores)."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx2

from jz_support import REPO, SAMPLES, jezero_command

CLIENT = REPO / "clients" / "core" / "jezero_client.py"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Served:
    base: str
    config: Path
    process: subprocess.Popen

    @property
    def pid(self) -> int:
        return self.process.pid


def wait_serving(base: str, proc: subprocess.Popen, why=lambda: "", bound: float = 60) -> None:
    """Until `jezero serve` (`proc`) answers /health at `base`; an AssertionError, with why(),
    if it exits or has not started within `bound` s (a bound against a hang, not a timing)."""
    deadline = time.monotonic() + bound
    while True:
        try:
            if httpx2.get(base + "/health", timeout=1).status_code == 200:
                return
        except httpx2.TransportError:
            pass
        if proc.poll() is not None:
            raise AssertionError("jezero serve exited: " + why())
        if time.monotonic() > deadline:
            raise AssertionError("jezero serve did not start")
        time.sleep(0.1)


@contextlib.contextmanager
def jezero_serve(folder: Path, extra_config: str = "", log_level: str = "warning"):
    """A real `jezero serve` on 127.0.0.1 with its library and inbox under `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    port = free_port()
    config = folder / "config.toml"
    config.write_text(f'# the test server\n[storage]\npath = "{folder / "library.sqlite3"}"\n\n'
                      f'[server]\nport = {port}\n\n[inbox]\npath = "{folder / "inbox"}"\n{extra_config}')
    log = open(folder / "serve.log", "w")
    proc = subprocess.Popen([*jezero_command(), "serve", "--log-level", log_level],
                            env={**os.environ, "JEZERO_CONFIG": str(config)}, stdout=log, stderr=log)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_serving(base, proc, lambda: (folder / "serve.log").read_text())
        yield Served(base, config, proc)
    except BaseException:
        log.flush()
        print("--- jezero serve log ---\n" + (folder / "serve.log").read_text()[-4000:])
        raise
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@dataclass
class Device:
    """A computer with agent stores and the client core, in a folder of its own."""

    folder: Path

    @property
    def home(self) -> Path:
        return self.folder / "jezero"

    @property
    def claude(self) -> Path:
        return self.folder / "claude"

    @property
    def codex(self) -> Path:
        return self.folder / "codex"

    def env(self) -> dict[str, str]:
        return {**os.environ, "JEZERO_CLIENT_HOME": str(self.home), "CLAUDE_CONFIG_DIR": str(self.claude),
                "CODEX_HOME": str(self.codex), "GEMINI_CLI_HOME": str(self.folder / "gemini-home"),
                "COPILOT_HOME": str(self.folder / "copilot"), "XDG_DATA_HOME": str(self.folder / "data"),
                # A hook that checks what it adds must not lose it to a loaded machine's clock.
                "JEZERO_HOOK_BUDGET": "30"}

    def client(self, *args: str, python: str | None = None, timeout: float = 120,
               script: Path = CLIENT) -> subprocess.CompletedProcess:
        """Run the client core (or `script`, a copy of it, as a plugin carries one)."""
        return subprocess.run([python or sys.executable, str(script), *args], capture_output=True, text=True,
                              env=self.env(), timeout=timeout)

    def copy_samples(self) -> None:
        """The shared sample stores, copied at test time (never into the repository)."""
        shutil.copytree(SAMPLES / "claude" / "projects", self.claude / "projects")
        shutil.copytree(SAMPLES / "codex" / "sessions", self.codex / "sessions")


def wait_for(predicate, *, bound: float = 20.0, every: float = 0.05):
    """Poll until `predicate()` is truthy; a generous bound only stops a broken test from hanging."""
    deadline = time.monotonic() + bound
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"still not true after {bound} s")
        time.sleep(every)
