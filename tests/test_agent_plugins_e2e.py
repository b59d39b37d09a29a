"""Each agent's real CLI, installed from the npm registry (scripts/install_agent_clis.sh), runs
with Jezero's plugin installed through the agent's own mechanism, against a mock model endpoint
on 127.0.0.1 and a real `jezero serve` with an approved device. The tests assert what reached the
model (the session-start protocol with the project's newest items, and the first-prompt items),
and that the session the agent wrote reaches the server's inbox through the end hook and ingests.

The CLIs live in $JEZERO_AGENT_CLIS (default ~/.cache/jezero-agent-clis); a missing one skips with
the command that installs it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from agent_mock import MockModel
from device_support import wait_for
from hook_support import FIRST_PROMPT, TITLES, served_device
from jz_support import REPO, jezero_command, needs_plugin

pytestmark = [pytest.mark.slow, needs_plugin("jezero-connectors-inbox")]

CACHE = Path(os.environ.get("JEZERO_AGENT_CLIS") or Path.home() / ".cache" / "jezero-agent-clis")
CLIENTS = REPO / "clients"
COMMANDS = {"claude": "claude", "codex": "codex", "gemini": "gemini", "copilot": "copilot", "opencode": "opencode"}
RUN_TIMEOUT = 240  # a bound for a hung CLI, not a speed check


def cli(agent: str) -> Path:
    found = CACHE / agent / "node_modules" / ".bin" / COMMANDS[agent]
    if not found.exists():
        pytest.skip(f"the {agent} CLI is not installed in {CACHE} (run scripts/install_agent_clis.sh {agent}; "
                    "it needs the npm registry)")
    return found


def scratch_env(home: Path, served, **extra: str) -> dict[str, str]:
    """A scratch HOME per agent, so nothing of the machine's own agent setup is read or changed."""
    home.mkdir(parents=True, exist_ok=True)
    # JEZERO_HOOK_LOG (when set) makes the core append each hook payload to that file: how the
    # payloads in tests/data/hook_payloads/ were captured.
    keep = {k: v for k, v in os.environ.items()
            if k in ("PATH", "LANG", "LC_ALL", "TERM", "TMPDIR", "SYSTEMROOT", "JEZERO_HOOK_LOG")}
    return {**keep, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local" / "share"), "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_STATE_HOME": str(home / ".local" / "state"), "NO_COLOR": "1", **served.env(),
            # the most the agents' own 5-second hook timeouts leave, not the 2.5 s default
            "JEZERO_HOOK_BUDGET": "4.5", **extra}


def run(command: list[str], env: dict[str, str], cwd: Path, **kw) -> subprocess.CompletedProcess:
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=RUN_TIMEOUT,
                          stdin=subprocess.DEVNULL, **kw)
    return done


def assert_context_reached(mock: MockModel) -> None:
    sent = mock.sent()
    assert "Jezero holds the team's past work" in sent, "the session-start protocol did not reach the model"
    for title in TITLES[:5]:  # the project's five newest items
        assert title in sent.replace("\\u2019", "'"), f"newest item {title!r} missing from the model's input"
    assert "Possibly related past work in Jezero" in sent, "the first-prompt block did not reach the model"
    # The rule: the related item names both "billing" and "migration"; "migrations" does not count.
    block = sent[sent.index("Possibly related past work in Jezero"):][:600]
    assert TITLES[0] in block and TITLES[1] not in block


def assert_ingests(served, agent: str, tmp_path: Path) -> None:
    """The end hook uploaded the session into the inbox; the inbox connector reads it into items."""
    inbox = Path(str(served.config.parent)) / "inbox" / "laptop" / agent
    wait_for(lambda: inbox.is_dir() and any(p.is_file() and not p.name.startswith(".") for p in inbox.rglob("*")),
             bound=60)
    env = {**os.environ, "JEZERO_CONFIG": str(served.config)}
    items: list = []

    def ingested() -> bool:
        # A session of several files (Copilot's events.jsonl and workspace.yaml) arrives one upload
        # at a time: the first file in the inbox may not be the one the connector reads, and a run
        # before the other arrives ingests nothing yet (the next one does). Run until it has.
        ran = subprocess.run([*jezero_command(), "run", f"inbox-laptop-{agent}"], env=env, capture_output=True,
                             text=True, timeout=300)
        assert ran.returncode == 0, ran.stdout + ran.stderr
        found = subprocess.run([*jezero_command(), "timeline", "--source", f"inbox-laptop-{agent}", "--json"],
                               env=env, capture_output=True, text=True, timeout=120)
        assert found.returncode == 0, found.stderr
        items[:] = json.loads(found.stdout)
        return bool(items)

    try:
        wait_for(ingested, bound=60, every=0.5)
    except AssertionError:
        raise AssertionError(f"nothing ingested from the {agent} session in 60 s") from None
    # The device resolved the session's project from its working folder (a git repository "demo").
    assert {i["project"] for i in items} == {"demo"}


