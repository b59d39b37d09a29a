"""Each first-party connector type declares its options: `check-config` names a misspelt or a
mistyped one with the file and the key, before anything runs, and `jezero run` stops on it with
a one-line error per problem instead of a traceback."""

from __future__ import annotations

import json

import pytest

from jz_support import needs_plugin

TYPES = [
    pytest.param("claude", "", marks=needs_plugin("jezero-connectors-claude")),
    pytest.param("codex", "", marks=needs_plugin("jezero-connectors-codex")),
    pytest.param("gemini", "", marks=needs_plugin("jezero-connectors-gemini")),
    pytest.param("copilot", "", marks=needs_plugin("jezero-connectors-copilot")),
    pytest.param("opencode", "", marks=needs_plugin("jezero-connectors-opencode")),
    pytest.param("inbox-claude", "", marks=needs_plugin("jezero-connectors-inbox")),
    pytest.param("inbox-codex", "", marks=needs_plugin("jezero-connectors-inbox")),
]
# The types that read an agent's own store: an optional `path`, so a good one passes.
AGENT_TYPES = [pytest.param(p.values[0], marks=p.marks) for p in TYPES if not p.values[0].startswith("inbox")]


def write(tmp_path, type_: str, options: str):
    path = tmp_path / "config.toml"
    path.write_text(f'[storage]\npath = "{tmp_path / "lib.sqlite3"}"\n\n'
                    f'[[connectors]]\nname = "src"\ntype = "{type_}"\noptions = {{ {options} }}\n')
    return path


@pytest.mark.parametrize("type_,required", TYPES)
def test_a_misspelt_option_is_named_with_the_file_and_the_key(run_cli, tmp_path, type_, required):
    path = write(tmp_path, type_, f'{required}pth = "/somewhere"')
    proc = run_cli("--config", str(path), "check-config")
    assert proc.returncode == 1
    assert str(path) in proc.stderr
    assert "connectors[0].options.pth: unknown option; did you mean 'path'?" in proc.stderr
    problems = json.loads(run_cli("--config", str(path), "check-config", "--json").stdout)["problems"]
    assert {"key": "connectors[0].options.pth", "message": "unknown option; did you mean 'path'?"} in problems


@pytest.mark.parametrize("type_,required", TYPES)
def test_a_mistyped_path_is_named_and_its_value_never_printed(run_cli, tmp_path, type_, required):
    path = write(tmp_path, type_, f"{required}path = 31337")
    proc = run_cli("--config", str(path), "check-config")
    assert proc.returncode == 1
    assert "connectors[0].options.path: must be a folder path" in proc.stderr
    assert "31337" not in proc.stderr


@needs_plugin("jezero-connectors-inbox")
def test_a_missing_required_option_is_named(run_cli, tmp_path):
    proc = run_cli("--config", str(write(tmp_path, "inbox-codex", "")), "check-config")
    assert proc.returncode == 1 and "connectors[0].options.path: Field required" in proc.stderr


@pytest.mark.parametrize("type_", AGENT_TYPES)
def test_run_stops_before_anything_runs_with_one_line_not_a_traceback(run_cli, tmp_path, type_):
    path = write(tmp_path, type_, 'pth = "/somewhere"')
    proc = run_cli("--config", str(path), "run")
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "connectors[0].options.pth: unknown option; did you mean 'path'?" in proc.stderr
    assert not (tmp_path / "lib.sqlite3").exists()  # nothing ran


@pytest.mark.parametrize("type_", AGENT_TYPES)
def test_good_options_pass(run_cli, tmp_path, type_):
    proc = run_cli("--config", str(write(tmp_path, type_, f'path = "{tmp_path}"')), "check-config")
    assert proc.returncode == 0, proc.stderr
