"""`jezero up --demo` with the core and one connector distribution: the connector writes every
demo session in its own agent's format, so the demo says the same whichever one is installed.
JEZERO_PLUGINS limits the loaded plugins as a user's install would (the offline summarizer
comes from jezero-summarizers)."""

from __future__ import annotations

import json
import os
import re
import shutil

import pytest

from jz_support import needs_plugin

@needs_plugin("jezero-summarizers")
@pytest.mark.parametrize("connector", [
    pytest.param("jezero_connectors_claude", marks=needs_plugin("jezero-connectors-claude")),
    pytest.param("jezero_connectors_codex", marks=needs_plugin("jezero-connectors-codex")),
    pytest.param("jezero_connectors_gemini", marks=needs_plugin("jezero-connectors-gemini")),
    pytest.param("jezero_connectors_copilot", marks=needs_plugin("jezero-connectors-copilot")),
    pytest.param("jezero_connectors_opencode", marks=needs_plugin("jezero-connectors-opencode")),
])
def test_up_demo_works_with_any_one_connector(run_cli, connector):
    env = {"JEZERO_PLUGINS": f"{connector},jezero_summarizers"}
    proc = run_cli("up", "--demo", "--no-serve", env=env, check=True)
    config = re.search(r"--config (\S+)", proc.stdout)[1]
    try:
        kind = connector.rsplit("_", 1)[1]
        assert f"{kind}-local: 8 new or updated item(s) from 8 session(s)" in proc.stderr
        assert f'type = "{kind}"' in open(config).read()

        def cli(*args):
            return json.loads(run_cli("--config", config, *args, "--json", env=env, check=True).stdout)

        # the error and its fix
        assert "PgBouncer" in json.dumps(cli("search", "too many clients"))
        assert "ENOSPC" in json.dumps(cli("search", "docker system prune"))
        # the decision that changed twice: later() from the first step reaches the newest one
        hits = cli("search", "analytics", "--project", "shop")
        first = min(hits, key=lambda h: h["occurred_at"])
        assert "goaccess" in json.dumps(cli("later", str(first["id"]), "analytics"))
    finally:
        shutil.rmtree(os.path.dirname(config), ignore_errors=True)


def test_up_demo_with_no_connector_says_what_to_install(run_cli):
    proc = run_cli("up", "--demo", "--no-serve", env={"JEZERO_PLUGINS": ""})
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "no installed connector type can write demo sessions" in proc.stderr and "jezero[all]" in proc.stderr
