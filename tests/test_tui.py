"""The app, driven by Textual's pilot against a real `jezero serve` on 127.0.0.1 over the demo
library: every screen, through the same MCP tools and key as an agent, plus the overview."""

from __future__ import annotations

import os
import re
import subprocess

import pytest
from device_support import CLIENT, Device, wait_serving
from jz_support import jezero_command, needs_plugin

from jezero.store import Store

pytestmark = [needs_plugin("jezero-connectors-claude"), needs_plugin("jezero-connectors-codex"), pytest.mark.anyio]


@pytest.fixture
def anyio_backend():
    return "asyncio"


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The demo library (as `up --demo` builds it) served by `jezero serve` in a subprocess, and a
    laptop that uploads into its inbox from a Claude Code plugin carrying an older client core."""
    from jezero import config as config_mod
    from jezero import up as up_mod
    from jezero.devices import approve
    from jezero.ingest.runner import run_connectors

    folder = tmp_path_factory.mktemp("demo")
    config_path = folder / "config.toml"
    setup = up_mod.prepare(config_path, demo_folder=folder)
    with config_path.open("a") as f:  # a second Claude Code store, whose last run failed
        f.write(f'\n[[connectors]]\nname = "broken"\ntype = "claude"\noptions = {{ path = "{folder}/gone" }}\n')
    cfg = config_mod.load(config_path)
    run_connectors(cfg)
    with Store(cfg.library_path()) as store:
        store.record_run("broken", error="OSError: the store's folder was unmounted", warnings=[], ok=False)
    port = free_port()
    laptop = Device(folder / "laptop")
    made = laptop.client("init", "--server", f"http://127.0.0.1:{port}", "--device", "laptop")
    assert made.returncode == 0, made.stderr
    approve(config_path, "laptop", made.stdout.split()[-1])
    session = laptop.claude / "projects" / "-work-shop" / "0b5e6d1c-0000-4000-8000-000000000001.jsonl"
    session.parent.mkdir(parents=True)
    session.write_text('{"type":"user","cwd":"/work/shop"}\n')
    plugin = folder / "claude-plugin"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text('{"name": "jezero", "version": "0.1.0"}')
    core = re.sub(r'^CORE_VERSION = "[^"]+"$', 'CORE_VERSION = "0.1.0"', CLIENT.read_text(), flags=re.M)
    (plugin / "jezero_client.py").write_text(core)
    proc = subprocess.Popen([*jezero_command(), "--config", str(config_path), "serve", "--port", str(port),
                             "--log-level", "warning"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env=os.environ)
    url = f"http://127.0.0.1:{port}"
    try:  # the server is stopped however the set-up or the tests end (a failed set-up left it running)
        wait_serving(url, proc)
        uploaded = laptop.client("upload", "--wait", script=plugin / "jezero_client.py")
        log = laptop.home / "upload.log"
        assert uploaded.returncode == 0, (uploaded.stderr, log.read_text() if log.exists() else "no upload.log",
                                          proc.poll())
        yield url + "/mcp", setup.key
    finally:
        proc.terminate()
        proc.wait(15)


async def until(pilot, check, what: str, rounds: int = 400):
    """Let the app work until check() holds (the app talks to a real server in the background)."""
    for _ in range(rounds):
        await pilot.pause(0.05)
        if check():
            return
    raise AssertionError(f"never happened: {what}\n{pilot.app.screen.query_one('#status').render()}\n"
                         + "\n".join(str(t.render()) for t in pilot.app.screen.query("Static")))


def text_of(app, selector: str) -> str:
    return str(app.screen.query_one(selector).render())


def table_text(app, selector: str) -> str:
    from textual.widgets import DataTable

    t = app.screen.query_one(selector, DataTable)
    return "\n".join(" | ".join(str(c) for c in t.get_row_at(i)) for i in range(t.row_count))


async def test_walk_every_screen(served):
    from jezero.tui.app import JezeroApp
    from jezero.tui.remote import Remote

    url, key = served
    app = JezeroApp(Remote(url, key))
    async with app.run_test(size=(140, 45)) as pilot:
        # Home: counts per source and project from the overview, health of each connector
        await until(pilot, lambda: "claude-local" in table_text(app, "#sources"), "home sources")
        sources = table_text(app, "#sources")
        assert "codex-local" in sources and "OK" in sources
        assert "broken" in sources and "FAILING" in sources
        assert {"shop", "billing-api", "infra"} <= set(table_text(app, "#projects").split())
        assert "8 items" in text_of(app, "#totals") and "need attention" in text_of(app, "#totals")
        assert "1 device(s), 1 of them uploading; 1 OUTDATED" in text_of(app, "#totals")
        assert "Items per day" in text_of(app, "#per-day")

        # Search: live as you type, explanation on demand, later one key away, an item in full
        await pilot.press("s")
        await pilot.press(*"too many clients")
        await until(pilot, lambda: "too many connections" in table_text(app, "#results"), "live search results")
        assert "PgBouncer" in text_of(app, "#detail")  # the highlighted hit's summary
        await pilot.press("escape", "e")
        await until(pilot, lambda: "Score:" in text_of(app, "#detail"), "score explanation")
        await pilot.press("l")
        await until(pilot, lambda: "NEWER" in text_of(app, "#detail"), "later")
        await pilot.press("enter")
        await until(pilot, lambda: "ATOMS" in text_of(app, "#item"), "item in full")
        assert "too many clients" in text_of(app, "#item")
        await pilot.press("o")
        await until(pilot, lambda: "ORIGINAL (redacted)" in text_of(app, "#item"), "original")
        await pilot.press("escape")
        assert app.screen.query("#results")

        # Timeline: a project's items by date, newest first
        await pilot.press("t")
        await until(pilot, lambda: table_text(app, "#items"), "timeline items")
        first = table_text(app, "#items").splitlines()
        dates = [line.split(" | ")[1] for line in first]
        assert dates == sorted(dates, reverse=True)
        await pilot.press("down")  # the next project or source
        await until(pilot, lambda: table_text(app, "#items").splitlines() != first, "another timeline")

        # Agents: each agent that brings items in, with its last run and health
        await pilot.press("a")
        await until(pilot, lambda: "codex-local" in table_text(app, "#agents"), "agents")
        agents = table_text(app, "#agents")
        assert "server | claude | claude-local" in agents and "FAILING" in agents
        # ... and the laptop that uploaded through the inbox, its plugin's older core flagged in words
        laptop = next(line for line in agents.splitlines() if line.startswith("laptop | claude"))
        assert "inbox-laptop-claude" in laptop and "0.1.0 | claude/0.1.0" in laptop and "OUTDATED" in laptop
        assert "OUTDATED laptop/claude" in text_of(app, "#agents-note")

        # Agent view: what the hooks inject for a project and a first message
        await pilot.press("v")
        await until(pilot, lambda: "AT SESSION START" in text_of(app, "#injected"), "agent view")
        assert "Newest items of project billing-api" in text_of(app, "#injected")
        await pilot.press("down")  # projects, most items first: billing-api, shop, infra
        await until(pilot, lambda: "Newest items of project shop" in text_of(app, "#injected"), "shop's items")
        await pilot.press("enter")  # the chosen project; on to the first message
        await pilot.press(*"remove the analytics script from the shop")
        await until(pilot, lambda: "Possibly related past work" in text_of(app, "#injected"), "first-prompt items")
        injected = text_of(app, "#injected")
        assert "analytics" in injected.split("ON THE FIRST PROMPT")[1].lower()
        await pilot.press("h")  # typed into the message, not a screen switch
        await pilot.press("escape")
        await pilot.press("q")


async def test_a_wrong_key_is_one_line_not_a_traceback(served):
    from jezero.tui.app import JezeroApp
    from jezero.tui.remote import Remote

    url, _ = served
    app = JezeroApp(Remote(url, "jz_wrong"))
    async with app.run_test(size=(120, 30)) as pilot:
        await until(pilot, lambda: "error:" in text_of(app, "#status"), "an error line")
        assert "401" in text_of(app, "#status")


def test_the_cli_does_not_load_the_app_until_asked():
    import subprocess
    import sys

    code = ("import sys, jezero.cli; "
            "assert not [m for m in sys.modules if m.split('.')[0] == 'textual'], 'textual imported'; "
            "assert 'jezero.tui.app' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_ui_without_a_server_is_one_clear_line(run_cli, tmp_path):
    config = tmp_path / "config.toml"
    config.write_text("[server]\nport = 9\n")
    proc = run_cli("--config", str(config), "ui", env={"JEZERO_KEY": "jz_some-key"})
    assert proc.returncode == 1 and "no Jezero server at http://127.0.0.1:9/mcp" in proc.stderr
    assert "Traceback" not in proc.stderr
    nokey = run_cli("--config", str(config), "ui", env={"JEZERO_KEY": ""})
    assert nokey.returncode == 2 and "no client key" in nokey.stderr


def test_no_command_outside_a_terminal_prints_the_help(run_cli):
    proc = run_cli()
    assert proc.returncode == 0 and "Start here" in proc.stdout
