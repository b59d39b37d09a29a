"""Helpers for the gemini connector tests: a throwaway Gemini folder, record builders, and a reader
that applies the pipeline's cursor contract (store `cursor[key] = value` after each session)."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest

from jezero.plugin import ConnectorContext
from jezero_connectors_gemini import build

# The shared samples live beside the repository (../shared/samples), never inside it.
SAMPLES = Path(__file__).resolve().parents[3] / "shared" / "samples" / "newest"
SID = "5e551011-0000-4000-8000-000000000001"
CWD = "/home/me/proj"


class GeminiFolder:
    def __init__(self, root: Path):
        self.root = root
        self.warnings: list[str] = []

    def connector(self):
        return build({"path": str(self.root)}, ConnectorContext("gemini-test", self.warnings.append))

    def read(self, cursor: dict | None = None) -> list:
        sessions = list(self.connector().read(cursor if cursor is not None else {}))
        if cursor is not None:
            for s in sessions:
                cursor[s.cursor_key] = json.loads(json.dumps(s.cursor_value))  # as the store keeps it
        return sessions

    def write(self, lines: list, *, name: str = f"session-2026-03-01T10-00-{SID[:8]}.jsonl", project: str = "proj",
              tail: str = "", register: bool = True) -> Path:
        if register:
            (self.root / "projects.json").write_text(json.dumps({"projects": {CWD: project}}))
        path = self.root / "tmp" / project / "chats" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        body = "".join((json.dumps(x) if not isinstance(x, str) else x) + "\n" for x in lines)
        path.write_bytes((body + tail).encode("utf-8"))
        return path


@pytest.fixture
def gemini(tmp_path) -> GeminiFolder:
    root = tmp_path / ".gemini"
    root.mkdir()
    return GeminiFolder(root)


def stamp(n: int) -> str:
    return f"2026-03-01T10:{n // 60:02d}:{n % 60:02d}.000Z"


def header(sid: str = SID, cwd: str = CWD, **extra) -> dict:
    return {"sessionId": sid, "projectHash": hashlib.sha256(cwd.encode()).hexdigest(), "startTime": stamp(0),
            "lastUpdated": stamp(0), "kind": "main", **extra}


def user(mid: str, text: str, n: int, **extra) -> dict:
    return {"id": mid, "timestamp": stamp(n), "type": "user", "content": [{"text": text}], **extra}


def gemini_msg(mid: str, text: str, n: int, model: str = "gemini-2.5-pro", **extra) -> dict:
    return {"id": mid, "timestamp": stamp(n), "type": "gemini", "content": text, "thoughts": [], "model": model, **extra}


def call(cid: str, name: str, args: dict, output: str, n: int, status: str = "success") -> dict:
    key = "error" if status == "error" else "output"
    return {"id": cid, "name": name, "args": args, "status": status, "timestamp": stamp(n),
            "result": [{"functionResponse": {"id": cid, "name": name, "response": {key: output}}}]}


@pytest.fixture
def rec():
    """The record builders above (test modules cannot import conftest by name under
    --import-mode=importlib)."""
    return sys.modules[__name__]
