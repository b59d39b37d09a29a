"""`jezero up`, as a user runs it on a fresh machine: the demo end to end through a real MCP
client over HTTP, and the real thing on agent stores it finds by itself."""

from __future__ import annotations

import json
import os
import re
import signal
import stat
import subprocess
import time

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from jz_support import SAMPLES, jezero_command, needs_plugin, needs_samples

pytestmark = [needs_plugin("jezero-connectors-claude"), needs_plugin("jezero-connectors-codex"),
              needs_plugin("jezero-summarizers")]


@pytest.fixture
def anyio_backend():
    return "asyncio"


def read_until(proc: subprocess.Popen, marker: str, timeout: float = 120) -> str:
    seen = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            if proc.poll() is not None:
                break
            continue
        seen.append(line)
        if marker in line:
            return "".join(seen)
    raise AssertionError(f"{marker!r} never printed; got:\n{''.join(seen)}\n{proc.stderr.read() if proc.poll() is not None else ''}")


async def call(url: str, key: str, tool: str, **args):
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=30) as h:
        async with Client(streamable_http_client(url, http_client=h)) as client:
            return await client.call_tool(tool, args)


@pytest.mark.anyio
async def test_up_demo_ingests_serves_and_answers_a_real_mcp_client():
    proc = subprocess.Popen([*jezero_command(), "up", "--demo", "--port", "0"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=os.environ)
    config = None
    try:
        printed = await anyio.to_thread.run_sync(read_until, proc, "Press Ctrl+C")
        url = re.search(r"Serving the library on (http://127\.0\.0\.1:\d+/mcp)", printed)[1]
        key = re.search(r"Authorization: Bearer (jz_[\w-]+)", printed)[1]
        assert f"claude mcp add --transport http jezero {url}" in printed
        assert "[mcp_servers.jezero]" in printed and "bearer_token_env_var" in printed
        assert 'search "too many clients"' in printed  # the searches to try
        config = re.search(r"--config (\S+)", printed)[1]

        found = await call(url, key, "search", query="too many clients")
        text = json.dumps(found.structured_content)
        assert "PgBouncer" in text or "pgbouncer" in text
        # the decision that changed twice: later() from the first step reaches the newest one
        chain = await call(url, key, "search", query="analytics", project="shop")
        hits = chain.structured_content["items"]
        oldest = min(hits, key=lambda h: h["occurred_at"])
        newer = await call(url, key, "later", item_id=oldest["id"], query="analytics")
        assert newer.structured_content["matched_by"] == "subject"
        assert "goaccess" in json.dumps(newer.structured_content["items"][0])
        wrong = await anyio.to_thread.run_sync(
            lambda: httpx2.post(url, json={}, headers={"Authorization": "Bearer jz_wrong"}, timeout=10))
        assert wrong.status_code == 401
        # the printed searches work from the command line too
        cli = await anyio.to_thread.run_sync(lambda: subprocess.run(
            [*jezero_command(), "--config", config, "search", "docker system prune", "--json"],
            capture_output=True, text=True, timeout=60))
        assert "ENOSPC" in cli.stdout
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
    # The throwaway folder (library, config, key, made-up sessions) goes with the server.
    assert not os.path.exists(os.path.dirname(config))


def test_up_help_shows_its_defaults_plainly(run_cli):
    text = run_cli("up", "--help", env={"COLUMNS": "200"}, check=True).stdout
    assert "[server] host, 127.0.0.1" in text and "[server] port, 8765" in text


@needs_samples()
def test_up_finds_the_local_stores_writes_a_config_and_a_key(run_cli, isolated_home):
    env = {"CLAUDE_CONFIG_DIR": str(SAMPLES / "claude"), "CODEX_HOME": str(SAMPLES / "codex")}
    first = run_cli("up", "--no-serve", env=env, check=True)
    config = isolated_home / "config" / "jezero" / "config.toml"
    key_file = isolated_home / "data" / "jezero" / "local-client.key"
    text = config.read_text()
    assert 'type = "claude"' in text and 'type = "codex"' in text
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    key = key_file.read_text().strip()
    assert key not in text and "key_sha256" in text  # only the digest is in the config
    assert "claude-local:" in first.stderr and "codex-local:" in first.stderr

    status = json.loads(run_cli("status", "--json", env=env, check=True).stdout)
    counts = {s["name"]: s["items"] for s in status}
    assert counts["claude-local"] >= 3 and counts["codex-local"] >= 2

    hits = json.loads(run_cli("search", "claude-code-log", "--json", env=env, check=True).stdout)
    assert any(h["project"] == "claude-code-log" for h in hits)

    again = run_cli("up", "--no-serve", env=env, check=True)
    assert "wrote" not in again.stderr  # nothing new to set up
    assert config.read_text() == text and key_file.read_text().strip() == key


def test_up_without_any_store_says_so_and_serves_an_empty_library(run_cli, isolated_home):
    proc = run_cli("up", "--no-serve", check=True)
    assert "No agent store found" in proc.stderr and "claude, codex" in proc.stderr and "jezero up --demo" in proc.stderr
    assert (isolated_home / "data" / "jezero" / "library.sqlite3").exists()
