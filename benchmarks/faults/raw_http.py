"""The MCP server on 127.0.0.1 against raw HTTP no client library sends: huge and many headers, odd
Authorization, paths, methods, Host and Origin, Content-Length and chunked framing, pipelining,
Expect, a TLS hello. Prints the first answer line of each and whether a normal search still works."""
import sys
from pathlib import Path
HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path[:0] = [str(HERE), str(REPO / "tests")]
import json, threading, time, socket, tempfile
from test_server_http import record, client_block, KEYS, Running, free_port
from jezero.server import http_server
from jezero.store import Store
tmp = Path(tempfile.mkdtemp()); library = tmp / "library.sqlite3"
with Store(library) as store:
    store.write([record(1, "claude-local", "shop", "Stripe webhook signature check", 0)])
run = Running(base="", config=tmp / "config.toml", library=library)
run.write_config(client_block("laptop", ["*"]))
port = free_port()
server = http_server(str(run.config), "127.0.0.1", port, log_level="warning")
th = threading.Thread(target=server.run, daemon=True); th.start()
while not server.started: time.sleep(0.05)
KEY = KEYS["laptop"]
BODY = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "search", "arguments": {"query": "webhook"}}}).encode()
def req(path="/mcp", headers=None, body=BODY, method="POST", version="HTTP/1.1"):
    h = {"Host": f"127.0.0.1:{port}", "Authorization": f"Bearer {KEY}", "Accept": "application/json, text/event-stream",
         "Content-Type": "application/json", "Content-Length": str(len(body)), "Connection": "close"}
    if headers is not None:
        for k, v in headers.items():
            if v is None: h.pop(k, None)
            else: h[k] = v
    head = f"{method} {path} {version}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in h.items()) + "\r\n"
    return head.encode("latin-1", "replace") + body
def send(raw, wait=5.0):
    s = socket.create_connection(("127.0.0.1", port), timeout=wait)
    try:
        s.sendall(raw)
        out = b""
        while True:
            try: chunk = s.recv(65536)
            except socket.timeout: out += b"<timeout>"; break
            if not chunk: break
            out += chunk
        return out
    except Exception as e:
        return repr(e).encode()
    finally: s.close()
def healthy():
    r = send(req())
    return b"Stripe" in r
big = b"".join(b"%x\r\n" % 65536 + b"a" * 65536 + b"\r\n" for _ in range(160)) + b"0\r\n\r\n"
cases = {
    "normal": req(),
    "huge header": req(headers={"X-Big": "a" * 200_000}),
    "many headers": req(headers={f"X-{i}": "v" for i in range(5000)}),
    "latin1 key": req(headers={"Authorization": "Bearer jz_\xe9\xff"}),
    "key 1MB": req(headers={"Authorization": "Bearer " + "a" * 1_000_000}),
    "basic auth": req(headers={"Authorization": "Basic bGFwdG9wOmtleQ=="}),
    "two auth": req().replace(b"Authorization:", b"Authorization: Bearer wrong\r\nAuthorization:", 1),
    "path traversal": req(path="/mcp/../inbox/x"),
    "double slash": req(path="//mcp"),
    "key in query": req(path="/mcp?key=" + KEY),
    "absolute uri": req(path=f"http://127.0.0.1:{port}/mcp"),
    "http1.0 no host": req(headers={"Host": None}, version="HTTP/1.0"),
    "cl and te": req(headers={"Transfer-Encoding": "chunked"}),
    "bad chunk": req(headers={"Content-Length": None, "Transfer-Encoding": "chunked"}, body=b"zz\r\nabc\r\n0\r\n\r\n"),
    "chunk huge size": req(headers={"Content-Length": None, "Transfer-Encoding": "chunked"}, body=b"ffffffffffffffff\r\nabc\r\n0\r\n\r\n"),
    "chunked 10MB": req(headers={"Content-Length": None, "Transfer-Encoding": "chunked"}, body=big),
    "chunked ok": req(headers={"Content-Length": None, "Transfer-Encoding": "chunked"}, body=b"%x\r\n" % len(BODY) + BODY + b"\r\n0\r\n\r\n"),
    "cl too long": req(headers={"Content-Length": "999999"}),
    "cl negative": req(headers={"Content-Length": "-5"}),
    "cl two": req().replace(b"Content-Length:", b"Content-Length: 3\r\nContent-Length:", 1),
    "expect 100": req(headers={"Expect": "100-continue"}),
    "pipelined 200": req(headers={"Connection": "keep-alive"}) * 199 + req(),
    "GET": req(method="GET", body=b"", headers={"Content-Length": None}),
    "DELETE": req(method="DELETE", body=b"", headers={"Content-Length": None}),
    "PUT inbox traversal": req(method="PUT", path="/inbox/../../etc/passwd", body=b"x"),
    "OPTIONS": req(method="OPTIONS", body=b"", headers={"Content-Length": None}),
    "weird method": req(method="FOO"),
    "origin evil": req(headers={"Origin": "http://evil.example"}),
    "host evil": req(headers={"Host": "evil.example"}),
    "gzip body": req(headers={"Content-Encoding": "gzip"}),
    "charset latin1": req(headers={"Content-Type": "application/json; charset=latin-1"}),
    "nul in path": req(path="/mcp%00"),
    "utf8 path": req(path="/m\xe9cp"),
    "session id garbage": req(headers={"Mcp-Session-Id": "\x01" * 100}),
    "protocol version garbage": req(headers={"Mcp-Protocol-Version": "9999-99-99"}),
    "not http": b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\x00" * 100,
}
for name, raw in cases.items():
    t = time.perf_counter(); r = send(raw); dt = time.perf_counter() - t
    first = r.split(b"\r\n", 1)[0][:80]
    n200 = r.count(b"HTTP/1.1 200")
    tb = b"Traceback" in r or b"Internal Server Error" in r
    print(f"{name:24} {first!r:60} 200s={n200} {'TRACEBACK/500' if tb else ''} {dt:.2f}s healthy={healthy()}")
server.should_exit = True
