"""The device client over a real inbox server on 127.0.0.1 (the fixtures of test_client_core.py):
a rewrite that keeps a file's size and mtime reaches the library, and what is not a regular file
in a store holds nothing."""

from __future__ import annotations

import json

from device_support import wait_for
from test_client_core import core, make_device, server, write_session  # noqa: F401 (server: the fixture)


def test_a_file_rewritten_with_the_same_size_and_mtime_is_sent_again(tmp_path, server):  # noqa: F811
    """Before: the device compared size and mtime alone, so such a rewrite never reached the
    library (harden9). A state kept before the check was is trusted on those two: no upgrade
    sends a device's whole store again."""
    import os

    base, config, inbox = server
    device = make_device(tmp_path, base, config)
    path = write_session(device, "/tmp", lines=5)
    assert device.client("upload", "--wait").returncode == 0
    stored = inbox / "laptop" / "claude" / "projects" / "-p" / path.name
    wait_for(stored.exists)
    st = path.stat()
    path.write_bytes(path.read_bytes().replace(b"line 4", b"LINE 4"))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert device.client("upload", "--wait").returncode == 0
    assert json.loads(device.client("status", "--json").stdout)["last_upload"]["sent"] == 1
    wait_for(lambda: b"LINE 4" in stored.read_bytes())
    assert device.client("upload", "--wait").returncode == 0
    assert json.loads(device.client("status", "--json").stdout)["last_upload"]["sent"] == 0
    sig = core._signature(path)
    assert core._unchanged(sig[:2], sig) and not core._unchanged([sig[0], sig[1] + 1], sig)


def test_a_named_pipe_in_a_store_is_skipped_without_waiting(tmp_path, server):  # noqa: F811
    """The signature opens each file (for its check): a named pipe must not hold the upload, and
    its lock (so every later one), while it waits for a writer. (Held before too: its size is 0.)"""
    import os

    base, config, inbox = server
    device = make_device(tmp_path, base, config)
    path = write_session(device, "/tmp", lines=2)
    os.mkfifo(path.with_name("0b1c2d3e-0000-4000-8000-000000000002.jsonl"))
    done = device.client("upload", "--wait", timeout=60)
    assert done.returncode == 0
    wait_for((inbox / "laptop" / "claude" / "projects" / "-p" / path.name).exists)
