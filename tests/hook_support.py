"""Helpers for the hook and agent-plugin tests: a real `jezero serve` whose library holds a few
items of the project "demo", a device approved on it, and a working folder that resolves to that
project (a git repository named demo)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from device_support import CLIENT, jezero_serve
from jz_support import jezero_command

PROJECT = "demo"
# Newest first once stored: the session-start hook shows the five newest of these six.
TITLES = [
    "Billing service: the SQLite migration timeout raised to 30 seconds",
    "Billing migrations cleaned up after the schema split",  # "migrations" is not "migration"
    "Login page: the session cookie now expires after 12 hours",
    "Deploy script retries the health check three times",
    "Search index rebuilt nightly by cron",
    "The oldest item: CI cache keyed on the lock file",
]
FIRST_PROMPT = "Why does the billing migration timeout keep failing?"


def store_items(library: Path, titles: list[str] = TITLES, project: str = PROJECT) -> None:
    from jezero.store import ItemRecord, Store

    now = datetime.now(timezone.utc)
    records = [ItemRecord(
        uid=f"demo:s{i}:0", source="demo", agent="claude", session_id=f"s{i}", segment_index=0,
        occurred_at=now - timedelta(days=i + 1), title=title, summary=f"Work on {title.lower()}.",
        questions=[], atoms=[], original="(made up for the hook tests)", content_hash=f"h{i}",
        summarizer="test", summary_schema=1, project=project) for i, title in enumerate(titles)]
    with Store(library) as store:
        store.write(records)


@dataclass
class Served:
    base: str
    config: Path
    client_home: Path
    workdir: Path

    def env(self) -> dict[str, str]:
        return {"JEZERO_CLIENT_HOME": str(self.client_home)}


@contextlib.contextmanager
def served_device(folder: Path, titles: list[str] = TITLES):
    """A running server with the items, a device approved on it, and a git working folder."""
    store_items(folder / "server" / "library.sqlite3", titles)
    # A session just written is ingested at once (no wait for it to go quiet).
    with jezero_serve(folder / "server", extra_config="\n[ingest]\nsettle_minutes = 0\n") as server:
        home = folder / "device"
        env = {**os.environ, "JEZERO_CLIENT_HOME": str(home)}
        made = subprocess.run([sys.executable, str(CLIENT), "init", "--server", server.base, "--device", "laptop"],
                              capture_output=True, text=True, env=env, check=True)
        subprocess.run([*jezero_command(), *made.stdout.split()[1:]], capture_output=True, text=True, check=True,
                       env={**os.environ, "JEZERO_CONFIG": str(server.config)})
        workdir = folder / "src" / PROJECT
        workdir.mkdir(parents=True)
        subprocess.run(["git", "init", "-q", str(workdir)], check=True)
        from device_support import wait_for

        wait_for(lambda: subprocess.run([sys.executable, str(CLIENT), "status"], env=env,
                                        capture_output=True).returncode == 0)
        yield Served(server.base, server.config, home, workdir)


# What the plugins' hook commands run (clients/*/hooks/hooks.json): the launcher beside the core.
HOOK = CLIENT.parent / "jezero_hook.py"


def run_hook(event: str, agent: str, payload: dict | str, env: dict[str, str], cwd: Path | None = None,
             python: str | None = None) -> subprocess.CompletedProcess:
    """A hook run as the plugins run it: `python3 -I -S jezero_hook.py EVENT --agent AGENT`."""
    import json

    data = payload if isinstance(payload, str) else json.dumps(payload)
    return subprocess.run([python or sys.executable, "-I", "-S", str(HOOK), event, "--agent", agent], input=data,
                          capture_output=True, text=True, env={**os.environ, **env}, cwd=cwd, timeout=60)
