"""Helpers for the codex connector tests: a throwaway Codex home and a reader that applies the
pipeline's cursor contract (store `cursor[key] = value` after each yielded session)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from jezero.models import ConnectorContext
from jezero_connectors_codex import build

REPO_ROOT = Path(__file__).resolve().parents[2]
SAMPLES = REPO_ROOT.parent / "shared" / "samples"


class Home:
    """A Codex home under tmp_path, with writers for each file generation."""

    def __init__(self, root: Path):
        self.root = root
        self.warnings: list[str] = []

    def connector(self, **options):
        return build({"path": str(self.root), **options}, ConnectorContext("codex-test", self.warnings.append))

    def read(self, cursor: dict | None = None, **options) -> list:
        """All sessions of one run; the cursor (when given) advances like the pipeline's."""
        sessions = list(self.connector(**options).read(cursor if cursor is not None else {}))
        if cursor is not None:
            for s in sessions:
                cursor[s.cursor_key] = json.loads(json.dumps(s.cursor_value))  # as a store keeps it
        return sessions

    def write(self, relative: str, lines: list, *, tail: str = "") -> Path:
        """A JSONL file of `lines` (dicts are dumped, strings written as they are)."""
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        body = "".join((json.dumps(x) if not isinstance(x, str) else x) + "\n" for x in lines)
        path.write_bytes((body + tail).encode("utf-8"))
        return path


@pytest.fixture
def home(tmp_path) -> Home:
    root = tmp_path / "codex-home"
    root.mkdir()
    return Home(root)


# ----------------------------------------------------------------------------------------------
# Envelope records (generation 3)


def env(ts: str, kind: str, payload: dict) -> dict:
    return {"timestamp": ts, "type": kind, "payload": payload}


def meta(sid: str, ts: str = "2026-02-01T10:00:00.000Z", **extra) -> dict:
    payload = {"id": sid, "timestamp": ts, "cwd": "/work/proj", "originator": "codex_cli_rs", "cli_version": "0.90.0",
               "source": "cli", "git": {"branch": "main"}} | extra
    return env(ts, "session_meta", payload)


def turn(ts: str, model: str = "gpt-5-codex", cwd: str = "/work/proj") -> dict:
    return env(ts, "turn_context", {"cwd": cwd, "approval_policy": "on-request", "model": model, "summary": "auto"})


def user(ts: str, text: str) -> list[dict]:
    """A prompt as Codex writes it: the response_item and its event_msg mirror."""
    return [
        env(ts, "response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}),
        env(ts, "event_msg", {"type": "user_message", "message": text, "images": []}),
    ]


def answer(ts: str, text: str) -> list[dict]:
    return [
        env(ts, "event_msg", {"type": "agent_message", "message": text}),
        env(ts, "response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}),
    ]


def shell(ts: str, call_id: str, argv: list[str], output: str, code: int = 0) -> list[dict]:
    return [
        env(ts, "response_item", {"type": "function_call", "name": "shell", "arguments": json.dumps({"command": argv}), "call_id": call_id}),
        env(ts, "response_item", {"type": "function_call_output", "call_id": call_id,
                                  "output": json.dumps({"output": output, "metadata": {"exit_code": code, "duration_seconds": 0.1}})}),
        env(ts, "event_msg", {"type": "exec_command_end", "call_id": call_id, "command": argv, "stdout": output, "stderr": "",
                              "aggregated_output": output, "exit_code": code}),
    ]


def rollout_name(sid: str, stamp: str = "2026-02-01T11-00-00") -> str:
    return f"rollout-{stamp}-{sid}.jsonl"


@pytest.fixture
def rec():
    """The record builders above (test modules cannot import conftest by name under
    --import-mode=importlib)."""
    return sys.modules[__name__]