# ------------------------------------------------------------------------------------------------
# Claude Code


def test_claude_code_plugin(tmp_path):
    claude = cli("claude")
    for target in (CLIENTS / "claude", REPO):  # the plugin, and the repository's marketplace
        validated = subprocess.run([str(claude), "plugin", "validate", str(target)], capture_output=True,
                                   text=True, timeout=120, env={**os.environ, "HOME": str(tmp_path / "v")})
        assert validated.returncode == 0, validated.stdout + validated.stderr
    with served_device(tmp_path) as served, MockModel() as mock:
        env = scratch_env(tmp_path / "home", served, ANTHROPIC_BASE_URL=mock.url, ANTHROPIC_API_KEY="dummy",
                          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_AUTOUPDATER="1",
                          DISABLE_TELEMETRY="1")
        # Installed as a user would: the repository is the marketplace, the plugin comes from it.
        for step in (["plugin", "marketplace", "add", str(REPO)], ["plugin", "install", "jezero@jezero"]):
            done = run([str(claude), *step], env, served.workdir)
            assert done.returncode == 0, done.stdout + done.stderr
        done = run([str(claude), "-p", FIRST_PROMPT], env, served.workdir)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "MOCK-REPLY" in done.stdout
        assert_context_reached(mock)
        # The MCP tools came through the plugin's local bridge (no key in Claude's configuration).
        assert "mcp__plugin_jezero_jezero__search" in mock.sent()
        assert_ingests(served, "claude", tmp_path)


# ------------------------------------------------------------------------------------------------
# Codex CLI


def test_codex_plugin(tmp_path):
    codex = cli("codex")
    with served_device(tmp_path) as served, MockModel() as mock:
        home = tmp_path / "home"
        codex_home = home / ".codex"
        codex_home.mkdir(parents=True)
        (codex_home / "config.toml").write_text(
            'model = "gpt-4.1"\nmodel_provider = "mock"\ncheck_for_update_on_startup = false\n\n'
            '[analytics]\nenabled = false\n\n'
            f'[model_providers.mock]\nname = "mock"\nbase_url = "{mock.url}/v1"\nwire_api = "responses"\n'
            'env_key = "MOCK_API_KEY"\n\n')
        env = scratch_env(home, served, CODEX_HOME=str(codex_home), MOCK_API_KEY="dummy")
        # Installed as a user would: the repository is the marketplace, the plugin comes from it.
        for step in (["plugin", "marketplace", "add", str(REPO)], ["plugin", "add", "jezero@jezero"]):
            done = run([str(codex), *step], env, served.workdir)
            assert done.returncode == 0, done.stdout + done.stderr
        done = run([str(codex), "exec", "--dangerously-bypass-hook-trust", "--dangerously-bypass-approvals-and-sandbox",
                    "--skip-git-repo-check", FIRST_PROMPT], env, served.workdir)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "MOCK-REPLY" in done.stdout
        assert_context_reached(mock)
        # The MCP tools came through the plugin's local bridge (no key in Codex's configuration).
        assert "mcp__jezero" in mock.sent()
        assert "jz_" not in (codex_home / "config.toml").read_text()
        assert_ingests(served, "codex", tmp_path)


# ------------------------------------------------------------------------------------------------
# Gemini CLI


