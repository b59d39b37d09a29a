"""A hostile MCP client over stdio (`jezero serve --transport stdio`, the real CLI): odd framing
(blank lines, CRLF, a batch, a line of 4 MB, 64 MB, NUL bytes, no final newline), odd ids, and
every argument of every tool with huge or odd values. Each case is one server process: the case,
then a search that must still be answered. Prints each case whose answer is not a clean result
or error, whose follow-up search was not answered, or whose stderr holds a traceback.

    uv run --locked python benchmarks/faults/hostile_stdio.py"""
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parents[1] / "tests")]
from jz_support import jezero_command  # noqa: E402
from test_server_http import record  # noqa: E402

from jezero.store import Store  # noqa: E402

tmp = Path(tempfile.mkdtemp(prefix="jezero-faults-stdio-"))
library = tmp / "library.sqlite3"
with Store(library) as store:
    store.write([record(1, "claude-local", "shop", "Stripe webhook signature check", 0),
                 record(2, "codex-local", "billing", "Invoice rounding", 2)])
config = tmp / "config.toml"
config.write_text(f'[storage]\npath = "{library}"\n')
INIT = [{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "h", "version": "1"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"}]
CHECK = {"jsonrpc": "2.0", "id": 999, "method": "tools/call", "params": {"name": "search", "arguments": {"query": "webhook"}}}


def line(obj) -> bytes:
    return obj if isinstance(obj, bytes) else json.dumps(obj).encode() + b"\n"


def serve(middle: list) -> tuple[dict, str]:
    data = b"".join(line(x) for x in INIT) + b"".join(line(x) for x in middle) + line(CHECK)
    p = subprocess.run([*jezero_command(), "--config", str(config), "serve", "--transport", "stdio"], input=data,
                       capture_output=True, timeout=300)
    answers = {}
    for raw in p.stdout.splitlines():
        try:
            a = json.loads(raw)
        except ValueError:
            answers.setdefault("unparsed", []).append(raw[:100])
            continue
        if isinstance(a, dict):
            answers[a.get("id")] = a
    return answers, p.stderr.decode("utf-8", "replace")


def call(name, args, id=7):
    return {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": args}}


listed, _ = serve([{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}])
TOOLS = {t["name"]: t["inputSchema"] for t in listed[1]["result"]["tools"]}
HUGE = [None, "", "x" * 1_000_000, "\u0000", "\ud800", 10**30, -(10**30), 1e308, -1, 0, 0.5, True, [], {}, ["a"] * 10_000,
        {"a": {"b": {"c": [1]}}}, "2026-13-45", "9999-12-31T23:59:59Z", "*" * 5000, "../../etc/passwd"]
cases = {
    "blank lines": [b"\n\n\r\n"],
    "crlf": [json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode() + b"\r\n"],
    "batch": [b'[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"ping"}]\n'],
    "nul line": [b"\x00\x00\x00\n"],
    "4 MB line": [json.dumps(call("search", {"query": "y" * (4 << 20)})).encode() + b"\n"],
    "64 MB line": [b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"search","arguments":{"query":"' + b"z" * (64 << 20) + b'"}}}\n'],
    "64 MB of no newline then one": [b"q" * (64 << 20) + b"\n"],
    "id huge int": [b'{"jsonrpc":"2.0","id":' + b"9" * 4000 + b',"method":"ping"}\n'],
    "id float": [{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}],
    "id null": [{"jsonrpc": "2.0", "id": None, "method": "ping"}],
    "id bool": [{"jsonrpc": "2.0", "id": True, "method": "ping"}],
    "id negative": [{"jsonrpc": "2.0", "id": -1, "method": "ping"}],
    "same id twice": [call("search", {"query": "webhook"}, 3), call("search", {"query": "rounding"}, 3)],
    "deep nesting": [b'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"search","arguments":{"query":' + b"[" * 100_000 + b"]" * 100_000 + b"}}}\n"],
    "1000 pipelined": [{"jsonrpc": "2.0", "id": 10_000 + i, "method": "ping"} for i in range(1000)],
    "arguments null": [{"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "search", "arguments": None}}],
    "meta odd": [{"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "search", "arguments": {"query": "x"},
                                                                            "_meta": {"progressToken": [1, 2]}}}],
    "resources/read odd uri": [{"jsonrpc": "2.0", "id": 6, "method": "resources/read", "params": {"uri": "file:///etc/passwd"}}],
    "prompts/get": [{"jsonrpc": "2.0", "id": 6, "method": "prompts/get", "params": {"name": "x" * 10000}}],
    "logging/setLevel odd": [{"jsonrpc": "2.0", "id": 6, "method": "logging/setLevel", "params": {"level": "nope"}}],
    "completion odd": [{"jsonrpc": "2.0", "id": 6, "method": "completion/complete", "params": {"ref": {"type": "x"}, "argument": {}}}],
}
for name, schema in TOOLS.items():
    props = schema.get("properties", {})
    required = {k: "webhook" if k == "query" else 1 for k in schema.get("required", [])}
    for arg in props:
        cases[f"{name}.{arg}"] = [call(name, {**required, arg: v}, id=100 + i) for i, v in enumerate(HUGE)]
    cases[f"{name} unknown arg"] = [call(name, {**required, "nope": 1})]

bad = 0
for name, middle in cases.items():
    answers, stderr = serve(middle)
    problems = []
    if 999 not in answers or "result" not in answers[999] or answers[999]["result"].get("isError"):
        problems.append(f"follow-up search not answered: {str(answers.get(999))[:200]}")
    if "Traceback" in stderr:
        problems.append("traceback: " + stderr.strip().splitlines()[-1][:200])
    for id, a in answers.items():
        if id in (0, 999) or id == "unparsed":
            continue
        r = a.get("result")
        if r is not None and r.get("isError"):
            text = r["content"][0]["text"] if r.get("content") else ""
            if "Error executing tool" in text and ":" not in text.split("Error executing tool", 1)[1][:40]:
                problems.append(f"bare tool error for id {id}: {text[:200]}")
            if "Traceback" in text or "Internal" in text:
                problems.append(f"id {id}: {text[:200]}")
        elif "error" in a and a["error"].get("code") == -32603:
            problems.append(f"internal error for id {id}: {str(a['error'])[:200]}")
    if problems:
        bad += 1
        print(name)
        for p in dict.fromkeys(problems):
            print("   ", p)
    sys.stdout.flush()
print(f"{len(cases)} cases, {bad} with a problem")
