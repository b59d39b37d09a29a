"""A cold `jezero search` loads only what it uses: an agent that shells out pays for it on every
call. Checked by looking at what a real `jezero` process imported, never by timing it (the
figures are in benchmarks/cli)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from jezero.store import Store

# Never needed to read the library: the LLM client, the MCP SDK and its web stack, the plugin host
# and every plugin, and rich for output that is JSON.
NOT_FOR_SEARCH = ("litellm", "mcp", "starlette", "uvicorn", "pluggy", "rich", "jezero.plugins", "jezero.ingest",
                  "jezero_connectors_claude", "jezero_connectors_codex", "jezero_connectors_inbox",
                  "jezero_summarizers")


def imported_by(tmp_path, *args: str) -> set[str]:
    config = tmp_path / "config.toml"
    config.write_text(f'[storage]\npath = "{tmp_path / "lib.sqlite3"}"\n\n[summarizer]\nname = "llm"\nmodel = "x/y"\n\n'
                      '[[connectors]]\nname = "claude-local"\ntype = "claude"\n\n'
                      '[[connectors]]\nname = "codex-local"\ntype = "codex"\noptions = { path = "/nowhere" }\n')
    Store(tmp_path / "lib.sqlite3").close()
    out = tmp_path / "modules.json"
    probe = (f"import atexit, json, sys\nsys.argv = ['jezero', '--config', {str(config)!r}, *{list(args)!r}]\n"
             f"atexit.register(lambda: open({str(out)!r}, 'w').write(json.dumps(sorted(sys.modules))))\n"
             "from jezero.cli import main\nmain()\n")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return set(json.loads(out.read_text()))


def loaded(modules: set[str], name: str) -> bool:
    return name in modules or any(m.startswith(name + ".") for m in modules)


@pytest.mark.parametrize("args", [("search", "too many clients", "--json"), ("search", "too many clients"),
                                  ("timeline", "--project", "shop", "--json")])
def test_reading_the_library_imports_no_plugin_no_llm_and_no_mcp(tmp_path, args):
    modules = imported_by(tmp_path, *args)
    assert "jezero.query" in modules  # the probe did run the command
    assert [m for m in NOT_FOR_SEARCH if loaded(modules, m) and not (m == "rich" and "--json" not in args)] == []


def test_check_config_still_loads_the_plugins_it_checks(tmp_path):
    pytest.importorskip("jezero_connectors_claude")
    modules = imported_by(tmp_path, "check-config")
    assert loaded(modules, "jezero_connectors_claude") and not loaded(modules, "litellm")
