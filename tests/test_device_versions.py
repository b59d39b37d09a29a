"""Who uploads, and with which client core: a real `jezero serve` on 127.0.0.1, devices made with
the client core in subprocesses (one as its Claude Code plugin's copy, one with an older core),
their uploads recorded per device and agent by the inbox, and shown by the overview route (only
to keys that may read the device's inbox sources) and by `jezero device list`."""

from __future__ import annotations

import hashlib
import json
import re
import stat
from pathlib import Path

import httpx2
import pytest

from device_support import CLIENT, Device, jezero_serve, wait_for
from jz_support import needs_plugin
from jezero.client_core import CORE_VERSION
from jezero.inbox.uploads import outdated

pytestmark = [pytest.mark.slow]

CLAUDE_SESSION = "projects/-work-shop/0b5e6d1c-0000-4000-8000-000000000001.jsonl"
CODEX_SESSION = "sessions/2026/02/27/rollout-2026-02-27T17-02-45-0000aaaa-bbbb-cccc-dddd-000000000001.jsonl"
READER_KEY = "jz_" + "r" * 43  # a key that may read only the server's own claude sources


def write_session(path, text: str) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path.stat().st_size


def plugin_copy(folder, manifest: str, version: str, core_version: str | None = None):
    """The client core as an agent plugin carries it: a copy beside the plugin's manifest. With
    `core_version`, the copy is of an older core (its version constant rewritten)."""
    folder.mkdir(parents=True)
    script = folder / "jezero_client.py"
    text = CLIENT.read_text()
    if core_version:
        text, n = re.subn(r'^CORE_VERSION = "[^"]+"$', f'CORE_VERSION = "{core_version}"', text, flags=re.M)
        assert n == 1
    script.write_text(text)
    if manifest:
        (folder / manifest).parent.mkdir(parents=True, exist_ok=True)
        (folder / manifest).write_text(json.dumps({"name": "jezero", "version": version}))
    return script


def overview(server, key: str) -> dict:
    resp = httpx2.get(server.base + "/api/v1/overview", headers={"Authorization": f"Bearer {key}"}, timeout=30)
    assert resp.status_code == 200, resp.text
    return resp.json()


def approve(device: Device, name: str, server, jezero) -> str:
    made = device.client("init", "--server", server.base, "--device", name)
    assert made.returncode == 0, made.stderr
    assert jezero(*made.stdout.split()[1:]).returncode == 0
    wait_for(lambda: device.client("status").returncode == 0)
    return (device.home / "device.key").read_text().strip()


@needs_plugin("jezero-connectors-inbox")  # approval writes the device's inbox connectors
def test_the_overview_and_device_list_show_who_uploads_with_which_core(tmp_path, run_cli):
    reader = (f'\n[[clients]]\nname = "reader"\nkey_sha256 = "{hashlib.sha256(READER_KEY.encode()).hexdigest()}"\n'
              'sources = ["claude-*"]\n')
    with jezero_serve(tmp_path / "server", extra_config=reader) as server:
        env = {"JEZERO_CONFIG": str(server.config), "COLUMNS": "220"}
        jezero = lambda *args: run_cli(*args, env=env)
        assert jezero("init").returncode == 0  # the library exists: the overview has counts to give

        # A laptop whose uploads run from its Claude Code plugin's copy of the core.
        laptop = Device(tmp_path / "laptop")
        key = approve(laptop, "laptop", server, jezero)
        size = write_session(laptop.claude / CLAUDE_SESSION, '{"type":"user","cwd":"/work/shop"}\n')
        script = plugin_copy(tmp_path / "plugins" / "claude", ".claude-plugin/plugin.json", "0.3.1")
        sent = laptop.client("upload", "--wait", "--verbose", script=script)
        assert sent.returncode == 0, sent.stderr

        seen = overview(server, key)
        assert seen["client_core_version"] == CORE_VERSION
        assert [d["device"] for d in seen["devices"]] == ["laptop"]
        (claude,) = seen["devices"][0]["agents"]
        assert claude["agent"] == "claude" and claude["source"] == "inbox-laptop-claude"
        assert (claude["core_version"], claude["plugin"], claude["outdated"]) == (CORE_VERSION, "claude/0.3.1", False)
        assert (claude["files"], claude["bytes"]) == (1, size) and claude["last_upload_at"]
        assert seen["devices"][0]["plugins"] == [{"plugin": "claude/0.3.1", "core_version": CORE_VERSION,
                                                  "last_upload_at": claude["last_upload_at"], "outdated": False}]

        # A key limited to other sources does not see the device at all.
        assert overview(server, READER_KEY)["devices"] == []

        # A second computer whose core is older, run on its own (no plugin beside it).
        old = Device(tmp_path / "old-mac")
        old_key = approve(old, "old-mac", server, jezero)
        write_session(old.codex / CODEX_SESSION, '{"type":"session_meta","payload":{"cwd":"/work/infra"}}\n')
        old_core = plugin_copy(tmp_path / "plugins" / "old", "", "", core_version="0.0.9")
        assert old.client("upload", "--wait", script=old_core).returncode == 0
        devices = {d["device"]: d for d in overview(server, old_key)["devices"]}
        assert set(devices) == {"laptop", "old-mac"}
        (codex,) = devices["old-mac"]["agents"]
        assert (codex["agent"], codex["core_version"], codex["plugin"], codex["outdated"]) == ("codex", "0.0.9", None,
                                                                                                True)
        assert not devices["laptop"]["agents"][0]["outdated"]

        # The same facts in `jezero device list`, as JSON and as a table that says OUTDATED in words.
        listed = {d["name"]: d for d in json.loads(jezero("device", "list", "--json").stdout)}
        assert listed["old-mac"]["agents"][0]["core_version"] == "0.0.9"
        assert listed["old-mac"]["agents"][0]["outdated"] is True
        assert listed["laptop"]["agents"][0]["plugin"] == "claude/0.3.1"
        table = jezero("device", "list", "--pretty")
        assert table.returncode == 0, table.stderr
        line = next(l for l in table.stdout.splitlines() if "old-mac" in l and "0.0.9" in l)
        assert "codex" in line and "OUTDATED" in line
        line = next(l for l in table.stdout.splitlines() if "laptop" in l and "claude/0.3.1" in l)
        assert "current" in line and "OUTDATED" not in line
        assert f"client core {CORE_VERSION}" in table.stdout

        # `jezero health` lists the outdated device in words, and that alone is not a problem.
        checked = jezero("health")
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert f"OUTDATED old-mac/codex: last upload came with core 0.0.9, older than this server's {CORE_VERSION}" \
            in checked.stdout
        assert "laptop/claude" not in checked.stdout
        report = json.loads(jezero("health", "--json").stdout)
        assert report["client_core_version"] == CORE_VERSION
        assert {d["device"]: d["agents"][0]["outdated"] for d in report["devices"]} == {"laptop": False,
                                                                                        "old-mac": True}

        # Nothing changed on the laptop: an upload of the same bytes counts no new file. A plugin
        # header that is not "<agent>/<version>" never refuses the upload; it is left out.
        body = (laptop.claude / CLAUDE_SESSION).read_bytes()
        again = httpx2.put(f"{server.base}/inbox/v1/claude/{CLAUDE_SESSION}", content=body, timeout=30,
                           headers={"Authorization": f"Bearer {key}", "Content-Type": "application/octet-stream",
                                    "X-Jezero-Client": CORE_VERSION, "X-Jezero-Plugin": "<script>"})
        assert again.status_code == 200 and again.json()["changed"] is False
        (claude,) = next(d for d in overview(server, key)["devices"] if d["device"] == "laptop")["agents"]
        assert (claude["files"], claude["bytes"], claude["plugin"]) == (1, size, None)

        # The record is the inbox's own, private file; the library holds none of it.
        record = tmp_path / "server" / "inbox" / ".uploads.json"
        assert stat.S_IMODE(record.stat().st_mode) == 0o600
        assert set(json.loads(record.read_text())["devices"]) == {"laptop", "old-mac"}


