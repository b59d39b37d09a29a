"""Made-up sessions written as GitHub Copilot CLI 1.0 writes them (`session-state/<id>/events.jsonl`,
one event per line, each pointing at the one before, and `workspace.yaml`), for `jezero up --demo`
and the tests: the demo then goes through this connector like a real Copilot home does."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from jezero.plugin import DemoSession, Turn


@dataclass
class Step:
    """A prompt ("user"), an answer ("assistant"), or a tool call ("tool") with its output."""

    kind: str
    text: str = ""
    tool: str | None = None
    args: dict = field(default_factory=dict)
    output: str = ""
    success: bool = True


def _stamp(t: datetime) -> str:
    return t.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def write_session(home: Path, cwd: str, started: datetime, steps: list[Step], *, session_id: str | None = None,
                  model: str = "gpt-4.1", branch: str = "main") -> Path:
    """One session under `home` (a Copilot home); returns its events.jsonl."""
    session_id = session_id or str(uuid.uuid4())
    folder = home / "session-state" / session_id
    folder.mkdir(parents=True, exist_ok=True)
    t = started
    events: list[dict[str, Any]] = []

    def event(kind: str, data: dict) -> None:
        events.append({"type": kind, "data": data, "id": str(uuid.uuid4()), "timestamp": _stamp(t),
                       "parentId": events[-1]["id"] if events else None})

    event("session.start", {"sessionId": session_id, "version": 1, "producer": "copilot-agent", "copilotVersion": "1.0.102",
                            "startTime": _stamp(t), "selectedModel": model,
                            "context": {"cwd": cwd, "gitRoot": cwd, "branch": branch}})
    turn = 0
    for step in steps:
        t += timedelta(seconds=20)
        if step.kind == "user":
            event("user.message", {"content": step.text, "transformedContent": step.text, "attachments": []})
        elif step.kind == "assistant":
            event("assistant.turn_start", {"turnId": str(turn)})
            event("assistant.message", {"messageId": str(uuid.uuid4()), "model": model, "content": step.text, "toolRequests": []})
            event("assistant.turn_end", {"turnId": str(turn)})
            turn += 1
        else:
            call_id = f"call_{uuid.uuid4().hex[:20]}"
            event("assistant.message", {"messageId": str(uuid.uuid4()), "model": model, "content": "",
                                        "toolRequests": [{"toolCallId": call_id, "name": step.tool, "arguments": step.args,
                                                          "type": "function"}]})
            event("tool.execution_start", {"toolCallId": call_id, "toolName": step.tool, "arguments": step.args})
            event("tool.execution_complete", {"toolCallId": call_id, "success": step.success, "model": model,
                                              "result": {"content": step.output}})
    event("session.shutdown", {})
    (folder / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    first = next((s.text for s in steps if s.kind == "user"), "")
    (folder / "workspace.yaml").write_text(
        f"id: {session_id}\ncwd: {cwd}\ngit_root: {cwd}\nbranch: {branch}\nclient_name: github/cli\n"
        f"name: {json.dumps(first[:60])}\nuser_named: false\ncreated_at: {_stamp(started)}\nupdated_at: {_stamp(t)}\n")
    return folder / "events.jsonl"


def demo(folder: Path, sessions: list[DemoSession]) -> dict[str, Any]:
    """Write `sessions` as a Copilot home under `folder`; the options that read it."""
    for spec in sessions:
        write_session(folder, spec.cwd, spec.started, [_step(turn) for turn in spec.turns], session_id=spec.id,
                      model=spec.model or "gpt-4.1", branch=spec.branch)
    (folder / "session-state").mkdir(parents=True, exist_ok=True)
    return {"path": str(folder.absolute())}


def _step(turn: Turn) -> Step:
    if turn.role == "user":
        return Step("user", turn.text)
    if turn.role == "assistant":
        return Step("assistant", turn.text)
    # The bash tool ends its output with the command's exit code; the call itself succeeded.
    code = 1 if turn.failed else 0
    output = f"{turn.output}\n<exited with exit code {code}>" if turn.output else f"<exited with exit code {code}>"
    return Step("tool", tool="bash", args={"command": turn.text, "description": "Run the command"}, output=output)