def test_gemini_extension(tmp_path):
    gemini = cli("gemini")
    with served_device(tmp_path) as served, MockModel() as mock:
        home = tmp_path / "home"
        (home / ".gemini").mkdir(parents=True)
        # An API key with a base URL (a base URL alone selects "gateway" auth, which 0.61 refuses).
        (home / ".gemini" / "settings.json").write_text(json.dumps({
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "general": {"disableAutoUpdate": True}, "privacy": {"usageStatisticsEnabled": False}}))
        # The user policy the extension's README asks for: Jezero's read-only tools without asking.
        (home / ".gemini" / "policies").mkdir()
        shutil.copy(CLIENTS / "gemini" / "user-policy" / "jezero.toml", home / ".gemini" / "policies")
        env = scratch_env(home, served, GOOGLE_GEMINI_BASE_URL=mock.url, GEMINI_API_KEY="dummy",
                          GEMINI_CLI_TRUST_WORKSPACE="true", GEMINI_CLI_NO_RELAUNCH="true")
        validated = run([str(gemini), "extensions", "validate", str(CLIENTS / "gemini")], env, served.workdir)
        assert validated.returncode == 0, validated.stdout + validated.stderr
        done = run([str(gemini), "extensions", "install", str(CLIENTS / "gemini"), "--consent"], env, served.workdir)
        assert done.returncode == 0, done.stdout + done.stderr
        done = run([str(gemini), "-p", FIRST_PROMPT], env, served.workdir)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "MOCK-REPLY" in done.stdout
        assert_context_reached(mock)
        assert "mcp_jezero_search" in mock.sent()
        assert "jz_" not in (home / ".gemini" / "settings.json").read_text()
        assert_ingests(served, "gemini", tmp_path)


# ------------------------------------------------------------------------------------------------
# GitHub Copilot CLI


def test_copilot_plugin(tmp_path):
    copilot = cli("copilot")
    with served_device(tmp_path) as served, MockModel() as mock:
        home = tmp_path / "home"
        # Copilot unpacks itself (~235 MB) into its cache folder on the first run: keep that once.
        env = scratch_env(home, served, COPILOT_OFFLINE="true", COPILOT_PROVIDER_BASE_URL=mock.url + "/v1",
                          COPILOT_PROVIDER_TYPE="openai", COPILOT_PROVIDER_API_KEY="dummy", COPILOT_MODEL="gpt-4.1",
                          XDG_CACHE_HOME=str(CACHE / "copilot" / "cache"))
        # Installed as a user would: the repository is the marketplace, the plugin comes from it.
        for step in (["plugin", "marketplace", "add", str(REPO)], ["plugin", "install", "jezero@jezero"]):
            done = run([str(copilot), *step], env, served.workdir)
            assert done.returncode == 0, done.stdout + done.stderr
        done = run([str(copilot), "-p", FIRST_PROMPT, "--allow-all-tools"], env, served.workdir)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "MOCK-REPLY" in done.stdout
        assert_context_reached(mock)
        assert "jezero-search" in mock.sent()
        assert_ingests(served, "copilot", tmp_path)


# ------------------------------------------------------------------------------------------------
# OpenCode


def test_opencode_plugin(tmp_path):
    opencode = cli("opencode")
    sdk = CACHE / "opencode-plugin-sdk"
    if not (sdk / "node_modules" / "@opencode-ai" / "plugin").is_dir():
        pytest.skip(f"OpenCode's plugin SDK is not in {sdk} (scripts/install_agent_clis.sh opencode installs it): "
                    "without it OpenCode tries to install it at startup, which offline only fails after minutes")
    with served_device(tmp_path) as served, MockModel() as mock:
        home = tmp_path / "home"
        config = home / ".config" / "opencode"
        # Installed as the README says: the plugin file and the core, copied into OpenCode's plugins folder.
        (config / "plugins").mkdir(parents=True)
        for name in ("jezero.js", "jezero_client.py", "jezero_hook.py"):
            shutil.copy(CLIENTS / "opencode" / name, config / "plugins" / name)
        # OpenCode installs the plugin SDK into its config folder when a local plugin exists: give it the cached one.
        shutil.copy(sdk / "package.json", config / "package.json")
        shutil.copytree(sdk / "node_modules", config / "node_modules", symlinks=True)
        model = {"name": "Mock", "tool_call": True, "limit": {"context": 128000, "output": 4096}}
        (config / "opencode.json").write_text(json.dumps({
            "$schema": "https://opencode.ai/config.json",
            "provider": {"mock": {"npm": "@ai-sdk/openai-compatible", "name": "Mock",
                                  "options": {"baseURL": mock.url + "/v1", "apiKey": "dummy"},
                                  "models": {"mock-model": model}}},
            "model": "mock/mock-model", "small_model": "mock/mock-model", "autoupdate": False, "share": "disabled"}))
        env = scratch_env(home, served, OPENCODE_DISABLE_MODELS_FETCH="true", OPENCODE_DISABLE_AUTOUPDATE="true",
                          OPENCODE_DISABLE_LSP_DOWNLOAD="true", OPENCODE_DISABLE_SHARE="true")
        done = run([str(opencode), "run", FIRST_PROMPT], env, served.workdir)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "MOCK-REPLY" in done.stdout
        assert_context_reached(mock)
        assert "jezero_search" in mock.sent()
        assert_ingests(served, "opencode", tmp_path)
