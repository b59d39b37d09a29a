"""`jezero device approve | list | revoke | rotate`, run as the real CLI: edits to the admin's
config that keep its comments, refuse what would break it, and never leave it half written."""

from __future__ import annotations

import json
import tomllib

import pytest

from jz_support import needs_plugin

DIGEST_A = "a" * 64
DIGEST_B = "b" * 64

ADMIN_CONFIG = """\
# Our team's server. Ask Bo before changing the summarizer.
[summarizer]
name = "offline"  # no model on this box

[[clients]]
name = "ci"
key_sha256 = "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
sources = ["agent-*"]
"""


@pytest.fixture
def jezero(run_cli, tmp_path):
    env = {"JEZERO_CONFIG": str(tmp_path / "config.toml"), "COLUMNS": "200"}
    return lambda *args: run_cli(*args, env=env)


@pytest.fixture
def config(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text(ADMIN_CONFIG)
    return path


@needs_plugin("jezero-connectors-inbox")
def test_approve_adds_the_device_and_its_inbox_connectors_disabled(jezero, config, isolated_home):
    r = jezero("device", "approve", "anna-laptop", DIGEST_A.upper(), "--json")
    assert r.returncode == 0, r.stderr
    agents = ["claude", "codex", "gemini", "copilot", "opencode"]
    assert json.loads(r.stdout)["connectors"] == [f"inbox-anna-laptop-{a}" for a in agents]
    text = config.read_text()
    assert text.startswith(ADMIN_CONFIG)  # the admin's lines and comments, untouched
    parsed = tomllib.loads(text)
    assert parsed["clients"][1] == {"name": "anna-laptop", "key_sha256": DIGEST_A, "sources": ["*"], "upload": True}
    inbox = isolated_home / "data" / "jezero" / "inbox" / "anna-laptop"  # beside the library
    assert parsed["connectors"] == [
        {"name": f"inbox-anna-laptop-{a}", "type": f"inbox-{a}", "enabled": False, "options": {"path": str(inbox / a)}}
        for a in agents]
    assert jezero("check-config").returncode == 0

    listed = json.loads(jezero("device", "list", "--json").stdout)
    assert [(d["name"], d["files"], d["last_upload_at"]) for d in listed] == [("anna-laptop", 0, None)]
    assert [c["enabled"] for c in listed[0]["connectors"]] == [False] * 5


def test_approve_on_a_server_without_a_config_creates_one(jezero, tmp_path):
    r = jezero("device", "approve", "laptop", DIGEST_A)
    assert r.returncode == 0, r.stderr
    assert tomllib.loads((tmp_path / "config.toml").read_text())["clients"][0]["name"] == "laptop"


def test_approve_with_limited_sources(jezero, config):
    assert jezero("device", "approve", "laptop", DIGEST_A, "--sources", "inbox-laptop-*", "--sources", "docs").returncode == 0
    assert tomllib.loads(config.read_text())["clients"][1]["sources"] == ["inbox-laptop-*", "docs"]


@pytest.mark.parametrize(("args", "message"), [
    (["approve", "ci", DIGEST_A], "exists already"),
    (["approve", "laptop", "c" * 64], "already the key of client 'ci'"),
    (["approve", "my laptop", DIGEST_A], "invalid device name"),
    (["approve", "x" * 49, DIGEST_A], "invalid device name"),
    (["approve", "laptop", "abc123"], "64 hex characters"),
    (["approve", "laptop", "g" * 64], "64 hex characters"),
    (["revoke", "nobody"], "no device named 'nobody'"),
    (["revoke", "ci"], "not a device"),
    (["rotate", "ci", DIGEST_B], "not a device"),
    (["rotate", "nobody", DIGEST_B], "no device named"),
])
def test_bad_edits_are_refused_in_one_line_and_change_nothing(jezero, config, args, message):
    r = jezero("device", *args)
    assert r.returncode == 2, r.stdout
    assert message in r.stderr and "Traceback" not in r.stderr
    assert config.read_text() == ADMIN_CONFIG


def test_rotate_replaces_the_key_and_revoke_removes_the_device(jezero, config):
    assert jezero("device", "approve", "laptop", DIGEST_A).returncode == 0
    assert jezero("device", "rotate", "laptop", "c" * 64).returncode == 2  # ci's key
    r = jezero("device", "rotate", "laptop", DIGEST_B)
    assert r.returncode == 0, r.stderr
    clients = tomllib.loads(config.read_text())["clients"]
    assert [(c["name"], c["key_sha256"]) for c in clients] == [("ci", "c" * 64), ("laptop", DIGEST_B)]

    r = jezero("device", "revoke", "laptop")
    assert r.returncode == 0, r.stderr
    parsed = tomllib.loads(config.read_text())
    assert [c["name"] for c in parsed["clients"]] == ["ci"]
    # What it uploaded can still be ingested: its connectors stay.
    assert {c["name"] for c in parsed.get("connectors", [])} <= {
        f"inbox-laptop-{a}" for a in ("claude", "codex", "gemini", "copilot", "opencode")}
    assert config.read_text().startswith(ADMIN_CONFIG.split("[[clients]]")[0])
    assert jezero("device", "revoke", "laptop").returncode == 2
    assert jezero("check-config").returncode == 0


def test_a_broken_config_is_reported_not_edited(jezero, config):
    config.write_text(ADMIN_CONFIG + "\n[storage]\nunknown_key = 1\n")
    before = config.read_text()
    r = jezero("device", "approve", "laptop", DIGEST_A)
    assert r.returncode == 2 and "unknown key" in r.stderr
    assert config.read_text() == before


def test_list_shows_no_device_plainly(jezero, config):
    r = jezero("device", "list", "--pretty")
    assert r.returncode == 0 and "no device approved yet" in r.stdout
