"""A key's `sources` glob written for one device's inbox (`inbox-anna-*`) that also matches the
inbox of another device whose name starts with it (`anna-laptop`: device names may hold '-'):
the key meant for anna's own sessions reads anna-laptop's as well.

Before: check-config said "ok" and `jezero device approve anna-laptop` said nothing
(test_check_config_warns_of_a_glob_that_reaches_another_device failed: no warning), while the
server handed anna's key the laptop's items. Now both warn, naming the other device and the
exact sources to list instead; a glob that reaches no other device (or `*`) says nothing."""

from __future__ import annotations

import json
import subprocess

from jz_support import jezero_command

A, B = "a" * 64, "b" * 64


def cli(config, *args):
    return subprocess.run([*jezero_command(), "--config", str(config), *args], capture_output=True, text=True, timeout=120)


def write(tmp_path, clients: str):
    config = tmp_path / "config.toml"
    config.write_text(f'[storage]\npath = "{tmp_path / "library.sqlite3"}"\n' + clients)
    return config


def client(name: str, digest: str, sources: list[str]) -> str:
    return f'[[clients]]\nname = "{name}"\nkey_sha256 = "{digest}"\nsources = {json.dumps(sources)}\nupload = true\n'


def test_check_config_warns_of_a_glob_that_reaches_another_device(tmp_path):
    config = write(tmp_path, client("anna", A, ["inbox-anna-*"]) + client("anna-laptop", B, ["inbox-anna-laptop-*"]))
    checked = cli(config, "check-config", "--json")
    assert checked.returncode == 0, checked.stderr
    warnings = json.loads(checked.stdout)["warnings"]
    [warning] = [w for w in warnings if "names device" in w]
    assert "clients.anna" in warning and "anna-laptop" in warning and "'inbox-anna-claude'" in warning, warning
    assert warning.startswith("clients.anna:")  # anna-laptop's glob reaches no other device


def test_approve_says_so_when_a_new_device_falls_under_an_older_glob(tmp_path):
    config = write(tmp_path, client("anna", A, ["inbox-anna-*"]))
    assert "names device" not in cli(config, "check-config").stderr
    approved = cli(config, "device", "approve", "anna-laptop", B)
    assert approved.returncode == 0, approved.stderr
    assert "warning: clients.anna:" in approved.stderr and "anna-laptop" in approved.stderr, approved.stderr


def test_globs_meant_for_every_device_say_nothing(tmp_path):
    config = write(tmp_path, client("anna", A, ["*"]) + client("anna-laptop", B, ["inbox-*", "claude-*"]))
    checked = json.loads(cli(config, "check-config", "--json").stdout)
    assert not any("names device" in w for w in checked["warnings"]), checked["warnings"]
