"""`jezero new-token` and `jezero serve`, run as real subprocesses."""

from __future__ import annotations

import hashlib
import json
import os
import re
import socket
import subprocess
import time
import tomllib

import httpx2
import pytest

from jezero.store import Store
from jz_support import jezero_command


@pytest.fixture
def jezero(run_cli, tmp_path):
    """The real `jezero` command, with $JEZERO_CONFIG at tmp_path/config.toml and a wide terminal
    (so the key is printed on one line)."""
    env = {"JEZERO_CONFIG": str(tmp_path / "config.toml"), "COLUMNS": "200"}
    return lambda *args: run_cli(*args, env=env)


def test_new_token_prints_a_key_and_its_digest(jezero, tmp_path):
    r = jezero("new-token", "laptop")
    assert r.returncode == 0, r.stderr
    key = re.search(r"key \(shown once, store it now\): (jz_\S+)", r.stdout).group(1)
    assert len(key) >= 40
    block = r.stdout[r.stdout.index("[[clients]]"):]
    parsed = tomllib.loads(block)["clients"][0]
    assert parsed == {"name": "laptop", "key_sha256": hashlib.sha256(key.encode()).hexdigest(), "sources": ["*"]}
    assert not (tmp_path / "config.toml").exists()  # nothing written without --write

    again = jezero("new-token", "laptop")
    assert re.search(r"(jz_\S+)", again.stdout).group(1) != key  # a new random key each time


def test_new_token_json_with_sources_and_upload(jezero):
    r = jezero("new-token", "ci", "--sources", "agent-*", "--sources", "codex-*", "--upload", "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["key_sha256"] == hashlib.sha256(data["key"].encode()).hexdigest()
    assert data["key"].startswith("jz_")
    client = tomllib.loads(data["toml"])["clients"][0]
    assert client == {"name": "ci", "key_sha256": data["key_sha256"], "sources": ["agent-*", "codex-*"], "upload": True}


def test_new_token_write_appends_to_the_config(jezero, tmp_path):
    config = tmp_path / "config.toml"
    config.write_text('[server]\nport = 9999\n')
    r = jezero("new-token", "laptop", "--write", "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["written_to"] == str(config)
    text = config.read_text()
    assert data["key"] not in text  # only the digest is stored
    parsed = tomllib.loads(text)
    assert parsed["server"]["port"] == 9999
    assert parsed["clients"] == [{"name": "laptop", "key_sha256": data["key_sha256"], "sources": ["*"]}]

    second = jezero("new-token", "ci", "--sources", "agent-*", "--write")
    assert second.returncode == 0, second.stderr
    assert [c["name"] for c in tomllib.loads(config.read_text())["clients"]] == ["laptop", "ci"]

    duplicate = jezero("new-token", "laptop", "--write")
    assert duplicate.returncode == 2 and "already" in duplicate.stderr
    assert len(tomllib.loads(config.read_text())["clients"]) == 2


def test_new_token_refuses_a_bad_name(jezero):
    r = jezero("new-token", "my laptop!")
    assert r.returncode == 2 and "invalid client name" in r.stderr


def test_serve_refuses_an_unknown_client(jezero, tmp_path):
    (tmp_path / "config.toml").write_text("")
    r = jezero("serve", "--transport", "stdio", "--client", "nobody")
    assert r.returncode == 2 and "no client named 'nobody'" in r.stderr


def test_serve_http_with_a_key_from_new_token(jezero, tmp_path):
    library = tmp_path / "library.sqlite3"
    Store(library).close()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    (tmp_path / "config.toml").write_text(f'[storage]\npath = "{library}"\n\n[server]\nport = {port}\n')
    key = json.loads(jezero("new-token", "laptop", "--write", "--json").stdout)["key"]
    proc = subprocess.Popen([*jezero_command(), "serve", "--log-level", "warning"],
                            env={**os.environ, "JEZERO_CONFIG": str(tmp_path / "config.toml")},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx2.get(base + "/health", timeout=1).status_code == 200:
                    break
            except httpx2.TransportError:
                pass
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "server did not start"
            time.sleep(0.1)
        assert httpx2.get(base + "/api/v1/overview").status_code == 401
        ok = httpx2.get(base + "/api/v1/overview", headers={"Authorization": f"Bearer {key}"})
        assert ok.status_code == 200 and ok.json()["total"] == 0
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=15)
    assert f"MCP at {base}/mcp" in err


def test_serve_with_workers_takes_new_and_revoked_keys_in_every_process(jezero, tmp_path):
    """`jezero serve --workers 2`: two processes share the port; a key added with new-token
    --write works on every connection (whichever process takes it) within the reload time, and
    once its client is removed from the config, no process accepts it."""
    library = tmp_path / "library.sqlite3"
    Store(library).close()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = tmp_path / "config.toml"
    config.write_text(f'[storage]\npath = "{library}"\n\n[server]\nport = {port}\n')
    first = json.loads(jezero("new-token", "laptop", "--write", "--json").stdout)["key"]
    proc = subprocess.Popen([*jezero_command(), "serve", "--workers", "2", "--log-level", "warning"],
                            env={**os.environ, "JEZERO_CONFIG": str(config)},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"

    def statuses(key: str, n: int = 12) -> set[int]:
        # A new connection each time, so the kernel spreads them over the processes.
        return {httpx2.get(base + "/api/v1/overview", headers={"Authorization": f"Bearer {key}",
                                                               "Connection": "close"}).status_code
                for _ in range(n)}

    def eventually(key: str, expected: set[int]) -> None:
        deadline = time.monotonic() + 30
        while statuses(key) != expected:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, f"not {expected} for every process"
            time.sleep(0.2)

    try:
        # (generous: two new processes each import the whole server, on a busy shared machine)
        deadline = time.monotonic() + 240
        while True:
            try:
                if httpx2.get(base + "/health", timeout=1).status_code == 200:
                    break
            except httpx2.TransportError:
                pass
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "server did not start"
            time.sleep(0.2)
        children = open(f"/proc/{proc.pid}/task/{proc.pid}/children").read().split()
        assert len(children) >= 2  # the supervisor's worker processes
        eventually(first, {200})
        second = json.loads(jezero("new-token", "ci", "--write", "--json").stdout)["key"]
        eventually(second, {200})
        text = config.read_text()
        config.write_text(text[:text.index("[[clients]]\nname = \"ci\"")])
        eventually(second, {401})
        assert statuses(first) == {200}
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=90)
    assert "with 2 processes" in err
