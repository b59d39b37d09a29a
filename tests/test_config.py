"""The config: every planted mistake found in one run, secrets never printed, .env beside it."""

from __future__ import annotations

import json

import pytest

from jz_support import needs_plugin
from jezero import config

BAD = """
[storage]
tokenizer = "trigram remove_diacritics 1"
colour = "blue"

[search]
candidate_pool = 3
recency_weight = 2
default_limit = 80

[summarizer]
name = "llm"
api_key_env = "JEZERO_TEST_MISSING_KEY"

[[connectors]]
name = "claude-local"
type = "claud"
options = { path = "/x", api_token = "sk-live-SUPERSECRETVALUE123" }

[[connectors]]
name = "claude-local"
type = "cursor"

[[clients]]
name = "laptop"
key_sha256 = "not-a-digest"
"""


@needs_plugin("jezero-summarizers")
def test_check_config_finds_every_planted_mistake_at_once(run_cli, tmp_path):
    path = tmp_path / "config.toml"
    path.write_text(BAD)
    proc = run_cli("--config", str(path), "check-config", "--json")
    assert proc.returncode == 1
    problems = {(p["key"], p["message"].split(" (")[0][:40]) for p in json.loads(proc.stdout)["problems"]}
    keys = [k for k, _ in problems]
    for expected in ("storage.colour", "search.candidate_pool", "search.recency_weight", "search.default_limit",
                     "summarizer.api_key_env", "connectors[0].options", "connectors[1].name", "clients[0].key_sha256"):
        assert expected in keys, expected
    messages = json.loads(proc.stdout)["problems"]
    by_key = {}
    for p in messages:
        by_key.setdefault(p["key"], []).append(p["message"])
    assert any("did you mean 'claude'" in m for m in by_key["connectors[0].type"])
    assert any("planned but not built" in m for m in by_key["connectors[1].type"])
    assert "SUPERSECRETVALUE" not in proc.stdout + proc.stderr
    human = run_cli("--config", str(path), "check-config")
    assert human.returncode == 1 and str(path) in human.stderr and "storage.colour: unknown key" in human.stderr
    assert "SUPERSECRETVALUE" not in human.stdout + human.stderr


def test_env_file_beside_the_config_and_the_environment_wins(tmp_path, monkeypatch):
    path = tmp_path / "config.toml"
    path.write_text('[summarizer]\nname = "offline"\napi_key_env = "JZ_TEST_KEY"\n')
    (tmp_path / ".env").write_text("JZ_TEST_KEY=from-dotenv\n")
    monkeypatch.delenv("JZ_TEST_KEY", raising=False)
    assert config.load(path).summarizer.api_key() == "from-dotenv"
    monkeypatch.setenv("JZ_TEST_KEY", "from-env")
    assert config.load(path).summarizer.api_key() == "from-env"


def test_locations(tmp_path, monkeypatch, isolated_home):
    assert config.resolve_config_path() == isolated_home / "config" / "jezero" / "config.toml"
    monkeypatch.setenv("JEZERO_CONFIG", str(tmp_path / "env.toml"))
    assert config.resolve_config_path() == tmp_path / "env.toml"
    assert config.resolve_config_path(tmp_path / "flag.toml") == tmp_path / "flag.toml"
    cfg = config.load()  # a missing default file is fine: everything has a default
    assert cfg.library_path() == isolated_home / "data" / "jezero" / "library.sqlite3"


