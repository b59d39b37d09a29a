"""200 connections that send part of a request body (a third of them half-closed), held open
while 20 threads make 200 searches, then all closed; then 5 more searches."""
import sys, json, socket, threading, time
from pathlib import Path
exec((Path(__file__).resolve().parent / "hostile_http.py").read_text().split("cases = {")[0])
body = json.dumps(call("search", {"query": "webhook"})).encode()
# 200 slow/half-closed/abandoned connections
socks = []
for i in range(200):
    s = socket.create_connection(("127.0.0.1", port))
    hdr = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {KEYS['laptop']}\r\n"
           f"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {len(body)}\r\n\r\n").encode()
    s.sendall(hdr + body[: i % len(body)])
    if i % 3 == 0: s.shutdown(socket.SHUT_WR)
    socks.append(s)
ok = [0]; bad = []
def worker():
    for _ in range(10):
        st, t = post(call("search", {"query": "webhook"}))
        if st == 200 and "Stripe" in t: ok[0] += 1
        else: bad.append((st, t[:100]))
ths = [threading.Thread(target=worker) for _ in range(20)]
[t.start() for t in ths]; [t.join() for t in ths]
print("ok", ok[0], "bad", len(bad), bad[:3])
for s in socks: s.close()
for k in range(5):
    st, t = post(call("search", {"query": "webhook"})); print("after close", k, st, t[:120]); time.sleep(2)
server.should_exit = True
