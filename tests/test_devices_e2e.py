"""A laptop feeds the team's server, end to end, as people would run it: a real `jezero serve`,
a device key made with the client core in a subprocess, approved with the CLI, the shared sample
stores uploaded into the inbox, ingested by `jezero run` under the device's inbox sources, and
read by an agent over MCP through `jezero_client.py bridge`. Revoking the device shuts it out."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import tomllib

import anyio
import pytest
from mcp import Client, StdioServerParameters

from device_support import CLIENT, Device, jezero_serve, wait_for
from jz_support import needs_plugin, needs_samples

pytestmark = [needs_samples(), needs_plugin("jezero-connectors-inbox"), pytest.mark.slow]

CLAUDE_FILES = {
    "claude/projects/-Users-dain-workspace-claude-code-log-sample/326189cf-5676-4237-8cde-1ce80aae4a9f.jsonl",
    "claude/projects/-src-experiments-claude_p/29ccd257-68b1-427f-ae5f-6524b7cb6f20.jsonl",
    "claude/projects/-src-experiments-claude_p/29ccd257-68b1-427f-ae5f-6524b7cb6f20/subagents/agent-a2271d1.jsonl",
}
CODEX_FILES = {
    "codex/sessions/2026/01/02/rollout-2026-01-02T18-39-45-019b7f94-51b4-7593-922e-ba12b5b73b52.jsonl",
    "codex/sessions/2026/05/11/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl",
}


@pytest.fixture
def anyio_backend():
    return "asyncio"


def uploaded(folder) -> set[str]:
    if not folder.exists():
        return set()
    """The files stored for a device, leaving out the hidden ones (project hints)."""
    found = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
    return {f for f in found if "/." not in "/" + f}


def test_a_device_uploads_its_sessions_and_its_agents_read_them(tmp_path, run_cli):
    with jezero_serve(tmp_path / "server") as server:
        jezero = lambda *args: run_cli(*args, env={"JEZERO_CONFIG": str(server.config), "COLUMNS": "200"})
        laptop = Device(tmp_path / "laptop")
        laptop.copy_samples()

        # The device makes its key and prints only the digest, as the line that approves it.
        made = laptop.client("init", "--server", server.base, "--device", "laptop")
        assert made.returncode == 0, made.stderr
        key = (laptop.home / "device.key").read_text().strip()
        digest = hashlib.sha256(key.encode()).hexdigest()
        assert made.stdout == f"jezero device approve laptop {digest}\n"
        assert key not in made.stdout + made.stderr
        assert stat.S_IMODE((laptop.home / "device.key").stat().st_mode) == 0o600

        # Not approved yet: the server refuses it, and nothing lands in the inbox.
        assert laptop.client("status").returncode == 1
        refused = laptop.client("upload", "--wait")
        assert refused.returncode == 2
        inbox = tmp_path / "server" / "inbox" / "laptop"
        assert uploaded(inbox) == set()

        approved = jezero(*made.stdout.split()[1:])
        assert approved.returncode == 0, approved.stderr
        config = tomllib.loads(server.config.read_text())
        assert config["clients"] == [{"name": "laptop", "key_sha256": digest, "sources": ["*"], "upload": True}]
        assert {c["name"]: c["enabled"] for c in config["connectors"]} == {
            f"inbox-laptop-{a}": False for a in ("claude", "codex", "gemini", "copilot", "opencode")}
        assert server.config.read_text().startswith("# the test server")  # the admin's file, edited in place

        # The running server takes the approval without a restart.
        wait_for(lambda: laptop.client("status").returncode == 0)
        sent = laptop.client("upload", "--wait", "--verbose")
        assert sent.returncode == 0, sent.stderr
        assert uploaded(inbox) == CLAUDE_FILES | CODEX_FILES
        assert stat.S_IMODE((tmp_path / "server" / "inbox").stat().st_mode) == 0o700
        for name in CLAUDE_FILES | CODEX_FILES:
            agent, _, rest = name.partition("/")
            assert (inbox / name).read_bytes() == (getattr(laptop, agent) / rest).read_bytes()
        state = json.loads(laptop.client("status", "--json").stdout)
        assert state["approved"] and state["last_upload"]["sent"] == 5

        # Nothing changed on the device: nothing is sent again, nothing on the server is touched.
        mtimes = {n: (inbox / n).stat().st_mtime_ns for n in CLAUDE_FILES | CODEX_FILES}
        assert laptop.client("upload", "--wait").returncode == 0
        assert json.loads(laptop.client("status", "--json").stdout)["last_upload"]["sent"] == 0
        assert {n: (inbox / n).stat().st_mtime_ns for n in mtimes} == mtimes

        listed = json.loads(jezero("device", "list", "--json").stdout)
        assert [(d["name"], d["files"]) for d in listed] == [("laptop", 5)]

        # The admin ingests the device's sources (disabled ones run when named).
        ran = jezero("run", "inbox-laptop-claude", "inbox-laptop-codex")
        assert ran.returncode == 0, ran.stdout + ran.stderr

        # An agent on the laptop reads them over MCP through the bridge: no key in its config.
        async def read_through_bridge():
            params = StdioServerParameters(command=os.sys.executable, args=[str(CLIENT), "bridge"], env=laptop.env())
            with anyio.fail_after(60):
                async with Client(params) as client:
                    assert "Never guess" in client.instructions
                    tools = {t.name for t in (await client.list_tools()).tools}
                    assert {"search", "later", "timeline", "get_item", "catalog"} <= tools
                    catalog = (await client.call_tool("catalog", {})).structured_content
                    sources = {s["name"]: s for s in catalog["sources"]}
                    assert {"inbox-laptop-claude", "inbox-laptop-codex"} <= set(sources)
                    timeline = (await client.call_tool("timeline", {"source": "inbox-laptop-codex"})).structured_content
                    assert timeline["items"], timeline
                    item = timeline["items"][0]
                    full = (await client.call_tool("get_item", {"item_id": item["id"]})).structured_content
                    assert full["source"] == "inbox-laptop-codex"
                    return sources

        anyio.run(read_through_bridge)

        # Revoked: the key stops working within a second on the running server.
        assert jezero("device", "revoke", "laptop").returncode == 0
        grown = laptop.codex / sorted(CODEX_FILES)[0].partition("/")[2]

        def upload_refused() -> bool:
            # A new line before every try: an upload that raced the reload and got through leaves
            # the next try something to send.
            with open(grown, "a") as f:
                f.write('{"type":"event_msg","payload":{"type":"agent_message","message":"one more line"}}\n')
            return laptop.client("upload", "--wait").returncode == 2

        wait_for(upload_refused)
        assert (inbox / sorted(CODEX_FILES)[0]).read_bytes() != grown.read_bytes()
        assert laptop.client("status").returncode == 1