def test_relative_library_path_is_relative_to_the_config(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text('[storage]\npath = "lib/library.sqlite3"\n')
    assert config.load(path).library_path() == tmp_path / "lib" / "library.sqlite3"


def test_invalid_toml_is_a_clear_error(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text("[storage\n")
    with pytest.raises(config.ConfigError, match="not valid TOML"):
        config.load(path)


def test_an_explicit_missing_file_is_an_error(tmp_path):
    with pytest.raises(config.ConfigError, match="file not found"):
        config.load(tmp_path / "nope.toml")


def test_source_globs_are_case_sensitive():
    assert config.source_allowed("agent-1", ["agent-*"])
    assert not config.source_allowed("Agent-1", ["agent-*"])
    assert not config.source_allowed("other", [])


@needs_plugin("jezero-connectors-claude")
def test_check_config_warns_about_a_client_key_that_matches_no_connector(run_cli, tmp_path):
    """A key whose sources match no connector answers every search with nothing, and nothing said
    why: check-config says so (a warning: the config is still ok)."""
    path = tmp_path / "config.toml"
    digest = "0" * 64
    path.write_text(f'[storage]\npath = "{tmp_path / "lib.sqlite3"}"\n'
                    f'[[connectors]]\nname = "claude-local"\ntype = "claude"\n'
                    f'[[clients]]\nname = "laptop"\nkey_sha256 = "{digest}"\nsources = ["claude-*"]\n'
                    f'[[clients]]\nname = "typo"\nkey_sha256 = "{digest[:-1]}1"\nsources = ["cluade-*"]\n')
    proc = run_cli("--config", str(path), "check-config", "--json")
    assert proc.returncode == 0, proc.stderr
    warnings = json.loads(proc.stdout)["warnings"]
    assert len(warnings) == 1 and warnings[0].startswith("clients.typo: its sources ['cluade-*']"), warnings
    human = run_cli("--config", str(path), "check-config")
    assert human.returncode == 0 and "warning: clients.typo" in human.stderr and "laptop" not in human.stderr


@pytest.mark.parametrize("section, value", [("semantic", '"yes"'), ("semantic", '"no"'), ("semantic", "1")])
def test_a_switch_is_a_toml_boolean(tmp_path, section, value):
    """`enabled = "no"` was read as pydantic reads strings (False) and `"yes"` as True, `1` as
    True: a switch is a TOML boolean, anything else a problem naming the key, and nothing is
    turned on or off by a guess."""
    path = tmp_path / "config.toml"
    path.write_text(f"[{section}]\nenabled = {value}\n")
    with pytest.raises(config.ConfigError) as e:
        config.load(path)
    assert [p.key for p in e.value.problems] == [f"{section}.enabled"], e.value.problems
    path.write_text(f'[[connectors]]\nname = "a"\ntype = "claude"\nenabled = {value}\n')
    with pytest.raises(config.ConfigError) as e:
        config.load(path, check_plugins=False)
    assert [p.key for p in e.value.problems] == ["connectors[0].enabled"], e.value.problems
    path.write_text(f'[[clients]]\nname = "a"\nkey_sha256 = "{"0" * 64}"\nupload = {value}\n')
    with pytest.raises(config.ConfigError) as e:
        config.load(path)
    assert [p.key for p in e.value.problems] == ["clients[0].upload"], e.value.problems
    path.write_text("[semantic]\nenabled = false\n")
    assert config.load(path).semantic.enabled is False


def test_check_config_warns_about_an_engine_no_plugin_gives(run_cli, tmp_path):
    """`[search] engine` naming no installed engine (a typo): every search quietly used FTS5 and
    check-config said ok; now it warns, with the closest name (the config is still ok: the
    commands fall back to FTS5 and say so)."""
    path = tmp_path / "config.toml"
    path.write_text(f'[storage]\npath = "{tmp_path / "lib.sqlite3"}"\n[search]\nengine = "fts55"\n')
    proc = run_cli("--config", str(path), "check-config", "--json")
    assert proc.returncode == 0, proc.stderr
    warnings = json.loads(proc.stdout)["warnings"]
    assert len(warnings) == 1 and warnings[0].startswith("search.engine: no installed plugin gives the engine 'fts55'"), warnings
    assert "did you mean 'fts5'?" in warnings[0]
    path.write_text(f'[storage]\npath = "{tmp_path / "lib.sqlite3"}"\n[search]\nengine = "fts5"\n')
    assert json.loads(run_cli("--config", str(path), "check-config", "--json").stdout)["warnings"] == []
