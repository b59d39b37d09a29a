"""The recall tool through real MCP clients: in memory, and a `jezero serve --transport stdio`
subprocess driven by the SDK's stdio client; and `jezero recall` in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from jezero.server import build_mcp_server, shape
from jezero.store import ItemRecord, Store
from jezero.store.messages import MessageRecord
import pg_support
from jz_support import REPO, jezero_command

T0 = datetime(2026, 3, 1, 9, tzinfo=timezone.utc)


@pytest.fixture
def anyio_backend():
    return "asyncio"


def item(sid, source, texts, day=0, project="shop"):
    msgs = [MessageRecord(role, text, T0 + timedelta(days=day, minutes=i)) for i, (role, text) in enumerate(texts)]
    return ItemRecord(uid=f"{source}:{sid}:0", source=source, agent="a", session_id=sid, segment_index=0,
                      occurred_at=T0 + timedelta(days=day), title=f"session {sid}", summary="summary", questions=[],
                      atoms=[], original="(messages)", content_hash=sid, summarizer="x", summary_schema=1,
                      project=project, messages=msgs)


@pytest.fixture
def config_file(tmp_path, store_backend, monkeypatch) -> Path:
    library = tmp_path / "lib.sqlite3"
    with Store(library) as store:
        store.write([
            item("s1", "claude-local", [("user", "the invoice PDF lost its fonts"),
                                        ("assistant", "embed the fonts with weasyprint"),
                                        ("user", "ok, and the long tail " + "words " * 400)]),
            item("s2", "agent-ci", [("user", "weasyprint crashed on the runner")], day=1, project="billing"),
        ])
    path = tmp_path / "config.toml"
    path.write_text(pg_support.storage_section(library, store_backend, monkeypatch)
                    + f'\n[[clients]]\nname = "ci"\nkey_sha256 = "{"a" * 64}"\nsources = ["agent-*"]\n')
    return path


async def call(client, **args):
    result = await client.call_tool("recall", args)
    assert not result.is_error, result.content[0].text
    assert json.loads(result.content[0].text) == result.structured_content
    return result.structured_content


@pytest.mark.anyio
async def test_recall_in_memory(config_file):
    async with Client(build_mcp_server(str(config_file))) as client:
        tool = next(t for t in (await client.list_tools()).tools if t.name == "recall")
        assert tool.annotations.read_only_hint and "boolean" in tool.description
        found = await call(client, query="weasyprint fonts")
        assert [(h["session_id"], h["explain"]["coverage"]) for h in found["hits"]] == [("s1", 2), ("s2", 1), ("s1", 1)]
        assert found["hits"][0]["item_id"] == 1
        window = found["windows"][0]["messages"]
        assert len(window) == 3 and len(window[2]["text"]) <= shape.WINDOW_TEXT_CHARS
        assert (await call(client, query="nothing-like-this"))["note"].startswith("no message")
        bad = await client.call_tool("recall", {"boolean": "fonts AND ("})
        assert bad.is_error and "boolean query" in bad.content[0].text and "Traceback" not in bad.content[0].text
        projects = (await call(client, query="weasyprint", discover=True))["projects"]
        assert [p["project"] for p in projects] == ["billing", "shop"]


@pytest.mark.anyio
async def test_recall_over_stdio_keeps_the_clients_sources(config_file):
    env = {**os.environ, "JEZERO_CONFIG": str(config_file)}
    command, *args = jezero_command()
    params = StdioServerParameters(command=command, args=[*args, "serve", "--transport", "stdio", "--client", "ci"],
                                   env=env, cwd=str(REPO))
    with anyio.fail_after(60):
        async with Client(params) as client:
            found = await call(client, query="weasyprint")
            assert [h["source"] for h in found["hits"]] == ["agent-ci"]


def test_cli_recall(config_file):
    env = {**os.environ, "JEZERO_CONFIG": str(config_file)}
    run = subprocess.run([*jezero_command(), "recall", "weasyprint fonts", "--explain"], env=env, capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert "[item 1]" in run.stdout and "[weasyprint]" in run.stdout and "coverage re-rank" in run.stdout
    bad = subprocess.run([*jezero_command(), "recall", "--boolean", "fonts AND ("], env=env, capture_output=True,
                         text=True, timeout=60)
    assert bad.returncode == 2 and "boolean query" in bad.stderr + bad.stdout and "Traceback" not in bad.stderr
    js = subprocess.run([*jezero_command(), "recall", "weasyprint", "--json", "--role", "user", "--window", "0"],
                        env=env, capture_output=True, text=True, timeout=60)
    assert [h["session_id"] for h in json.loads(js.stdout)["hits"]] == ["s2"]  # s1 says it as the assistant
