"""A small mock model endpoint on 127.0.0.1 for the agent end-to-end tests.

It speaks just enough of the four wire formats the five CLIs use (Anthropic Messages for Claude,
OpenAI Responses for Codex, chat completions for Copilot and OpenCode, Gemini's generateContent)
to answer every turn with a short text, and logs every request body so a test can assert what
the agent sent to its model (the hooks' context must be in it). It never calls a tool, so no CLI
can loop. Any path prefix works (/v1, /v1beta, ...).
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

REPLY = "MOCK-REPLY"


def _sse(events: list[tuple[str | None, dict]]) -> bytes:
    out = []
    for name, data in events:
        if name:
            out.append(f"event: {name}\n")
        out.append("data: " + json.dumps(data) + "\n\n")
    return "".join(out).encode()


def anthropic_stream(model: str) -> bytes:
    usage = {"input_tokens": 42, "output_tokens": 7}
    return _sse([
        ("message_start", {"type": "message_start", "message": {
            "id": "msg_mock", "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": usage}}),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ("ping", {"type": "ping"}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": REPLY}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                           "usage": {"output_tokens": 7}}),
        ("message_stop", {"type": "message_stop"}),
    ])


def responses_stream(model: str) -> bytes:
    seq = iter(range(1000))
    rid, mid = "resp_mock", "msg_mock"
    base = {"id": rid, "object": "response", "created_at": int(time.time()), "model": model, "output": []}
    item = {"id": mid, "type": "message", "role": "assistant", "status": "in_progress", "content": []}
    part = {"type": "output_text", "text": "", "annotations": []}
    done_item = {**item, "status": "completed", "content": [{**part, "text": REPLY}]}
    usage = {"input_tokens": 42, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 7,
             "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 49}
    events = [
        {"type": "response.created", "response": {**base, "status": "in_progress"}},
        {"type": "response.in_progress", "response": {**base, "status": "in_progress"}},
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        {"type": "response.content_part.added", "item_id": mid, "output_index": 0, "content_index": 0, "part": part},
        {"type": "response.output_text.delta", "item_id": mid, "output_index": 0, "content_index": 0, "delta": REPLY},
        {"type": "response.output_text.done", "item_id": mid, "output_index": 0, "content_index": 0, "text": REPLY},
        {"type": "response.content_part.done", "item_id": mid, "output_index": 0, "content_index": 0,
         "part": {**part, "text": REPLY}},
        {"type": "response.output_item.done", "output_index": 0, "item": done_item},
        {"type": "response.completed", "response": {**base, "status": "completed", "output": [done_item], "usage": usage}},
    ]
    return _sse([(e["type"], {**e, "sequence_number": next(seq)}) for e in events])


def chat_stream(model: str) -> bytes:
    base = {"id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": int(time.time()), "model": model}
    chunks = [
        {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": REPLY}, "finish_reason": None}]},
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        {**base, "choices": [], "usage": {"prompt_tokens": 42, "completion_tokens": 7, "total_tokens": 49}},
    ]
    return ("".join("data: " + json.dumps(c) + "\n\n" for c in chunks) + "data: [DONE]\n\n").encode()


def chat_json(model: str) -> dict:
    return {"id": "chatcmpl-mock", "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": REPLY}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 42, "completion_tokens": 7, "total_tokens": 49}}


def gemini_answer(text: str) -> dict:
    return {"candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 42, "candidatesTokenCount": 7, "totalTokenCount": 49},
            "modelVersion": "mock"}


def _fill_schema(schema: Any) -> Any:
    """A value that fits a (Gemini, upper-case typed) JSON schema: Gemini's model router asks for one."""
    if not isinstance(schema, dict):
        return None
    kind = str(schema.get("type", "")).lower()
    if "enum" in schema and schema["enum"]:
        return schema["enum"][0]
    if kind == "object":
        return {k: _fill_schema(v) for k, v in (schema.get("properties") or {}).items()}
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        return 1
    if kind == "boolean":
        return False
    return "simple"


class MockModel:
    """Start with `with MockModel() as mock:`; `mock.url`, `mock.requests` (the bodies, parsed)."""

    def __init__(self):
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        mock = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def _send(self, status: int, body: bytes, kind: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                if "/models" in self.path:
                    self._send(200, json.dumps({"object": "list", "data": [{"id": "mock-model", "object": "model"}],
                                                "models": []}).encode(), "application/json")
                else:
                    self._send(404, b'{"error":"not found"}', "application/json")

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"raw": raw.decode("utf-8", "replace")}
                with mock._lock:
                    mock.requests.append({"path": self.path, "body": body})
                path = self.path.split("?")[0]
                model = str(body.get("model") or "mock-model") if isinstance(body, dict) else "mock-model"
                if path.endswith("/count_tokens"):
                    self._send(200, b'{"input_tokens": 42}', "application/json")
                elif path.endswith("/messages"):
                    self._send(200, anthropic_stream(model), "text/event-stream")
                elif path.endswith("/responses"):
                    self._send(200, responses_stream(model), "text/event-stream")
                elif path.endswith("/chat/completions"):
                    if body.get("stream"):
                        self._send(200, chat_stream(model), "text/event-stream")
                    else:
                        self._send(200, json.dumps(chat_json(model)).encode(), "application/json")
                elif ":streamGenerateContent" in path:
                    self._send(200, ("data: " + json.dumps(gemini_answer(REPLY)) + "\n\n").encode(), "text/event-stream")
                elif ":generateContent" in path:
                    config = body.get("generationConfig") or {}
                    schema = config.get("responseJsonSchema") or config.get("responseSchema")
                    text = json.dumps(_fill_schema(schema)) if schema else REPLY
                    self._send(200, json.dumps(gemini_answer(text)).encode(), "application/json")
                elif ":countTokens" in path:
                    self._send(200, b'{"totalTokens": 42}', "application/json")
                else:
                    self._send(404, b'{"error":"not found"}', "application/json")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> "MockModel":
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def sent(self) -> str:
        """Every request body as one text, to look for what the hooks added."""
        with self._lock:
            return "\n".join(json.dumps(r["body"], ensure_ascii=False) for r in self.requests)
