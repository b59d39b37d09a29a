"""The inbox over real HTTP on 127.0.0.1: what it stores, and a table of hostile uploads that it
must refuse (a 4xx with a one-line reason, nothing written anywhere, the server still serving).

Requests go through http.client, which sends a path exactly as given: an ordinary HTTP client
would tidy `..` and `//` away before the server ever saw them."""

from __future__ import annotations

import http.client
import json
import os
import stat
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from jezero.inbox.folder import read_hint
from jezero.server import http_server, key_digest

from device_support import free_port

KEYS = {"laptop": "jz_laptop-key", "desk": "jz_desk-key", "reader": "jz_reader-key"}
CAP = 64 * 1024
SESSION = "claude/projects/-home-ann-src-shop/0b1c2d3e-0000-4000-8000-000000000001.jsonl"
LINE = b'{"type":"user","cwd":"/home/ann/src/shop","message":{"role":"user","content":"hello"}}\n'


@dataclass
class Inbox:
    root: Path  # everything the test owns: config, library, inbox, the outside folder
    port: int

    @property
    def inbox(self) -> Path:
        return self.root / "inbox"

    @property
    def outside(self) -> Path:
        return self.root / "outside"

    def request(self, method: str, path: str, body: bytes | None = b"", key: str | None = KEYS["laptop"],
                headers: dict | None = None, chunks: list[bytes] | None = None) -> tuple[int, str]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            sent = {"Content-Type": "application/octet-stream"}
            if key:
                sent["Authorization"] = f"Bearer {key}"
            sent.update(headers or {})
            sent = {k: v for k, v in sent.items() if v is not None}
            if chunks is not None:
                conn.putrequest(method, path, skip_accept_encoding=True)
                for k, v in {**sent, "Transfer-Encoding": "chunked"}.items():
                    conn.putheader(k, v)
                conn.endheaders()
                for chunk in chunks:
                    conn.send(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                conn.send(b"0\r\n\r\n")
            else:
                conn.request(method, path, body=body, headers=sent)
            resp = conn.getresponse()
            return resp.status, resp.read().decode("utf-8", "replace")
        finally:
            conn.close()

    def put(self, relative: str, body: bytes = LINE, **options) -> tuple[int, str]:
        return self.request("PUT", "/inbox/v1/" + relative, body, **options)

    def snapshot(self) -> dict[str, tuple]:
        """Every path under the test's folder (not following links), with size and mtime."""
        found = {}
        for folder, dirs, files in os.walk(self.root):
            for name in dirs + files:
                path = Path(folder) / name
                if path.name.startswith("library.sqlite3"):
                    continue
                st = os.lstat(path)
                found[path.relative_to(self.root).as_posix()] = (st.st_mode, st.st_size, st.st_mtime_ns)
        return found

    def serving(self) -> bool:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            conn.request("GET", "/health")
            return conn.getresponse().status == 200
        finally:
            conn.close()


def clients_toml() -> str:
    blocks = []
    for name, upload in (("laptop", True), ("desk", True), ("reader", False)):
        blocks.append(f'[[clients]]\nname = "{name}"\nkey_sha256 = "{key_digest(KEYS[name])}"\n'
                      f'upload = {"true" if upload else "false"}\n')
    return "\n".join(blocks)


@pytest.fixture
def inbox(tmp_path) -> Inbox:
    root = tmp_path / "server"
    root.mkdir()
    (root / "config.toml").write_text(
        f'[storage]\npath = "{root / "library.sqlite3"}"\n\n[inbox]\npath = "{root / "inbox"}"\n'
        f"max_upload_mb = {CAP / 1024 / 1024}\n\n" + clients_toml())
    port = free_port()
    server = http_server(str(root / "config.toml"), "127.0.0.1", port, log_level="warning")
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline, "server did not start"
        time.sleep(0.02)
    yield Inbox(root, port)
    server.should_exit = True
    thread.join(10)


# -- what it stores -----------------------------------------------------------------------------


def test_a_session_file_is_stored_as_sent_in_the_device_folder(inbox):
    before = time.time()
    status, text = inbox.put(SESSION, LINE * 3)
    assert status == 200, text
    answer = json.loads(text)
    assert answer["stored"] == SESSION and answer["bytes"] == len(LINE) * 3 and answer["changed"] is True
    stored = inbox.inbox / "laptop" / SESSION
    assert stored.read_bytes() == LINE * 3
    # The upload time, not the device's: a week offline must not land behind a cursor.
    assert before - 1 <= stored.stat().st_mtime <= time.time() + 1
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    for folder in (inbox.inbox, inbox.inbox / "laptop", stored.parent):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert [p.name for p in stored.parent.iterdir()] == [stored.name]  # no temporary file left


def test_the_same_bytes_again_change_nothing_and_a_grown_file_replaces_the_old(inbox):
    assert inbox.put(SESSION, LINE)[0] == 200
    stored = inbox.inbox / "laptop" / SESSION
    os.utime(stored, (1_000_000_000, 1_000_000_000))
    status, text = inbox.put(SESSION, LINE)
    assert status == 200 and json.loads(text)["changed"] is False
    assert stored.stat().st_mtime == 1_000_000_000  # untouched

    status, text = inbox.put(SESSION, LINE * 2)
    assert status == 200 and json.loads(text)["changed"] is True
    assert stored.read_bytes() == LINE * 2
    assert stored.stat().st_mtime > 1_000_000_000


def test_every_layout_of_both_agents_is_accepted(inbox):
    accepted = [
        SESSION,
        "claude/projects/-home-ann-src-shop/agent-a1b2c3.jsonl",
        "claude/projects/-home-ann-src-shop/0b1c/subagents/agent-a1b2c3.jsonl",
        "claude/projects/-home-ann-src-shop/0b1c/subagents/workflows/run-1/agent-a1b2c3.jsonl",
        "codex/sessions/2026/01/02/rollout-2026-01-02T18-39-45-019b7f94-51b4-7593-922e-ba12b5b73b52.jsonl",
        "codex/archived_sessions/rollout-2025-12-01T10-00-00-019b7f94-51b4-7593-922e-ba12b5b73b53.jsonl",
        "codex/archived_sessions/2025/12/01/rollout-2025-12-01T10-00-00-019b7f94-51b4-7593-922e-ba12b5b73b54.jsonl",
        "codex/session_index.jsonl",
    ]
    for path in accepted:
        assert inbox.put(path)[0] == 200, path
    meta = "claude/projects/-home-ann-src-shop/0b1c/subagents/agent-a1b2c3.meta.json"
    assert inbox.put(meta, b'{"agentType": "explore"}', headers={"Content-Type": "application/json"})[0] == 200
    zst = "codex/sessions/2026/01/03/rollout-2026-01-03T08-00-00-019b7f94-51b4-7593-922e-ba12b5b73b55.jsonl.zst"
    assert inbox.put(zst, b"\x28\xb5\x2f\xfd" + b"\x00" * 16, headers={"Content-Type": "application/zstd"})[0] == 200
    assert (inbox.inbox / "laptop" / zst).exists()


def test_a_project_hint_is_kept_beside_the_file(inbox):
    assert inbox.put(SESSION, headers={"X-Jezero-Project": "shop"})[0] == 200
    assert read_hint(inbox.inbox / "laptop" / "claude", SESSION.partition("/")[2]) == "shop"
    assert inbox.put(SESSION, headers={"X-Jezero-Project": "shop-api"})[0] == 200  # same bytes, new hint
    assert read_hint(inbox.inbox / "laptop" / "claude", SESSION.partition("/")[2]) == "shop-api"


def test_an_existing_inbox_folder_is_made_private(inbox):
    inbox.inbox.mkdir(mode=0o755)
    os.chmod(inbox.inbox, 0o755)
    assert inbox.put(SESSION)[0] == 200
    assert stat.S_IMODE(inbox.inbox.stat().st_mode) == 0o700


def test_a_big_body_within_the_cap_arrives_whole(inbox):
    body = LINE * ((CAP - 1) // len(LINE))
    assert inbox.put(SESSION, body)[0] == 200
    assert (inbox.inbox / "laptop" / SESSION).read_bytes() == body


def test_a_body_past_the_memory_spool_goes_through_a_temporary_file(inbox, monkeypatch):
    from jezero.inbox.folder import Upload

    monkeypatch.setattr(Upload, "SPOOL_BYTES", 1024)
    body = LINE * 400
    assert inbox.put(SESSION, body)[0] == 200
    assert (inbox.inbox / "laptop" / SESSION).read_bytes() == body
    # Refused after it spilled to disk: the temporary file goes, the stored file stays.
    status, _ = inbox.request("PUT", "/inbox/v1/" + SESSION, chunks=[b"{" + b"x" * 16383] * 6)
    assert status == 413
    assert [p.name for p in (inbox.inbox / "laptop" / SESSION).parent.iterdir()] == [SESSION.rsplit("/", 1)[1]]
    assert (inbox.inbox / "laptop" / SESSION).read_bytes() == body


# -- hostile uploads ----------------------------------------------------------------------------

C = "/inbox/v1/claude/projects/-home-ann-src-shop/"
HOSTILE = [
    # (what, method, raw path, options)
    ("dot-dot up and out", "PUT", "/inbox/v1/claude/projects/../../../../outside/x.jsonl", {}),
    ("dot-dot inside a layout", "PUT", C + "../../../codex/sessions/2026/01/01/rollout-a.jsonl", {}),
    ("dot-dot as the agent", "PUT", "/inbox/v1/../desk/claude/projects/p/s.jsonl", {}),
    ("single dot", "PUT", "/inbox/v1/claude/projects/./p/s.jsonl", {}),
    ("absolute path", "PUT", "/inbox/v1/claude//etc/passwd", {}),
    ("absolute path, encoded", "PUT", "/inbox/v1/claude/%2Fetc%2Fpasswd", {}),
    ("encoded slash in a name", "PUT", C + "p%2F..%2F..%2Fx.jsonl", {}),
    ("encoded backslash", "PUT", C + "..%5C..%5Cx.jsonl", {}),
    ("encoded dots", "PUT", "/inbox/v1/claude/projects/%2e%2e/%2e%2e/s.jsonl", {}),
    ("encoded dots, upper case", "PUT", "/inbox/v1/claude/projects/%2E%2E/%2E%2E/s.jsonl", {}),
    ("double encoding", "PUT", "/inbox/v1/claude/projects/%252e%252e/s.jsonl", {}),
    ("encoded NUL", "PUT", C + "s.jsonl%00.txt", {}),
    ("raw backslash", "PUT", C + "..\\..\\..\\x.jsonl", {}),
    ("encoded space", "PUT", "/inbox/v1/claude/projects/my%20project/s.jsonl", {}),
    ("encoded non-ASCII", "PUT", C + "s%C3%A9.jsonl", {}),
    ("unknown agent", "PUT", "/inbox/v1/gemini/tmp/demo/chats/session.json", {}),
    ("another device by name", "PUT", "/inbox/v1/desk/claude/projects/p/s.jsonl", {}),
    ("another device through dot-dot", "PUT", "/inbox/v1/claude/../../desk/claude/projects/p/s.jsonl", {}),
    ("hidden file", "PUT", C + ".s.jsonl", {}),
    ("the hints folder", "PUT", "/inbox/v1/claude/.hints/projects/p/s.jsonl", {}),
    ("a temporary file's name", "PUT", C + ".upload-0123.part", {}),
    ("agent settings", "PUT", "/inbox/v1/claude/settings.json", {}),
    ("agent credentials", "PUT", "/inbox/v1/claude/.credentials.json", {}),
    ("too deep for Claude Code", "PUT", C + "s/t/u.jsonl", {}),
    ("not a transcript name", "PUT", C + "s.txt", {}),
    ("loose file at the top of projects", "PUT", "/inbox/v1/claude/projects/s.jsonl", {}),
    ("codex month 13", "PUT", "/inbox/v1/codex/sessions/2026/13/01/rollout-a.jsonl", {}),
    ("codex rollout without its date folders", "PUT", "/inbox/v1/codex/sessions/rollout-a.jsonl", {}),
    ("codex credentials", "PUT", "/inbox/v1/codex/auth.json", {}),
    ("codex config", "PUT", "/inbox/v1/codex/config.toml", {}),
    ("codex file that is not a rollout", "PUT", "/inbox/v1/codex/sessions/2026/01/01/notes.jsonl", {}),
    ("trailing slash", "PUT", C, {}),
    ("a folder, not a file", "PUT", "/inbox/v1/claude/projects", {}),
    ("no agent", "PUT", "/inbox/v1/", {}),
    ("path params", "PUT", "/inbox/v1/claude/projects/p;x=1/s.jsonl", {}),
    ("drive letter", "PUT", "/inbox/v1/claude/C:/x.jsonl", {}),
    ("home tilde", "PUT", "/inbox/v1/claude/~/.ssh/authorized_keys", {}),
    ("path far too long", "PUT", C + "a" * 2000 + ".jsonl", {}),
    ("name far too long", "PUT", "/inbox/v1/claude/projects/" + "p" * 300 + "/s.jsonl", {}),
    ("symlinked folder in the device folder", "PUT", "/inbox/v1/claude/projects/evil/s.jsonl", {}),
    ("symlinked file in the device folder", "PUT", C + "linked.jsonl", {}),
    ("a file where a folder must be", "PUT", C + "taken.jsonl/subagents/agent-a1.jsonl", {}),
    ("device folder is a symlink", "PUT", C + "s.jsonl", {"key": KEYS["desk"]}),
    ("wrong content type", "PUT", C + "s.jsonl", {"headers": {"Content-Type": "text/html"}}),
    ("no content type", "PUT", C + "s.jsonl", {"headers": {"Content-Type": None}}),
    ("multipart form", "PUT", C + "s.jsonl", {"headers": {"Content-Type": "multipart/form-data; boundary=x"}}),
    ("oversize body", "PUT", C + "s.jsonl", {"body": b"{" + b"x" * (CAP + 10)}),
    ("oversize chunked body", "PUT", C + "s.jsonl", {"chunks": [b"{" + b"x" * 16383] * 6}),
    ("declared oversize", "PUT", C + "s.jsonl", {"headers": {"Content-Length": str(CAP * 1000)}, "body": None}),
    ("empty body", "PUT", C + "s.jsonl", {"body": b""}),
    ("binary body for a .jsonl", "PUT", C + "s.jsonl", {"body": b"\x7fELF\x02\x01\x01" + b"\x00" * 64}),
    ("a .zst that is not zstd", "PUT", "/inbox/v1/codex/sessions/2026/01/01/rollout-a.jsonl.zst", {"body": LINE}),
    ("project hint with a path", "PUT", C + "s.jsonl", {"headers": {"X-Jezero-Project": "../../etc"}}),
    ("project hint in capitals", "PUT", C + "s.jsonl", {"headers": {"X-Jezero-Project": "Shop Api"}}),
    ("no key", "PUT", C + "s.jsonl", {"key": None}),
    ("a wrong key", "PUT", C + "s.jsonl", {"key": "jz_guessed"}),
    ("a key that may read but not upload", "PUT", C + "s.jsonl", {"key": KEYS["reader"]}),
    ("POST instead of PUT", "POST", C + "s.jsonl", {}),
    ("DELETE", "DELETE", "/inbox/v1/" + SESSION, {}),
]


@pytest.fixture
def traps(inbox) -> Inbox:
    """An inbox with a valid file already stored, and the symlinks an attacker would hope for."""
    inbox.outside.mkdir()
    (inbox.outside / "secret.jsonl").write_bytes(b'{"secret": true}\n')
    assert inbox.put(SESSION)[0] == 200
    assert inbox.put("claude/projects/-home-ann-src-shop/taken.jsonl")[0] == 200
    projects = inbox.inbox / "laptop" / "claude" / "projects"
    (projects / "evil").symlink_to(inbox.outside, target_is_directory=True)
    (projects / "-home-ann-src-shop" / "linked.jsonl").symlink_to(inbox.outside / "secret.jsonl")
    (inbox.inbox / "desk").symlink_to(inbox.outside, target_is_directory=True)
    return inbox


def test_the_table_is_long_enough():
    assert len(HOSTILE) >= 40
    assert len({what for what, *_ in HOSTILE}) == len(HOSTILE)


@pytest.mark.parametrize(("what", "method", "path", "options"), HOSTILE, ids=[h[0] for h in HOSTILE])
def test_a_hostile_upload_is_refused_and_writes_nothing(traps, what, method, path, options):
    before = traps.snapshot()
    options = dict(options)
    body = options.pop("body", LINE)
    status, text = traps.request(method, path, body, key=options.pop("key", KEYS["laptop"]), **options)
    assert 400 <= status < 500, (what, status, text)
    assert "\n" not in text.strip() and "Traceback" not in text
    if text.startswith("{"):
        assert json.loads(text).get("error")
    assert traps.snapshot() == before, what
    assert (traps.outside / "secret.jsonl").read_bytes() == b'{"secret": true}\n'
    assert sorted(p.name for p in traps.outside.iterdir()) == ["secret.jsonl"]
    assert traps.serving()
    assert traps.put(SESSION, LINE * 2)[0] == 200  # and still storing honest uploads
