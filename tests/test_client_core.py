"""The client core (clients/core/jezero_client.py): Python 3.9, standard library only, the same
path and project rules as the server, its commands run as a device runs them, and the copies in
the agent plugins kept equal to it."""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import json
import shutil
import stat
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from jezero.config import ProjectsConfig
from jezero.devices import approve
from jezero.inbox.layouts import Refused, check_path
from jezero.ingest import projects
from jezero.server import http_server

from device_support import CLIENT, Device, free_port, wait_for
from jz_support import REPO



def python39() -> str | None:
    """A working Python 3.9 (a pyenv shim may exist and still refuse to run)."""
    candidates = sorted(str(p) for p in Path.home().glob(".pyenv/versions/3.9*/bin/python3.9"))
    candidates.append(shutil.which("python3.9") or "")
    for candidate in filter(None, candidates):
        try:
            r = subprocess.run([candidate, "-c", "import sys; print(sys.version_info[:2])"], capture_output=True,
                               text=True, timeout=30)
        except OSError:
            continue
        if r.returncode == 0 and r.stdout.strip() == "(3, 9)":
            return candidate
    return None


PY39 = python39()


def load_core():
    spec = importlib.util.spec_from_file_location("jezero_client_core", CLIENT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


core = load_core()


# -- what it may use ----------------------------------------------------------------------------


HOOK = CLIENT.parent / "jezero_hook.py"  # what the plugins' hooks run: it imports the core


def test_vermin_finds_nothing_newer_than_python_3_9():
    vermin = Path(sys.executable).parent / "vermin"
    if not vermin.exists():
        pytest.skip("vermin is not installed (dev dependency)")
    r = subprocess.run([str(vermin), "--target=3.9-", "--violations", "--no-tips", "--eval-annotations", str(CLIENT),
                        str(HOOK)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize("path", [CLIENT, HOOK], ids=["core", "hook launcher"])
def test_it_imports_the_standard_library_only(path):
    imported = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            imported |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            imported.add(node.module.split(".")[0])
    assert imported - {"__future__", "jezero_client"} <= sys.stdlib_module_names, imported - sys.stdlib_module_names


# What a hook must not import: it starts as a fresh process on every agent event (the
# figures are in benchmarks/hooks/README.md). http.client brings the email package; the others
# are for commands other than the hooks, and typing for type checkers only.
NOT_FOR_HOOKS = {"http.client", "email", "ssl", "subprocess", "queue", "secrets", "typing", "hashlib", "argparse"}


def test_importing_the_core_loads_none_of_what_only_some_commands_use():
    r = subprocess.run([sys.executable, "-I", "-S", "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
                        "import jezero_client; print(' '.join(sorted(sys.modules)))", str(CLIENT.parent)],
                       capture_output=True, text=True, check=True)
    assert not NOT_FOR_HOOKS & set(r.stdout.split()), NOT_FOR_HOOKS & set(r.stdout.split())


@pytest.mark.skipif(PY39 is None, reason="no Python 3.9 interpreter on this machine")
def test_it_runs_on_a_real_python_3_9(tmp_path):
    device = Device(tmp_path / "old-mac")
    made = device.client("init", "--server", "http://127.0.0.1:9", "--device", "old-mac", python=PY39)
    assert made.returncode == 0, made.stderr
    key = (device.home / "device.key").read_text().strip()
    assert made.stdout == f"jezero device approve old-mac {hashlib.sha256(key.encode()).hexdigest()}\n"
    status = device.client("status", "--json", python=PY39)
    assert status.returncode == 1 and "cannot reach" in json.loads(status.stdout)["error"]
    (device.claude / "projects").mkdir(parents=True)
    assert device.client("upload", "--wait", python=PY39).returncode == 0  # nothing to send


# -- the same rules as the server ---------------------------------------------------------------

PATHS = [
    ("claude", "projects/-home-ann-src-shop/0b1c.jsonl"),
    ("claude", "projects/-home-ann-src-shop/agent-a1.jsonl"),
    ("claude", "projects/-home-ann-src-shop/0b1c/subagents/agent-a1.jsonl"),
    ("claude", "projects/-home-ann-src-shop/0b1c/subagents/agent-a1.meta.json"),
    ("claude", "projects/-home-ann-src-shop/0b1c/subagents/workflows/r1/agent-a1.jsonl"),
    ("claude", "projects/-home-ann-src-shop/0b1c/tool-results/x.txt"),
    ("claude", "projects/0b1c.jsonl"),
    ("claude", "projects/p/.hidden.jsonl"),
    ("claude", "projects/p/../x.jsonl"),
    ("claude", "settings.json"),
    ("claude", "projects/p/s/t/u.jsonl"),
    ("codex", "sessions/2026/01/02/rollout-2026-01-02T18-39-45-019b.jsonl"),
    ("codex", "sessions/2026/01/02/rollout-2026-01-02T18-39-45-019b.jsonl.zst"),
    ("codex", "sessions/2026/13/02/rollout-a.jsonl"),
    ("codex", "sessions/rollout-a.jsonl"),
    ("codex", "archived_sessions/rollout-a.jsonl"),
    ("codex", "archived_sessions/2026/01/02/rollout-a.jsonl"),
    ("codex", "session_index.jsonl"),
    ("codex", "auth.json"),
    ("codex", "sessions/2026/01/02/notes.jsonl"),
    ("gemini", "tmp/x/chats/session.json"),
    ("gemini", "tmp/demo/chats/session-2026-11-30T17-33-5debda9c.jsonl"),
    ("gemini", "tmp/demo/chats/session-2026-01-02T10-00-abcd1234.json"),
    ("gemini", "tmp/demo/chats/5debda9c-1/0f2a.jsonl"),
    ("gemini", "tmp/demo/chats/notes.txt"),
    ("gemini", "tmp/demo/shell_history"),
    ("gemini", "projects.json"),
    ("gemini", "settings.json"),
    ("gemini", "oauth_creds.json"),
    ("copilot", "session-state/ca1301bb-00ad/events.jsonl"),
    ("copilot", "session-state/ca1301bb-00ad/workspace.yaml"),
    ("copilot", "session-state/ca1301bb-00ad.jsonl"),
    ("copilot", "session-state/ca1301bb-00ad/checkpoints/index.md"),
    ("copilot", "config.json"),
    ("opencode", "opencode.db"),
    ("opencode", "opencode-beta.db"),
    ("opencode", "opencode.db-wal"),
    ("opencode", "auth.json"),
    ("opencode", "storage/session/p1/ses_1.json"),
    ("opencode", "storage/part/msg_1/prt_1.json"),
    ("opencode", "storage/other/x/y.json"),
]


@pytest.mark.parametrize(("agent", "path"), PATHS)
def test_the_client_sends_exactly_what_the_inbox_accepts(agent, path):
    try:
        check_path(agent, path)
        server = True
    except Refused:
        server = False
    assert core.accepted(agent, path) is server


def test_the_project_rules_are_the_servers(tmp_path):
    assert core.DEFAULT_ROOTS == ProjectsConfig().roots
    main = tmp_path / "code" / "Shop Main"
    (main / ".git" / "worktrees" / "feature").mkdir(parents=True)
    worktree = tmp_path / "elsewhere" / "shop-feature"
    worktree.mkdir(parents=True)
    (worktree / ".git").write_text(f"gitdir: {main / '.git' / 'worktrees' / 'feature'}\n")
    (main / "api").mkdir()
    cwds = [None, "", "/home/ann/src/shop/api", "/Users/bo/work/Billing", "C:\\Users\\bo\\repos\\infra\\x",
            "/tmp/nowhere", "/srv/src", str(main / "api"), str(worktree), "relative/src/x"]
    roots = ProjectsConfig().roots
    for cwd in cwds:
        server = projects.from_git(cwd) or projects.from_roots(cwd, roots)
        assert core.resolve_project(cwd) == server, cwd
    assert core.resolve_project(str(worktree)) == "shop-main"  # the main repository's name


def test_the_working_folder_is_read_from_either_agents_first_lines(tmp_path):
    claude = tmp_path / "c.jsonl"
    claude.write_text('{"type":"summary"}\n{"type":"user","cwd":"/home/ann/src/shop"}\n')
    codex = tmp_path / "x.jsonl"
    codex.write_text('{"type":"session_meta","payload":{"id":"1","cwd":"/home/ann/code/infra"}}\n')
    assert core.session_cwd(claude) == "/home/ann/src/shop"
    assert core.session_cwd(codex) == "/home/ann/code/infra"
    assert core.session_cwd(tmp_path / "missing.jsonl") is None


# -- init ---------------------------------------------------------------------------------------


def test_init_makes_a_private_key_once_and_new_key_makes_another(tmp_path):
    device = Device(tmp_path / "laptop")
    first = device.client("init", "--server", "https://jezero.example.com/", "--device", "anna-laptop")
    assert first.returncode == 0, first.stderr
    key_file = device.home / "device.key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    key = key_file.read_text().strip()
    assert key.startswith("jz_") and key not in first.stdout + first.stderr
    assert first.stdout == f"jezero device approve anna-laptop {hashlib.sha256(key.encode()).hexdigest()}\n"
    settings = json.loads((device.home / "client.json").read_text())
    assert settings == {"server": "https://jezero.example.com", "device": "anna-laptop"}

    again = device.client("init", "--server", "https://jezero.example.com", "--device", "anna-laptop")
    assert again.stdout == first.stdout and key_file.read_text().strip() == key

    rotated = device.client("init", "--server", "https://jezero.example.com", "--device", "anna-laptop", "--new-key")
    new_key = key_file.read_text().strip()
    assert new_key != key
    assert rotated.stdout == f"jezero device rotate anna-laptop {hashlib.sha256(new_key.encode()).hexdigest()}\n"


@pytest.mark.parametrize(("args", "message"), [
    (["--server", "http://x", "--device", "my laptop!"], "invalid device name"),
    (["--server", "ftp://x", "--device", "laptop"], "http:// or https://"),
    (["--server", "x", "--device", "laptop"], "http:// or https://"),
])
def test_init_refuses_bad_input_in_one_line(tmp_path, args, message):
    r = Device(tmp_path / "d").client("init", *args)
    assert r.returncode == 2 and message in r.stderr and r.stderr.count("\n") == 1
    assert not (tmp_path / "d" / "jezero" / "device.key").exists()


def test_commands_on_a_device_not_set_up_say_what_to_do(tmp_path):
    for command in (["status"], ["upload"], ["upload", "--wait"], ["bridge"]):
        r = Device(tmp_path / "d").client(*command)
        assert r.returncode == 2 and "run `jezero_client.py init" in r.stderr, command
        assert "Traceback" not in r.stderr


# -- upload and bridge against a server ---------------------------------------------------------


@pytest.fixture
def server(tmp_path):
    folder = tmp_path / "server"
    folder.mkdir()
    config = folder / "config.toml"
    config.write_text(f'[storage]\npath = "{folder / "library.sqlite3"}"\n[inbox]\npath = "{folder / "inbox"}"\n')
    port = free_port()
    running = http_server(str(config), "127.0.0.1", port, log_level="warning")
    thread = threading.Thread(target=running.run, daemon=True)
    thread.start()
    wait_for(lambda: running.started)
    yield f"http://127.0.0.1:{port}", config, folder / "inbox"
    running.should_exit = True
    thread.join(10)


def make_device(tmp_path, base, config, name="laptop") -> Device:
    device = Device(tmp_path / name)
    made = device.client("init", "--server", base, "--device", name)
    approve(config, name, made.stdout.split()[-1])
    wait_for(lambda: device.client("status").returncode == 0)
    return device


def write_session(device: Device, cwd: str, lines: int = 3) -> Path:
    path = device.claude / "projects" / "-p" / "0b1c2d3e-0000-4000-8000-000000000001.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as f:
        for i in range(lines):
            f.write(json.dumps({"type": "user", "cwd": cwd, "message": {"role": "user", "content": f"line {i}"}}) + "\n")
    return path


def test_upload_without_wait_returns_at_once_and_uploads_from_a_detached_process(tmp_path, server):
    base, config, inbox = server
    device = make_device(tmp_path, base, config)
    write_session(device, "/home/ann/src/shop/api")
    started = device.client("upload")
    assert started.returncode == 0 and started.stdout == ""
    stored = inbox / "laptop" / "claude" / "projects" / "-p" / "0b1c2d3e-0000-4000-8000-000000000001.jsonl"
    wait_for(stored.exists)
    # The project the device resolved travels with the file.
    wait_for(lambda: (inbox / "laptop" / "claude" / ".hints" / "projects" / "-p" / stored.name).exists())
    assert (inbox / "laptop" / "claude" / ".hints" / "projects" / "-p" / stored.name).read_text() == "shop"


def test_an_upload_asked_for_while_one_runs_is_left_to_the_running_one(tmp_path, server):
    base, config, _ = server
    device = make_device(tmp_path, base, config)
    lock = core._Lock(device.home / "upload.lock")
    assert lock.acquire()
    try:
        r = device.client("upload", "--wait")
        assert r.returncode == 0 and (device.home / "upload.again").exists()
    finally:
        lock.release()


def test_a_file_the_server_refuses_is_not_sent_again_until_it_changes(tmp_path, server):
    base, config, inbox = server
    config.write_text(config.read_text() + "max_upload_mb = 0.0001\n")  # about 100 bytes
    device = make_device(tmp_path, base, config)
    write_session(device, "/tmp", lines=5)
    first = device.client("upload", "--wait")
    assert first.returncode == 0
    last = json.loads(device.client("status", "--json").stdout)["last_upload"]
    assert (last["sent"], last["refused"]) == (0, 1)
    device.client("upload", "--wait")
    assert json.loads(device.client("status", "--json").stdout)["last_upload"]["refused"] == 0
    assert "413" in (device.home / "upload.log").read_text()


class TryAgainOnce(BaseHTTPRequestHandler):
    """An inbox that answers the first upload with `status` and stores every later one: what the
    server answers a device whose link stalled mid-upload (408, `[inbox] upload_idle_seconds`)."""

    status = 408
    puts: list = []

    def do_PUT(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        self.puts.append(self.path)
        code, body = (self.status, b'{"error": "try again"}') if len(self.puts) == 1 else (200, b'{"changed": true}')
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.mark.parametrize("status", [408, 429])
def test_an_upload_the_server_gave_up_waiting_for_is_sent_again_next_run(tmp_path, status):
    handler = type("Handler", (TryAgainOnce,), {"status": status, "puts": []})
    inbox = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=inbox.serve_forever, daemon=True).start()
    try:
        device = Device(tmp_path / "d")
        device.client("init", "--server", f"http://127.0.0.1:{inbox.server_port}", "--device", "d")
        write_session(device, "/tmp")
        assert device.client("upload", "--wait").returncode == 1  # as for a server error: not stored yet
        first = json.loads(device.client("status", "--json").stdout)["last_upload"]
        assert (first["sent"], first["refused"]) == (0, 0) and str(status) in first["error"]
        assert device.client("upload", "--wait").returncode == 0
        second = json.loads(device.client("status", "--json").stdout)["last_upload"]
        assert (second["sent"], second["error"]) == (1, None)
        assert len(handler.puts) == 2 and handler.puts[0] == handler.puts[1]
    finally:
        inbox.shutdown()
        inbox.server_close()


def test_the_bridge_answers_every_request_even_when_the_server_is_down(tmp_path):
    device = Device(tmp_path / "d")
    device.client("init", "--server", f"http://127.0.0.1:{free_port()}", "--device", "d")
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
                                                                       "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    # two lines it cannot read before the last request: not JSON, and JSON nested too deep for
    # Python's decoder (RecursionError, which once ended the bridge)
    deep = '{"jsonrpc": "2.0", "id": 9, "params": ' + "[" * 100_000 + "]" * 100_000 + "}"
    lines = [json.dumps(m) for m in messages[:2]] + ["not json", deep, json.dumps(messages[2])]
    r = subprocess.run([sys.executable, str(CLIENT), "bridge"], input="".join(line + "\n" for line in lines),
                       capture_output=True, text=True, env=device.env(), timeout=60)
    answers = [json.loads(line) for line in r.stdout.splitlines()]
    assert sorted(a["id"] for a in answers if a["id"] is not None) == [1, 2]
    assert all("unreachable" in a["error"]["message"] for a in answers if a["id"] is not None)
    assert [a["error"]["code"] for a in answers if a["id"] is None] == [-32700, -32700]


# -- the copies in the plugins ------------------------------------------------------------------


def build_clients(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO / "scripts" / "build_clients.py"), *args], capture_output=True,
                          text=True)


def test_every_plugin_copy_matches_the_core():
    r = build_clients("--check")
    assert r.returncode == 0, r.stderr


def test_the_check_names_a_missing_or_drifted_copy(tmp_path):
    shutil.copytree(REPO / "clients" / "core", tmp_path / "clients" / "core")
    (tmp_path / "clients" / "codex").mkdir()
    (tmp_path / "clients" / "claude").mkdir()
    assert build_clients("--check", "--root", str(tmp_path)).returncode == 1
    built = build_clients("--root", str(tmp_path))
    assert built.returncode == 0 and built.stdout.count("wrote") == 4  # the core and its hook launcher, twice
    assert build_clients("--check", "--root", str(tmp_path)).returncode == 0
    copy = tmp_path / "clients" / "codex" / "jezero_client.py"
    copy.write_text(copy.read_text() + "# a fix made in the copy\n")
    drift = build_clients("--check", "--root", str(tmp_path))
    assert drift.returncode == 1 and "clients/codex/jezero_client.py" in drift.stderr
    assert "claude" not in drift.stderr


def test_every_plugin_reports_its_own_version(monkeypatch):
    """Each plugin's copy of the core finds the plugin's version beside it (its manifest, or for
    OpenCode the PLUGIN_VERSION line of jezero.js): the upload header that says which plugin sent it."""
    monkeypatch.delenv("JEZERO_PLUGIN", raising=False)
    manifests = dict(core.PLUGIN_MANIFESTS)
    for folder in sorted(p for p in (REPO / "clients").iterdir() if p.is_dir() and p.name != "core"):
        spec = importlib.util.spec_from_file_location(f"jezero_client_{folder.name}", folder / "jezero_client.py")
        copy = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(copy)
        manifest = folder / manifests[folder.name]
        if manifest.suffix == ".json":
            version = json.loads(manifest.read_text())["version"]
        else:
            version = manifest.read_text().split('const PLUGIN_VERSION = "', 1)[1].split('"', 1)[0]
        assert copy.plugin_label() == f"{folder.name}/{version}"
    assert core.plugin_label() is None  # the core on its own belongs to no plugin
    monkeypatch.setenv("JEZERO_PLUGIN", "opencode/9.9.9")
    assert core.plugin_label() == "opencode/9.9.9"


# -- the hooks' HTTP/1.0 POST to a plain http:// server --------------------------------------------


class _Answering:
    """A server on 127.0.0.1 for one connection: it reads one request, sends `answer` and closes
    (or, with keep_open, leaves the connection open until the test ends)."""

    def __init__(self, answer: bytes, keep_open: bool = False):
        import socket

        self.answer, self.keep_open = answer, keep_open
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.received = b""
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()
        self.held = None

    def _serve(self):
        conn, _ = self.listener.accept()
        data = b""
        while b"\r\n\r\n" not in data:
            data += conn.recv(4096)
        head, _, body = data.partition(b"\r\n\r\n")
        length = int(next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")))
        while len(body) < length:
            body += conn.recv(4096)
        self.received = head + b"\r\n\r\n" + body
        if self.answer:
            conn.sendall(self.answer)
        if self.keep_open:
            self.held = conn
        else:
            conn.close()

    def close(self):
        self.thread.join(10)
        if self.held is not None:
            self.held.close()
        self.listener.close()


def _post(answer: bytes, keep_open: bool = False, headers: dict | None = None):
    server = _Answering(answer, keep_open)
    try:
        answer = core.http10_post("127.0.0.1", server.port, f"127.0.0.1:{server.port}", "/base/mcp", b'{"x": 1}',
                                  headers or {"Authorization": "Bearer jz_k"}, 10)
    finally:
        server.close()
    return answer, server.received, server.port


def test_the_hooks_post_is_plain_http_1_0_and_reads_a_sized_answer():
    (status, headers, body), sent, port = _post(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                                b"content-length: 8\r\n\r\n{\"a\": 1}")
    assert (status, headers["content-type"], body) == (200, "application/json", b'{"a": 1}')
    head, _, request_body = sent.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    assert lines[0] == "POST /base/mcp HTTP/1.0" and request_body == b'{"x": 1}'
    assert set(lines[1:]) == {f"Host: 127.0.0.1:{port}", "Authorization: Bearer jz_k", "Content-Length: 8"}


def test_the_hooks_post_reads_to_the_end_without_a_length_and_stops_at_the_length_with_one():
    big = b"x" * 1_000_000  # many reads
    (status, _, body), _, _ = _post(b"HTTP/1.0 404 Not Found\r\nServer: t\r\n\r\n" + big)
    assert (status, body) == (404, big)
    # A server that keeps the connection open after a sized answer: the answer is complete.
    (status, _, body), _, _ = _post(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}", keep_open=True)
    assert (status, body) == (200, b"{}")


@pytest.mark.parametrize("answer", [
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",  # not for HTTP/1.0
    b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}",  # cut short
    b"HTTP/1.1 200 OK\r\nContent-Length: ten\r\n\r\n{}",
    b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n{}",
    b"SSH-2.0-OpenSSH_9.6\r\n\r\n",  # not HTTP
    b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n",  # ends in its headers
    b"",  # closes without a word
], ids=["chunked", "short", "bad-length", "bad-header", "not-http", "no-body", "nothing"])
def test_the_hooks_post_turns_an_answer_it_cannot_read_into_an_os_error(answer):
    with pytest.raises(OSError):
        _post(answer)


def test_the_hooks_post_refuses_a_header_that_would_split_the_request():
    with pytest.raises(ValueError):
        core.http10_post("127.0.0.1", free_port(), "127.0.0.1", "/mcp", b"{}", {"X-Jezero-Project": "a\r\nEvil: 1"}, 1)
