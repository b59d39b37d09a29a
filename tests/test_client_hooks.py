"""The hooks the agent plugins run (`jezero_client.py hook ...`): the first-prompt rule, each
agent's output format from payloads captured from the real CLIs (tests/data/hook_payloads.jsonl,
written with JEZERO_HOOK_LOG during tests/test_agent_plugins_e2e.py), the switches that turn the
context off, and a hook that never breaks its agent: server down, server that never answers,
garbage on stdin, no device set up -- exit 0, nothing on stderr, at most the protocol."""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from device_support import CLIENT, free_port
from hook_support import FIRST_PROMPT, TITLES, run_hook, served_device
from test_client_core import PY39  # found at import, before any test changes HOME

spec = importlib.util.spec_from_file_location("jezero_client_hooks", CLIENT)
core = importlib.util.module_from_spec(spec)
spec.loader.exec_module(core)

PAYLOADS = [json.loads(line) for line in (Path(__file__).parent / "data" / "hook_payloads.jsonl").read_text().splitlines()]
PROTOCOL_START = "Jezero holds the team's past work"


def captured(agent: str, event: str) -> dict:
    return next(p["payload"] for p in PAYLOADS if p["agent"] == agent and p["event"] == event)


def hit(i: int, title: str, summary: str = "") -> dict:
    return {"id": i, "title": title, "summary": summary, "occurred_at": "2026-11-0%dT10:00:00Z" % (i % 9 + 1)}


# -- the first-prompt rule ----------------------------------------------------------------------


def test_distinctive_words_are_folded_unique_long_enough_and_not_stop_words():
    assert core.prompt_words("Please FIX the Migración of the billing service, the billing one!") == [
        "migracion", "billing", "service"]
    assert core.prompt_words("a an to of in on it") == []
    assert len(core.prompt_words(" ".join(f"word{i}" for i in range(40)))) == 20


def test_a_plural_in_a_title_does_not_count_for_the_singular_in_the_prompt():
    hits = [hit(1, "Billing migrations cleaned up"), hit(2, "Billing: the migration timeout raised")]
    assert [h["id"] for h in core.related_items("billing migration timeout", hits)] == [2]


def test_two_whole_words_are_needed_in_the_title_or_the_summary():
    hits = [hit(1, "Billing dashboard"), hit(2, "Something else", "the billing export and its timeout"),
            hit(3, "Timeouts in billingservice")]
    assert [h["id"] for h in core.related_items("billing export timeout", hits)] == [2]


def test_spanish_prompts_match_without_accents():
    hits = [hit(1, "Facturación: la migracion falla con un timeout"), hit(2, "Migración de usuarios")]
    kept = core.related_items("¿Por qué falla la migración de facturación?", hits)
    assert [h["id"] for h in kept] == [1]
    assert core.prompt_words("Hola, quiero que me ayudes por favor") == ["ayudes"]


def test_a_prompt_of_stop_words_or_one_word_adds_nothing():
    hits = [hit(1, "Please help fix this")]
    assert core.related_items("Please help me fix this, thanks", hits) == []
    assert core.related_items("billing", [hit(2, "billing billing")]) == []


def test_only_the_first_eight_results_and_at_most_three_are_kept():
    hits = [hit(i, f"other {i}") for i in range(1, 8)] + [hit(8, "billing timeout"), hit(9, "billing timeout")]
    assert [h["id"] for h in core.related_items("billing timeout", hits)] == [8]
    many = [hit(i, "billing timeout") for i in range(1, 9)]
    assert [h["id"] for h in core.related_items("billing timeout", many)] == [1, 2, 3]
    assert core.first_prompt_text(many[:2]).splitlines()[1:] == [core.item_line(many[0]), core.item_line(many[1])]
    assert "get_item" in core.first_prompt_text(many[:1])


def test_context_an_agent_wrapped_into_the_prompt_is_not_the_users_words():
    gemini = captured("gemini", "prompt")["prompt"]
    assert "<hook_context>" in gemini  # Gemini puts the session-start text in front of the prompt
    assert core.prompt_words(core.user_prompt(gemini)) == core.prompt_words(FIRST_PROMPT)


# -- each agent's format, from payloads captured from its CLI --------------------------------------


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    with served_device(tmp_path_factory.mktemp("hooks")) as s:
        yield s


