"""A hostile MCP client over HTTP: malformed JSON-RPC, wrong types and sizes for every argument of
every tool (read from tools/list), deep nesting, huge numbers, odd headers. Prints every answer
that is not a clean 200/413, and checks after each case that the server still answers."""
import sys
from pathlib import Path
HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path[:0] = [str(HERE), str(REPO / "tests")]
import sys, json, threading, time, socket, hashlib
from pathlib import Path
import tempfile
import httpx2
from test_server_http import record, client_block, KEYS, Running, free_port
from jezero.server import http_server
from jezero.store import Store

tmp = Path(tempfile.mkdtemp())
library = tmp / "library.sqlite3"
with Store(library) as store:
    store.write([record(1, "claude-local", "shop", "Stripe webhook signature check", 0),
                 record(2, "codex-local", "billing", "Invoice rounding", 2)])
run = Running(base="", config=tmp / "config.toml", library=library)
run.write_config(client_block("laptop", ["*"]))
port = free_port()
server = http_server(str(run.config), "127.0.0.1", port, log_level="warning")
th = threading.Thread(target=server.run, daemon=True); th.start()
while not server.started: time.sleep(0.05)
URL = f"http://127.0.0.1:{port}/mcp"
H = {"Authorization": f"Bearer {KEYS['laptop']}", "Accept": "application/json, text/event-stream", "Content-Type": "application/json"}

def post(body, headers=H):
    try:
        r = httpx2.post(URL, content=body if isinstance(body, (bytes, str)) else json.dumps(body), headers=headers, timeout=30)
        return r.status_code, r.text[:300]
    except Exception as e:
        return "EXC", repr(e)[:200]

def call(name, args):
    return {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": name, "arguments": args}}

def healthy():
    s, t = post(call("search", {"query": "webhook"}))
    return s == 200 and "Stripe" in t

cases = {
    "not json": b"{not json",
    "empty": b"",
    "array batch": b'[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]',
    "empty array": b"[]",
    "number": b"42",
    "null": b"null",
    "string": b'"hi"',
    "no method": {"jsonrpc": "2.0", "id": 1},
    "method int": {"jsonrpc": "2.0", "id": 1, "method": 5},
    "wrong version": {"jsonrpc": "1.0", "id": 1, "method": "tools/list"},
    "unknown method": {"jsonrpc": "2.0", "id": 1, "method": "nope/nope"},
    "id object": {"jsonrpc": "2.0", "id": {"a": 1}, "method": "tools/list"},
    "id huge": b'{"jsonrpc":"2.0","id":' + b"9" * 5000 + b',"method":"tools/list"}',
    "params list": {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": [1, 2]},
    "params null": {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": None},
    "name missing": {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"arguments": {}}},
    "name int": {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": 3, "arguments": {}}},
    "unknown tool": call("rm_rf", {}),
    "args list": {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "search", "arguments": [1]}},
    "args string": {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "search", "arguments": "q"}},
    "deep nesting": b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"query":' + b"[" * 100000 + b"]" * 100000 + b"}}}",
    "deep nesting obj": b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"query":"x","extra":' + b'{"a":' * 40000 + b"1" + b"}" * 40000 + b"}}}",
    "big int": b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"query":"x","limit":' + b"9" * 5000 + b"}}}",
    "inf": b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"query":"x","limit":Infinity}}}',
    "nan": b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"query":"x","limit":NaN}}}',
    "1e400": b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"query":"x","limit":1e400}}}',
    "lone surrogate": b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"query":"\\ud800 webhook"}}}',
    "invalid utf8": b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"query":"\xff\xfe webhook"}}}',
    "nul": b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"query":"a\\u0000b"}}}',
    "notification call": {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "search", "arguments": {"query": "x"}}},
    "bad content type": (call("search", {"query": "x"}), {**H, "Content-Type": "text/plain"}),
    "no accept": (call("search", {"query": "x"}), {k: v for k, v in H.items() if k != "Accept"}),
    "duplicate keys": b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","name":"get_item","arguments":{"query":"x"}}}',
}
HOSTILE = [None, True, 0, -1, 2**63, -(2**63), 1.5, "", "x" * 5000, [], ["a"], {}, {"a": 1}, "2026-99-99", "\u0000", "' OR 1=1 --", "NEAR(", "*"]
_tl = json.loads(httpx2.post(URL, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers=H).text)["result"]["tools"]
TOOLS = {t["name"]: list(t["inputSchema"]["properties"]) for t in _tl}
REQ = {t["name"]: t["inputSchema"].get("required", []) for t in _tl}
HOSTILE += ["1; DROP TABLE items", "\ud800", "\u202e", -0.0, 1e308, "0", "-1", "9" * 400, "x" * 300000]
results = {}
ok_answers = {}
for name, body in cases.items():
    headers = H
    if isinstance(body, tuple): body, headers = body
    results[name] = post(body, headers)
    if not healthy(): print("UNHEALTHY after", name)
for tool, params in TOOLS.items():
    for p in params:
        for v in HOSTILE:
            args = {"query": "webhook"} if tool in ("search", "recall") and p != "query" else {}
            if "item_id" in REQ[tool] and p != "item_id": args["item_id"] = 1
            args[p] = v
            s, t = post(call(tool, args))
            if s == 200 and "Error executing tool" not in t and "isError\":true" not in t: ok_answers[tool] = ok_answers.get(tool, 0) + 1
            bad = s not in (200, 413) or "Traceback" in t or "apsw" in t or "OverflowError" in t or "Internal" in t or '"error"' in t and "-32603" in t
            if bad: results[f"{tool}.{p}={str(v)[:20]!r}"] = (s, t)
for k, v in results.items():
    print(f"{k:40} {v[0]} {v[1][:220]}")
print("ok answers", ok_answers); print("healthy at end:", healthy())
server.should_exit = True
