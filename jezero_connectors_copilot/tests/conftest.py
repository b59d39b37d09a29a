"""Helpers for the copilot connector tests: a throwaway Copilot home, event builders, and a reader
that applies the pipeline's cursor contract (store `cursor[key] = value` after each session)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from jezero.plugin import ConnectorContext
from jezero_connectors_copilot import build

SID = "c0b11071-0000-4000-8000-000000000001"
CWD = "/home/me/proj"


class CopilotHome:
    def __init__(self, root: Path):
        self.root = root
        self.warnings: list[str] = []

    def connector(self):
        return build({"path": str(self.root)}, ConnectorContext("copilot-test", self.warnings.append))

    def read(self, cursor: dict | None = None) -> list:
        sessions = list(self.connector().read(cursor if cursor is not None else {}))
        if cursor is not None:
            for s in sessions:
                cursor[s.cursor_key] = json.loads(json.dumps(s.cursor_value))  # as the store keeps it
        return sessions

    def write(self, events: list, *, sid: str = SID, tail: str = "", flat: bool = False, workspace: str | None = None) -> Path:
        path = self.root / "session-state" / (f"{sid}.jsonl" if flat else f"{sid}/events.jsonl")
        path.parent.mkdir(parents=True, exist_ok=True)
        body = "".join((json.dumps(x) if not isinstance(x, str) else x) + "\n" for x in events)
        path.write_bytes((body + tail).encode("utf-8"))
        if workspace is not None:
            (path.parent / "workspace.yaml").write_text(workspace)
        return path


@pytest.fixture
def copilot(tmp_path) -> CopilotHome:
    root = tmp_path / ".copilot"
    root.mkdir()
    return CopilotHome(root)


def stamp(n: int) -> str:
    return f"2026-03-01T10:{n // 60:02d}:{n % 60:02d}.000Z"


def event(kind: str, n: int, data: dict | None = None, **extra) -> dict:
    return {"type": kind, "data": data or {}, "id": f"e{n}", "timestamp": stamp(n), "parentId": f"e{n - 1}" if n else None, **extra}


def start(sid: str = SID, model: str = "gpt-4.1") -> dict:
    return event("session.start", 0, {"sessionId": sid, "copilotVersion": "1.0.102", "startTime": stamp(0),
                                      "selectedModel": model, "context": {"cwd": CWD, "gitRoot": CWD, "branch": "main"}})


def prompt(text: str, n: int) -> dict:
    return event("user.message", n, {"content": text, "transformedContent": f"<current_datetime>x</current_datetime>\n\n{text}"})


def answer(text: str, n: int, requests: list | None = None, model: str = "gpt-4.1", **extra) -> dict:
    return event("assistant.message", n, {"messageId": f"m{n}", "model": model, "content": text, "toolRequests": requests or []}, **extra)


def request(call_id: str, name: str, arguments) -> dict:
    return {"toolCallId": call_id, "name": name, "arguments": arguments, "type": "function"}


def done(call_id: str, n: int, output: str, success: bool = True, **extra) -> dict:
    return event("tool.execution_complete", n, {"toolCallId": call_id, "success": success, "result": {"content": output}}, **extra)


@pytest.fixture
def rec():
    """The builders above (test modules cannot import conftest by name under --import-mode=importlib)."""
    return sys.modules[__name__]