def _with_cwd(payload: dict, cwd: Path, session: str) -> dict:
    out = dict(payload)
    out["cwd"] = str(cwd)
    out["sessionId" if "sessionId" in out else "session_id"] = session
    return out


@pytest.mark.parametrize("agent", ["claude", "codex", "gemini", "copilot", "opencode"])
def test_each_agent_gets_the_protocol_and_newest_items_then_the_related_item_once(served, agent):
    session = f"{agent}-format-test"
    start = run_hook("session-start", agent, _with_cwd(captured(agent, "session-start"), served.workdir, session),
                     served.env())
    assert start.returncode == 0 and start.stderr == ""
    prompt_payload = _with_cwd(captured(agent, "prompt"), served.workdir, session)
    first = run_hook("prompt", agent, prompt_payload, served.env())
    again = run_hook("prompt", agent, prompt_payload, served.env())
    assert first.returncode == again.returncode == 0 and first.stderr == again.stderr == ""
    assert again.stdout == ""  # later prompts add nothing

    def text(out: str, event: str) -> str:
        if agent == "opencode":
            return out.strip()
        data = json.loads(out)
        if agent == "copilot":  # Copilot reads additionalContext at the top level only
            assert set(data) == {"additionalContext"}
            return data["additionalContext"]
        assert data["hookSpecificOutput"]["hookEventName"] == captured(agent, event).get(
            "hook_event_name", {"session-start": "SessionStart", "prompt": "UserPromptSubmit"}[event])
        return data["hookSpecificOutput"]["additionalContext"]

    started = text(start.stdout, "session-start")
    assert started.startswith(PROTOCOL_START)
    assert [line.split(" ", 2)[2] for line in started.splitlines()[-5:]] == TITLES[:5]
    related = text(first.stdout, "prompt").splitlines()
    assert len(related) == 2 and related[1].endswith(TITLES[0]) and related[1].startswith("[1] ")


def test_the_hooks_run_on_python_3_9(served):
    if PY39 is None:
        pytest.skip("no Python 3.9 on this machine (the core's floor; vermin checks it statically)")
    payload = {"session_id": "py39", "cwd": str(served.workdir), "prompt": FIRST_PROMPT}
    start = run_hook("session-start", "claude", payload, served.env(), python=PY39)
    first = run_hook("prompt", "claude", payload, served.env(), python=PY39)
    assert start.stderr == first.stderr == ""
    assert TITLES[4] in json.loads(start.stdout)["hookSpecificOutput"]["additionalContext"]
    assert TITLES[0] in json.loads(first.stdout)["hookSpecificOutput"]["additionalContext"]


def test_a_folder_of_no_project_gets_the_protocol_alone(served, tmp_path):
    out = run_hook("session-start", "claude", {"session_id": "np", "cwd": str(tmp_path)}, served.env())
    context = json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
    assert context.startswith(PROTOCOL_START) and "Newest items" not in context


def test_the_context_can_be_switched_off_per_user_and_per_project(served, tmp_path):
    payload = {"session_id": "off-1", "cwd": str(served.workdir), "prompt": FIRST_PROMPT}
    for event in ("session-start", "prompt"):
        assert run_hook(event, "claude", payload, {**served.env(), "JEZERO_CONTEXT": "off"}).stdout == ""
    (served.workdir / ".jezero-no-context").write_text("")
    try:
        sub = served.workdir / "deep" / "er"
        sub.mkdir(parents=True)
        assert run_hook("session-start", "claude", {**payload, "cwd": str(sub)}, served.env()).stdout == ""
    finally:
        (served.workdir / ".jezero-no-context").unlink()
    settings = json.loads((served.client_home / "client.json").read_text())
    home = tmp_path / "client"
    home.mkdir()
    (home / "device.key").write_text((served.client_home / "device.key").read_text())
    (home / "client.json").write_text(json.dumps({**settings, "context": False}))
    assert run_hook("session-start", "claude", payload, {"JEZERO_CLIENT_HOME": str(home)}).stdout == ""


# -- a hook never breaks its agent -------------------------------------------------------------


