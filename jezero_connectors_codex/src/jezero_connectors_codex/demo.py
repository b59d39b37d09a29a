"""Made-up sessions written as Codex writes them (envelope rollouts under `sessions/YYYY/MM/DD/`),
for `jezero up --demo` and for benchmarks: the demo then goes through this connector like a real
Codex home does."""

from __future__ import annotations

import json
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

from jezero.plugin import DemoSession


def demo(folder: Path, sessions: list[DemoSession]) -> dict[str, Any]:
    """Write `sessions` as a Codex home under `folder`; the options that read it."""
    for spec in sessions:
        write_codex(folder, spec)
    (folder / "sessions").mkdir(parents=True, exist_ok=True)
    return {"path": str(folder)}


def write_codex(home: Path, spec: DemoSession) -> Path:
    """A Codex rollout (envelope lines) under `sessions/YYYY/MM/DD/`."""
    day = spec.started
    folder = home / "sessions" / f"{day:%Y}" / f"{day:%m}" / f"{day:%d}"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"rollout-{day:%Y-%m-%dT%H-%M-%S}-{spec.id}.jsonl"
    t = spec.started
    lines = []

    def line(kind: str, payload: dict) -> None:
        nonlocal t
        t += timedelta(seconds=30)
        lines.append({"timestamp": t.strftime("%Y-%m-%dT%H:%M:%S.000Z"), "type": kind, "payload": payload})

    line("session_meta", {"id": spec.id, "timestamp": t.strftime("%Y-%m-%dT%H:%M:%S.000Z"), "cwd": spec.cwd,
                          "originator": "codex_cli_rs", "cli_version": "0.125.0", "source": "cli",
                          "model_provider": "openai", "git": {"branch": spec.branch}})
    line("turn_context", {"cwd": spec.cwd, "approval_policy": "on-request", "model": spec.model or "gpt-5-codex",
                          "summary": "auto"})
    for turn in spec.turns:
        if turn.role == "user":
            line("response_item", {"type": "message", "role": "user",
                                   "content": [{"type": "input_text", "text": turn.text}]})
            line("event_msg", {"type": "user_message", "message": turn.text, "images": []})
        elif turn.role == "assistant":
            line("response_item", {"type": "message", "role": "assistant",
                                   "content": [{"type": "output_text", "text": turn.text}]})
            line("event_msg", {"type": "agent_message", "message": turn.text})
        else:
            call = f"call_{uuid.uuid4().hex[:20]}"
            line("response_item", {"type": "function_call", "name": "shell", "call_id": call,
                                   "arguments": json.dumps({"command": ["bash", "-lc", turn.text], "workdir": spec.cwd})})
            line("response_item", {"type": "function_call_output", "call_id": call, "output": json.dumps(
                {"output": turn.output, "metadata": {"exit_code": 1 if turn.failed else 0, "duration_seconds": 0.4}})})
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path