def test_a_damaged_record_is_read_as_empty_and_rebuilt_by_the_next_upload(tmp_path, run_cli):
    with jezero_serve(tmp_path / "server") as server:
        jezero = lambda *args: run_cli(*args, env={"JEZERO_CONFIG": str(server.config)})
        laptop = Device(tmp_path / "laptop")
        approve(laptop, "laptop", server, jezero)
        (tmp_path / "server" / "inbox").mkdir(exist_ok=True)
        (tmp_path / "server" / "inbox" / ".uploads.json").write_text("{not json")
        listed = jezero("device", "list", "--json")
        assert listed.returncode == 0 and json.loads(listed.stdout)[0]["agents"] == []
        write_session(laptop.claude / CLAUDE_SESSION, '{"type":"user"}\n')
        assert laptop.client("upload", "--wait").returncode == 0
        (claude,) = json.loads(jezero("device", "list", "--json").stdout)[0]["agents"]
        assert (claude["agent"], claude["core_version"], claude["plugin"]) == ("claude", CORE_VERSION, None)

        # Edited by hand into other shapes: read around them, and the next upload mends them.
        record = tmp_path / "server" / "inbox" / ".uploads.json"
        record.write_text(json.dumps({"devices": {"laptop": {"agents": {"claude": {"files": "many",
                                                                                   "core_version": 7}},
                                                             "plugins": ["x"]}}}))
        (claude,) = json.loads(jezero("device", "list", "--json").stdout)[0]["agents"]
        assert (claude["files"], claude["outdated"]) == (0, True)
        with open(laptop.claude / CLAUDE_SESSION, "a") as f:
            f.write('{"type":"assistant"}\n')
        assert laptop.client("upload", "--wait").returncode == 0
        (claude,) = json.loads(jezero("device", "list", "--json").stdout)[0]["agents"]
        assert (claude["files"], claude["core_version"], claude["outdated"]) == (1, CORE_VERSION, False)
        assert "Traceback" not in (tmp_path / "server" / "serve.log").read_text()


def test_an_older_core_is_outdated_and_a_newer_or_equal_one_is_not():
    assert outdated("0.1.0", "0.2.0") and outdated(None, "0.2.0") and outdated("0.9.9", "0.10.0")
    assert not outdated("0.2.0", "0.2.0") and not outdated("0.10.0", "0.2.0") and not outdated("1.0.0rc1", "0.2.0")
    assert not outdated("0.1.0", "unknown")


def test_the_server_ships_the_core_it_compares_with():
    from jezero import client_core

    assert Path(client_core.__file__).read_bytes() == CLIENT.read_bytes()
