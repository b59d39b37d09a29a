"""Hostile sizes and values at the tool boundary and in the CLI (issue 10, defects 2 and 3):
a clear one-line error, no traceback, nothing changed."""

from __future__ import annotations

import json

import pytest
from mcp import Client

from jezero.query.terms import MAX_QUERY_CHARS, MAX_QUERY_WORDS
from jezero.server import build_mcp_server
from test_server import SAMPLE, config_for, error_text, write_library


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture
def library(tmp_path):
    return write_library(tmp_path / "library.sqlite3", SAMPLE)


HUGE_IDS = [2**63, 2**63 - 1, 2**64, -1, 0, -(2**63) - 1, 10**400]


@pytest.mark.anyio
@pytest.mark.parametrize("tool", ["get_item", "later"])
async def test_out_of_range_ids_are_a_clean_tool_error(library, tool):
    async with Client(build_mcp_server(config_for(library))) as client:
        for ident in HUGE_IDS:
            text = await error_text(client, tool, item_id=ident)
            assert "no item" in text, (ident, text)


@pytest.mark.anyio
async def test_a_huge_query_is_refused_before_any_work(library):
    async with Client(build_mcp_server(config_for(library))) as client:
        text = await error_text(client, "search", query="webhook " * 200_000)
        assert "over the limit" in text and f"{MAX_QUERY_CHARS:,}" in text
        text = await error_text(client, "search", query="a " * (MAX_QUERY_WORDS + 1))
        assert "words" in text and "over the limit" in text
        text = await error_text(client, "later", item_id=1, query="x" * (MAX_QUERY_CHARS + 1))
        assert "over the limit" in text
        ok = await client.call_tool("search", {"query": "webhook " * 100})  # a pasted paragraph still works
        assert not ok.is_error


def test_cli_refuses_a_huge_query_and_a_huge_id(library, tmp_path, run_cli):
    cfg = tmp_path / "c.toml"
    cfg.write_text(f'[storage]\npath = "{library}"\n')
    proc = run_cli("--config", str(cfg), "search", "stripe " * 1000)
    assert proc.returncode == 2 and "over the limit" in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    for ident in (str(2**63), str(10**30)):
        for cmd in ("show", "later"):
            proc = run_cli("--config", str(cfg), cmd, ident)
            assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stderr
            assert "no item" in proc.stderr, proc.stderr
    assert json.loads(run_cli("--config", str(cfg), "search", "stripe", "--json").stdout)


@pytest.mark.anyio
@pytest.mark.parametrize("since", ["0001-01-01T00:00:00+05:00", "9999-12-31T23:59:59-05:00"])
async def test_a_date_out_of_range_reads_as_a_date_not_python(library, since):
    async with Client(build_mcp_server(config_for(library))) as client:
        text = await error_text(client, "search", query="webhook", since=since)
        assert "out of range" in text and "datetime." not in text and "tzinfo" not in text


@pytest.mark.anyio
async def test_hostile_values_in_every_argument_change_nothing(library):
    """NUL bytes, lone surrogates, operators, wrong types, huge limits and filters: a clean answer or
    a clean tool error, never a traceback, and the library byte for byte the same."""
    before = library.read_bytes()
    odd = ["\x00webhook", "\ud800stripe\udfff", 'NEAR("a" "b") OR title:*', "(((", "^" * 5000, "💥" * 1000,
           "\u202e\u2066 webhook", "webhook\x00\x00" * 50]
    async with Client(build_mcp_server(config_for(library))) as client:
        for query in odd:
            r = await client.call_tool("search", {"query": query})
            assert "Traceback" not in r.content[0].text
        for args in ({"query": "webhook", "limit": 2**63}, {"query": "webhook", "limit": -(2**63)},
                     {"query": "webhook", "since": "x" * 100_000}, {"query": "webhook", "project": "p" * 100_000},
                     {"query": "webhook", "source": "*"}, {"query": ["webhook"]}, {"query": None},
                     {"query": {"$gt": ""}}, {"query": "webhook", "explain": "yes please"}):
            r = await client.call_tool("search", args)
            assert "Traceback" not in r.content[0].text and 'File "' not in r.content[0].text, args
        for args in ({"project": "x" * 100_000}, {"since": "2026-13-45"}, {}, {"until": 12}):
            r = await client.call_tool("timeline", args)
            assert "Traceback" not in r.content[0].text, args
        for ident in ("1", 1.5, None, True, [1], "1 OR 1=1"):
            r = await client.call_tool("get_item", {"item_id": ident})
            assert "Traceback" not in r.content[0].text, ident
    assert library.read_bytes() == before


WHOLE_NUMBERS = [2**63 - 1, 2**63, 2**64, -(2**63) - 1, 10**30, -1, 0]


@pytest.mark.anyio
async def test_every_whole_number_argument_of_every_tool_takes_any_size(library):
    """Read from the tools' own schemas, so a new tool or argument is covered: a whole number
    past SQLite's 64 bits is a clean answer or a tool error that says which argument, never an
    OverflowError behind the SDK's bare "Error executing tool"."""
    before = library.read_bytes()
    async with Client(build_mcp_server(config_for(library))) as client:
        tried = 0
        for tool in (await client.list_tools()).tools:
            props = tool.input_schema.get("properties", {})
            numbers = [name for name, spec in props.items()
                       if spec.get("type") == "integer" or {"type": "integer"} in spec.get("anyOf", [])]
            base = {"query": "webhook"} if "query" in props else {}
            if "item_id" in tool.input_schema.get("required", []):
                base["item_id"] = 1
            for name in numbers:
                for value in WHOLE_NUMBERS:
                    r = await client.call_tool(tool.name, {**base, name: value})
                    text = r.content[0].text
                    assert "Traceback" not in text and text != f"Error executing tool {tool.name}", (tool.name, name, value)
                    tried += 1
        assert tried >= 6 * len(WHOLE_NUMBERS)  # search, later, timeline, recall have whole-number arguments
    assert library.read_bytes() == before