def _device(tmp_path: Path, server: str) -> dict[str, str]:
    home = tmp_path / "device"
    subprocess.run([sys.executable, str(CLIENT), "init", "--server", server, "--device", "d"], check=True,
                   capture_output=True, env={"JEZERO_CLIENT_HOME": str(home), "PATH": "/usr/bin:/bin"})
    return {"JEZERO_CLIENT_HOME": str(home)}


def _context(out: str) -> str:
    return json.loads(out)["hookSpecificOutput"]["additionalContext"] if out.strip() else ""


@pytest.mark.parametrize("agent", ["claude", "copilot"])
def test_server_down_means_no_items_and_nothing_else(tmp_path, agent):
    env = _device(tmp_path, f"http://127.0.0.1:{free_port()}")  # nothing listens there
    workdir = tmp_path / "src" / "demo"
    (workdir / ".git").mkdir(parents=True)
    start = run_hook("session-start", agent, {"session_id": "s", "sessionId": "s", "cwd": str(workdir)}, env)
    assert start.returncode == 0 and start.stderr == ""
    text = _context(start.stdout) if agent == "claude" else json.loads(start.stdout)["additionalContext"]
    assert text.startswith(PROTOCOL_START) and "Newest items" not in text
    prompt = run_hook("prompt", agent, {"session_id": "s", "sessionId": "s", "cwd": str(workdir), "prompt": FIRST_PROMPT}, env)
    assert (prompt.returncode, prompt.stdout, prompt.stderr) == (0, "", "")


def test_a_server_that_never_answers_costs_the_budget_and_nothing_else(tmp_path):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    held = []
    stop = threading.Event()

    def accept():  # take connections and never answer
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                pass

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        env = _device(tmp_path, f"http://127.0.0.1:{listener.getsockname()[1]}")
        workdir = tmp_path / "src" / "demo"
        (workdir / ".git").mkdir(parents=True)
        start = run_hook("session-start", "codex", {"session_id": "s", "cwd": str(workdir),
                                                    "hook_event_name": "SessionStart"}, env)
        assert start.returncode == 0 and start.stderr == ""
        assert _context(start.stdout) == core.PROTOCOL  # the budget ran out: the protocol alone
        prompt = run_hook("prompt", "codex", {"session_id": "s", "cwd": str(workdir), "prompt": FIRST_PROMPT}, env)
        assert (prompt.returncode, prompt.stdout, prompt.stderr) == (0, "", "")
    finally:
        stop.set()
        thread.join()
        for conn in held:
            conn.close()
        listener.close()


@pytest.mark.parametrize("stdin", ["", "not json", "[1, 2]", "{\"cwd\": 42, \"prompt\": null}", "\x00\xff"])
def test_garbage_on_stdin_is_not_a_crash(tmp_path, stdin):
    env = _device(tmp_path, f"http://127.0.0.1:{free_port()}")
    for event in ("session-start", "prompt", "end"):
        done = run_hook(event, "gemini", stdin, env, cwd=tmp_path)
        assert done.returncode == 0 and done.stderr == ""


def test_without_a_device_the_hooks_add_nothing(tmp_path):
    env = {"JEZERO_CLIENT_HOME": str(tmp_path / "nothing")}
    for event in ("session-start", "prompt", "end", "unknown-event"):
        done = run_hook(event, "claude", {"session_id": "x", "cwd": str(tmp_path), "prompt": FIRST_PROMPT}, env)
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    done = run_hook("session-start", "some-new-agent", {}, env)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_the_hook_budget_can_be_set_within_bounds(monkeypatch):
    for given, budget in (("", 2.5), ("x", 2.5), ("nan", 2.5), ("10", 10.0), ("0", 0.5), ("1e9", 60.0)):
        monkeypatch.setenv("JEZERO_HOOK_BUDGET", given)
        assert core.hook_budget() == budget


