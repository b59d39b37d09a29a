"""The inbox takes what the connectors read. A transcript that starts with a UTF-8 byte order
mark (an editor or a Windows tool wrote it) is read by every connector (jezero.plugin.json_text),
but the inbox's look at the first bytes refused it as "not JSON lines", with a 400 that the
device client takes as refused for good: the session never reached the library, silently
(the client logs one line, and sends the file again only once it changes, to be refused again).

Before the fix both uploads with a mark were answered 400."""

from __future__ import annotations

import json

import pytest

from test_harden_disk_full import mounts  # noqa: F401 (the fixture)
from test_inbox import LINE, SESSION, inbox  # noqa: F401 (the fixture)

BOM = b"\xef\xbb\xbf"
META = "claude/projects/-home-ann-src-shop/0b1c/subagents/agent-a1b2c3.meta.json"


@pytest.mark.parametrize("relative, body", [(SESSION, BOM + LINE * 2), (SESSION, BOM + b"\n" + LINE),
                                            (META, BOM + b'{"agentType": "explore"}')],
                         ids=["jsonl", "jsonl-blank-line", "meta-json"])
def test_a_transcript_with_a_byte_order_mark_is_stored_as_sent(inbox, relative, body):  # noqa: F811
    status, text = inbox.put(relative, body)
    assert status == 200, text
    assert json.loads(text)["changed"] is True
    assert (inbox.inbox / "laptop" / relative).read_bytes() == body


def test_a_mark_before_what_is_not_json_is_still_refused(inbox):  # noqa: F811
    status, text = inbox.put(SESSION, BOM + b"not json\n")
    assert status == 400 and "not JSON lines" in text
    assert not (inbox.inbox / "laptop" / SESSION).exists()


def test_what_a_killed_server_left_of_an_upload_is_removed_at_the_next_start(tmp_path, caplog):
    """A server killed mid-upload (SIGKILL, the OOM killer) left the upload's hidden temporary
    file, up to `[inbox] max_upload_mb`, forever: three kills during a 6.4 MB upload left three
    3.2 MB `.upload-*.part` files (benchmarks/faults, harden10). The next server removes those
    nothing wrote to for an hour; a recent one (another worker's upload under way) and every
    stored file stay. No clock is waited on: the old files are dated back."""
    import logging
    import os
    import time

    from jezero.inbox.folder import ABANDONED_PARTIAL_S, PARTIAL_PREFIX
    from jezero.server import http_server

    folder = tmp_path / "inbox" / "laptop" / "claude" / "projects" / "-p"
    folder.mkdir(parents=True)
    old = [folder / f"{PARTIAL_PREFIX}{n:016x}.part" for n in range(3)]
    recent = folder / f"{PARTIAL_PREFIX}{9:016x}.part"
    stored = folder / "0b1c2d3e-0000-4000-8000-000000000001.jsonl"
    for path in [*old, recent, stored]:
        path.write_bytes(LINE * 10)
    past = time.time() - ABANDONED_PARTIAL_S - 60
    for path in [*old, stored]:
        os.utime(path, (past, past))
    (tmp_path / "config.toml").write_text(f'[storage]\npath = "{tmp_path / "library.sqlite3"}"\n'
                                          f'[inbox]\npath = "{tmp_path / "inbox"}"\n')
    with caplog.at_level(logging.WARNING, logger="jezero.inbox"):
        http_server(str(tmp_path / "config.toml"), "127.0.0.1", 0, log_level="warning")
    assert sorted(p.name for p in folder.iterdir()) == sorted([recent.name, stored.name])
    assert stored.read_bytes() == LINE * 10
    assert f"removed 3 partial upload file(s) ({3 * 10 * len(LINE)} bytes)" in caplog.text


def test_an_inbox_whose_disk_is_full_answers_507_and_keeps_the_stored_file(tmp_path, mounts, caplog):  # noqa: F811
    """Before: a 500 "Internal Server Error" and a full traceback logged per upload. Now 507 with
    the reason (the device sends it again next run, as for any 5xx), one warning line, the partial
    file removed, and the version stored before left as it was."""
    import logging
    import threading

    from device_support import free_port, wait_for
    from jezero.server import http_server
    from test_inbox import Inbox, clients_toml

    disk = mounts.tmpfs(tmp_path / "disk", "1m")
    (tmp_path / "config.toml").write_text(f'[storage]\npath = "{tmp_path / "library.sqlite3"}"\n'
                                          f'[inbox]\npath = "{disk / "inbox"}"\n\n' + clients_toml())
    port = free_port()
    server = http_server(str(tmp_path / "config.toml"), "127.0.0.1", port, log_level="warning")
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        wait_for(lambda: server.started, bound=60, every=0.02)
        box = Inbox(tmp_path, port)
        assert box.put(SESSION, LINE)[0] == 200
        with caplog.at_level(logging.WARNING):
            status, text = box.put(SESSION, LINE * 40_000)  # 3.5 MB on a 1 MB disk
        assert status == 507 and "No space left on device" in json.loads(text)["error"], text
        assert "Traceback" not in caplog.text and "Exception in ASGI application" not in caplog.text
        stored = disk / "inbox" / "laptop" / SESSION
        assert stored.read_bytes() == LINE
        assert [p.name for p in stored.parent.iterdir()] == [stored.name]  # no partial file left
        assert box.serving()
    finally:
        server.should_exit = True
        thread.join(10)
