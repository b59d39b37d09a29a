"""A stalled upload against a real server on 127.0.0.1, with both HTTP parsers and a small
`[inbox] upload_idle_seconds`: an upload that stops sending gets 408, is closed and leaves no file
(the one stored before stays as it was); an upload that keeps sending, a chunk well within the
deadline each time, is stored whole however long it takes; a normal upload is served while
stalled ones are held. No duration is asserted: each wait is "until it happens", with a generous
bound that only stops a broken server from hanging the test. Every test here waits for a stalled
upload to be cut, so each fails with the deadline off."""

from __future__ import annotations

import logging
import threading

import pytest

from device_support import free_port, wait_for
from jezero.inbox.folder import PARTIAL_PREFIX, Upload
from jezero.server import http_server, parser
from test_harden_slowloris import assert_timed_out, connect, is_closed, one_response, until_closed
from test_inbox import KEYS, LINE, clients_toml

IDLE_SECONDS = 2.0  # small, so the tests wait little
TRICKLE_EVERY = IDLE_SECONDS / 10  # a trickling device sends this often: far within the deadline
BOUND = 60.0  # the most any wait may take before the test calls the server broken
PROJECT = "claude/projects/-home-ann-src-shop/"
TIMED_OUT = b'upload_idle_seconds)"}'  # the end of the 408's body


@pytest.fixture(params=["httptools", "h11"], scope="module")
def server(request, tmp_path_factory):
    """A server with the small idle deadline and the given parser: (port, the laptop's folder)."""
    root = tmp_path_factory.mktemp(request.param)
    (root / "config.toml").write_text(
        f'[storage]\npath = "{root / "library.sqlite3"}"\n\n[inbox]\npath = "{root / "inbox"}"\n'
        f"upload_idle_seconds = {IDLE_SECONDS}\n\n" + clients_toml())
    with pytest.MonkeyPatch.context() as patch:
        if request.param == "h11":  # what protocol() gives where httptools is not installed
            patch.setattr(parser, "HttpToolsProtocol", None)
        port = free_port()
        uv = http_server(str(root / "config.toml"), "127.0.0.1", port, log_level="warning")
    thread = threading.Thread(target=uv.run, daemon=True)
    thread.start()
    wait_for(lambda: uv.started, bound=BOUND, every=0.02)
    yield port, root / "inbox" / "laptop"
    uv.should_exit = True
    thread.join(10)


def put_head(port: int, relative: str, length: int | None = None) -> bytes:
    """A PUT's head: with a Content-Length, or chunked when `length` is None."""
    size = "Transfer-Encoding: chunked" if length is None else f"Content-Length: {length}"
    return (f"PUT /inbox/v1/{relative} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            f"Authorization: Bearer {KEYS['laptop']}\r\nContent-Type: application/octet-stream\r\n"
            f"{size}\r\n\r\n").encode()


def upload(port: int, relative: str, body: bytes) -> bytes:
    """A normal upload, sent whole at once: the server's answer."""
    with connect(port) as sock:
        sock.sendall(put_head(port, relative, len(body)) + body)
        return one_response(sock)


def stall(port: int, relative: str, sent: bytes, length: int):
    """An upload that declares `length` bytes, sends `sent` and then nothing: the open socket."""
    sock = connect(port)
    sock.sendall(put_head(port, relative, length) + sent)
    return sock


def files_under(folder) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def test_a_stalled_upload_gets_408_and_leaves_the_stored_file_as_it_was(server, monkeypatch, caplog):
    """The stall comes after the body spilled to a temporary file beside the target: it is removed,
    and the file stored before is not touched."""
    port, laptop = server
    relative = PROJECT + "0b1c2d3e-0000-4000-8000-000000000011.jsonl"
    before = LINE * 3
    assert upload(port, relative, before).startswith(b"HTTP/1.1 200")
    monkeypatch.setattr(Upload, "SPOOL_BYTES", 1024)
    longer = LINE * 100
    caplog.set_level(logging.WARNING, logger="jezero.server")
    with stall(port, relative, longer[:2048], len(longer)) as sock:
        wait_for(lambda: any(p.name.startswith(PARTIAL_PREFIX) for p in (laptop / relative).parent.iterdir()),
                 bound=BOUND)
        assert_timed_out(until_closed(sock), TIMED_OUT)
    assert files_under(laptop) == [relative]
    assert (laptop / relative).read_bytes() == before
    assert any("laptop" in r.getMessage() and relative in r.getMessage() and "upload_idle_seconds" in r.getMessage()
               for r in caplog.records if r.levelno == logging.WARNING), [r.getMessage() for r in caplog.records]


def trickle(sock, stop: threading.Event, sent: list[bytes]) -> None:
    """Send chunks of a chunked upload, one every TRICKLE_EVERY, until `stop`; then its end."""
    while not stop.wait(TRICKLE_EVERY):
        chunk = LINE
        sock.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        sent.append(chunk)
    sock.sendall(b"0\r\n\r\n")


def test_an_upload_that_keeps_sending_past_the_deadline_is_stored_whole(server):
    """It outlasts the deadline: a stalled upload opened after it started is cut while it goes on."""
    port, laptop = server
    relative = PROJECT + "0b1c2d3e-0000-4000-8000-000000000012.jsonl"
    stop, sent = threading.Event(), [LINE]
    with connect(port) as sock:
        sock.sendall(put_head(port, relative) + b"%x\r\n%s\r\n" % (len(LINE), LINE))
        sender = threading.Thread(target=trickle, args=(sock, stop, sent), daemon=True)
        sender.start()
        try:
            with stall(port, PROJECT + "0b1c2d3e-0000-4000-8000-000000000013.jsonl", LINE, 10 * len(LINE)) as stalled:
                assert_timed_out(until_closed(stalled), TIMED_OUT)
            assert sender.is_alive()  # still sending when the stalled one was cut
        finally:
            stop.set()
            sender.join(BOUND)
        answer = one_response(sock)
    assert answer.startswith(b"HTTP/1.1 200"), answer[:300]
    assert (laptop / relative).read_bytes() == b"".join(sent)
    assert len(sent) > 1


def test_a_normal_upload_is_served_while_stalled_uploads_are_held(server):
    port, laptop = server
    project = "claude/projects/-home-ann-src-held/"
    body = LINE * 5
    held = []
    try:
        for i in range(6):  # half a head alone, half a head and part of the body
            held.append(stall(port, f"{project}stalled-{i}.jsonl", [b"", LINE][i % 2], len(body)))
        name = "0b1c2d3e-0000-4000-8000-000000000014.jsonl"
        relative = project + name
        assert upload(port, relative, body).startswith(b"HTTP/1.1 200")
        assert (laptop / relative).read_bytes() == body
        wait_for(lambda: all(is_closed(sock) for sock in held), bound=BOUND, every=0.1)
    finally:
        for sock in held:
            sock.close()
    assert files_under(laptop / project) == [name]