def test_a_hook_to_a_plain_http_server_imports_nothing_it_does_not_need(served, tmp_path):
    """The hooks' own request goes out without http.client (and its email package), and nothing only
    other commands use is loaded: what a hook imports is paid on every agent event."""
    from test_client_core import NOT_FOR_HOOKS

    listed = tmp_path / "modules.txt"
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import jezero_client; "
            "status = jezero_client.hook_main(sys.argv[3:]); open(sys.argv[2], 'w').write(' '.join(sys.modules))")
    for event in ("session-start", "prompt"):
        payload = {"session_id": f"imports-{event}", "cwd": str(served.workdir), "prompt": FIRST_PROMPT}
        done = subprocess.run([sys.executable, "-I", "-S", "-c", code, str(CLIENT.parent), str(listed), event,
                               "--agent", "claude"], input=json.dumps(payload), capture_output=True, text=True,
                              env={**os.environ, **served.env()}, timeout=60)
        assert done.returncode == 0 and done.stderr == ""
        assert TITLES[0] in json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]  # it did its work
        loaded = set(listed.read_text().split())
        assert not NOT_FOR_HOOKS & loaded, NOT_FOR_HOOKS & loaded


def test_a_session_id_that_is_no_plain_file_name_gets_a_digest_for_its_marker(tmp_path):
    assert core._marker_name("claude", "0b1c-77aa_x.1") == "claude-0b1c-77aa_x.1"
    odd = core._marker_name("claude", "../../etc/passwd")
    assert odd.startswith("claude=") and "/" not in odd and odd != core._marker_name("claude", "../../etc/passwd2")
    for session in ("0b1c-77aa", "../../etc/passwd"):  # first once, then not again
        assert core._first_prompt(tmp_path, "claude", session) is True
        assert core._first_prompt(tmp_path, "claude", session) is False


# -- the MCP server each plugin configures --------------------------------------------------------

CLIENTS = CLIENT.parent.parent
# The MCP server each plugin declares (command, args, and the placeholder the agent fills in with
# the plugin's folder; Codex runs it in the plugin folder, so its path is relative).
MCP_CONFIGS = {
    "claude": (CLIENTS / "claude" / ".mcp.json", "${CLAUDE_PLUGIN_ROOT}"),
    "codex": (CLIENTS / "codex" / ".mcp.json", "."),
    "copilot": (CLIENTS / "copilot" / ".mcp.json", "${PLUGIN_ROOT}"),
    "gemini": (CLIENTS / "gemini" / "gemini-extension.json", "${extensionPath}"),
}


def _mcp_command(agent: str) -> list[str]:
    path, root = MCP_CONFIGS[agent]
    server = json.loads(path.read_text())["mcpServers"]["jezero"]
    folder = str(path.parent)
    return [sys.executable if server["command"] == "python3" else server["command"],
            *(a.replace(root, folder, 1) if a.startswith(root) else a for a in server["args"])]


@pytest.mark.parametrize("agent", sorted(MCP_CONFIGS))
def test_each_plugins_mcp_bridge_runs_as_its_hooks_do_and_answers_a_search(served, agent):
    """The bridge is started like the hooks (-I -S: the agent's PYTHONPATH and site-packages stay
    out), and answers through the real server, non-ASCII titles included, as UTF-8."""
    command = _mcp_command(agent)
    assert command[1:3] == ["-I", "-S"] and command[-1] == "bridge", command
    hooks = (MCP_CONFIGS[agent][0].parent / "hooks" / "hooks.json").read_text()
    assert hooks.count("python3 -I -S ") >= 3
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "search", "arguments": {"query": "billing migración"}}},
    ]
    # A PYTHONPATH holding a json.py that breaks everything: -I keeps it out.
    poisoned = served.client_home.parent / f"poison-{agent}"
    poisoned.mkdir(exist_ok=True)
    (poisoned / "json.py").write_text("raise SystemExit('the agent PYTHONPATH reached the bridge')\n")
    done = subprocess.run(command, input="".join(json.dumps(m) + "\n" for m in messages).encode("utf-8"),
                          capture_output=True, env={**os.environ, **served.env(), "PYTHONPATH": str(poisoned)},
                          cwd=MCP_CONFIGS[agent][0].parent, timeout=60)
    assert done.returncode == 0, done.stderr
    answers = {a["id"]: a for a in map(json.loads, done.stdout.decode("utf-8").splitlines())}
    assert answers[1]["result"]["serverInfo"]
    text = json.dumps(answers[2]["result"], ensure_ascii=False)
    assert TITLES[0] in text


def test_opencode_starts_its_bridge_with_the_hooks_flags():
    js = (CLIENTS / "opencode" / "jezero.js").read_text()
    assert 'command: [PYTHON, "-I", "-S", CORE, "bridge"]' in js
    assert '["-I", "-S", HOOK, event]' in js
