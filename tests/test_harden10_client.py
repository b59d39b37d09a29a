"""The device client and what stands between it and the inbox. Only the inbox's own refusal
({"error": ...}, jezero/server/inbox.py) is final: the client marks such a file refused and sends
it again once it changes. A refusal from anything else, a proxy in front of the server (nginx
answers 413 past its 1 MB default), a wrong server URL (404) or a server with no inbox (405),
says nothing about the file.

Before the fix each of those was marked refused for good: once the proxy or the URL was fixed,
every session that did not change again never reached the library, silently (one log line)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from device_support import Device, wait_for
from test_client_core import make_device, server, write_session  # noqa: F401 (server: the fixture)

HTML = b"<html><head><title>%d</title></head><body><center><h1>%d</h1></center><hr><center>nginx</center></body></html>"


class Proxy(BaseHTTPRequestHandler):
    """Answers each upload whose path holds `refuse` with `status` and an HTML page (as nginx
    does) until `fixed` is set; stores every other one, as the inbox answers."""

    status = 413
    refuse = ""
    fixed = False
    puts: list = []

    def do_PUT(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        self.puts.append(self.path)
        if self.refuse in self.path and not self.fixed:
            code, body, kind = self.status, HTML % (self.status, self.status), "text/html"
        else:
            code, body, kind = 200, b'{"changed": true}', "application/json"
        self.send_response(code)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def proxy():
    servers = []

    def start(status: int, refuse: str = ""):
        handler = type("Handler", (Proxy,), {"status": status, "refuse": refuse, "puts": [], "fixed": False})
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return server, handler

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def last_upload(device: Device) -> dict:
    return json.loads(device.client("status", "--json").stdout)["last_upload"]


@pytest.mark.parametrize("status", [404, 405, 413])
def test_a_refusal_not_from_the_inbox_is_sent_again_once_the_cause_is_fixed(tmp_path, proxy, status):
    server, handler = proxy(status)
    device = Device(tmp_path / "d")
    device.client("init", "--server", f"http://127.0.0.1:{server.server_port}", "--device", "d")
    write_session(device, "/tmp")
    assert device.client("upload", "--wait").returncode == 1  # not stored: said, as a server error is
    first = last_upload(device)
    assert (first["sent"], first["refused"]) == (0, 0) and str(status) in first["error"], first
    assert "not an answer of a Jezero inbox" in (device.home / "upload.log").read_text()
    handler.fixed = True
    assert device.client("upload", "--wait").returncode == 0
    second = last_upload(device)
    assert (second["sent"], second["error"]) == (1, None), second
    assert len(handler.puts) == 2 and handler.puts[0] == handler.puts[1]


def test_a_proxys_size_cap_on_one_file_lets_the_others_through(tmp_path, proxy):
    server, handler = proxy(413, refuse="0001.jsonl")
    device = Device(tmp_path / "d")
    device.client("init", "--server", f"http://127.0.0.1:{server.server_port}", "--device", "d")
    big = write_session(device, "/tmp")
    other = big.with_name("0b1c2d3e-0000-4000-8000-000000000002.jsonl")
    other.write_bytes(big.read_bytes())
    assert device.client("upload", "--wait").returncode == 1
    first = last_upload(device)
    assert (first["sent"], first["refused"]) == (1, 0) and "413" in first["error"], first
    handler.fixed = True
    assert device.client("upload", "--wait").returncode == 0
    assert (last_upload(device)["sent"], len(handler.puts)) == (1, 3)  # only the one held back


DAMAGED_STATES = {
    "nested past the parser's depth": "[" * 100_000,
    "last upload a text": '{"files": {}, "last": "x"}',
    "last upload a list": '{"files": {}, "last": [1]}',
    "not an object": "[1, 2]",
    "not UTF-8": '{"files": {"\xff": 1}}',
}


@pytest.mark.parametrize("text", list(DAMAGED_STATES.values()), ids=list(DAMAGED_STATES))
def test_a_damaged_upload_state_starts_over_instead_of_stopping_every_upload(tmp_path, server, text):  # noqa: F811
    """Before: the first two were a traceback for `status` and (the first) every upload, so
    nothing more of the device reached the library until the file was removed by hand."""
    base, config, inbox = server
    device = make_device(tmp_path, base, config)
    path = write_session(device, "/tmp")
    (device.home / "upload-state.json").write_bytes(text.encode("latin-1"))  # "\xff": one byte, not UTF-8
    shown = device.client("status")
    assert shown.returncode == 0 and "Traceback" not in shown.stderr, shown.stderr
    assert "upload:  none yet" in shown.stdout
    done = device.client("upload", "--wait")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert last_upload(device)["sent"] == 1
    wait_for((inbox / "laptop" / "claude" / "projects" / "-p" / path.name).exists)


@pytest.mark.parametrize("file, data", [("client.json", b"[" * 100_000),
                                        ("device.key", b"jz_\xff\xfe\n"),
                                        ("client.json", b'{"server": "http://127.0.0.1:99999", "device": "d"}'),
                                        ("client.json", b'{"server": "http://127.0.0.1:0x1f", "device": "d"}')],
                         ids=["settings nested past the parser's depth", "key not UTF-8", "port past 65535",
                              "port not a number"])
def test_damaged_settings_are_one_line_not_a_traceback(tmp_path, file, data):
    """Before: a traceback (RecursionError, UnicodeDecodeError, ValueError) for status and upload."""
    device = Device(tmp_path / "d")
    assert device.client("init", "--server", "http://127.0.0.1:9", "--device", "d").returncode == 0
    (device.home / file).write_bytes(data)
    for command in (["status"], ["upload", "--wait"]):
        done = device.client(*command)
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        assert done.stderr.startswith("error: ") and len(done.stderr.splitlines()) == 1, done.stderr
