"""The plugin host: entry points loaded one by one, broken plugins reported by name, misspelt
hooks caught, the environment switches, and `jezero plugins`."""

from __future__ import annotations

import json
import textwrap

import pytest

from jz_support import needs_plugin
from jezero import hookimpl, plugins

FIRST_PARTY = {"jezero_connectors_claude", "jezero_connectors_codex", "jezero_connectors_inbox", "jezero_summarizers"}


def make_dist(site, name: str, module_source: str, version: str = "0.3.0"):
    """A real installed distribution (dist-info + module) in a folder put on PYTHONPATH."""
    (site / f"{name}.py").write_text(textwrap.dedent(module_source))
    info = site / f"{name}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(f"[jezero.connectors]\n{name} = {name}\n")


@pytest.fixture
def site(tmp_path):
    folder = tmp_path / "site"
    folder.mkdir()
    make_dist(folder, "jz_broken", "raise ImportError('jz_broken needs libfoo, which is missing')\n")
    make_dist(folder, "jz_misspelt", """
        from jezero import hookimpl

        @hookimpl
        def register_conector_types(register):
            pass
    """)
    make_dist(folder, "jz_good", """
        from jezero import hookimpl

        @hookimpl
        def register_connector_types(register):
            register("goodtype", lambda options, context: None, description="a good one")
    """, version="1.2.3")
    return folder


def test_broken_plugins_are_reported_by_name_and_the_rest_load(run_cli, site):
    proc = run_cli("plugins", "--json", env={"PYTHONPATH": str(site)}, check=True)
    listed = {p["name"]: p for p in json.loads(proc.stdout)}
    assert "ImportError: jz_broken needs libfoo" in listed["jz_broken"]["error"]
    assert "unknown hook 'register_conector_types'" in listed["jz_misspelt"]["error"]
    assert listed["jz_good"]["version"] == "1.2.3"
    assert listed["jz_good"]["hooks"] == ["register_connector_types"]
    assert "error" not in listed["jz_good"]


@needs_plugin("jezero-connectors-claude")
def test_first_party_plugins_are_listed_with_versions(run_cli):
    proc = run_cli("plugins", "--json", check=True)
    listed = {p["name"]: p for p in json.loads(proc.stdout)}
    assert FIRST_PARTY <= set(listed)
    for name in FIRST_PARTY:
        assert listed[name]["distribution"] == name.replace("_", "-")
        assert listed[name]["version"] == "0.1.0"
        assert "error" not in listed[name]


def test_plugins_filters_and_builtins(run_cli):
    everything = json.loads(run_cli("plugins", "--all", "--json", check=True).stdout)
    assert any(p["builtin"] for p in everything)
    only = json.loads(run_cli("plugins", "--all", "--hook", "resolve_project", "--json", check=True).stdout)
    assert only and all("resolve_project" in p["hooks"] for p in only)


def test_env_switch_limits_which_plugins_load(run_cli, site):
    env = {"PYTHONPATH": str(site), "JEZERO_PLUGINS": "jz_good"}
    names = {p["name"] for p in json.loads(run_cli("plugins", "--json", env=env, check=True).stdout)}
    assert names == {"jz_good"}
    none = json.loads(run_cli("plugins", "--json", env={"JEZERO_PLUGINS": ""}, check=True).stdout)
    assert none == []


def test_env_switch_traces_hook_calls(run_cli, tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text('[[connectors]]\nname = "x"\ntype = "gemini"\n')
    proc = run_cli("--config", str(cfg), "check-config", env={"JEZERO_TRACE_HOOKS": "1"})
    assert "jezero hook: register_connector_types" in proc.stderr


def test_duplicate_names_are_refused(register_plugin):
    class Twice:
        @hookimpl
        def register_redactors(self, register):
            register("builtin", lambda text: text)

    register_plugin(Twice(), "twice")
    with pytest.raises(plugins.DuplicateName, match="'builtin' registered by"):
        plugins.redactors()


def test_the_manager_is_built_once_and_lazily():
    plugins.reset()
    assert plugins._pm is None
    first = plugins.get_plugin_manager()
    assert plugins.get_plugin_manager() is first
