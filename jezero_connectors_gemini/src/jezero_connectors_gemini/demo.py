"""Made-up sessions written as Gemini CLI 0.61 writes them (JSONL chats under `tmp/<slug>/chats/`,
the slug in `projects.json` and `.project_root`), for `jezero up --demo` and the tests: the demo
then goes through this connector like a real Gemini folder does."""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from jezero.plugin import DemoSession, Turn


@dataclass
class Step:
    """A prompt ("user"), an answer ("gemini"), or a tool call ("tool") with its output."""

    kind: str
    text: str = ""
    tool: str | None = None
    args: dict = field(default_factory=dict)
    output: str = ""
    status: str = "success"


def _stamp(t: datetime) -> str:
    return t.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def write_chat(root: Path, cwd: str, started: datetime, steps: list[Step], *, session_id: str | None = None,
               model: str = "gemini-2.5-pro") -> Path:
    """One session under `root` (a `.gemini` folder); registers the project if needed."""
    session_id = session_id or str(uuid.uuid4())
    slug = cwd.rstrip("/").rsplit("/", 1)[-1].lower() or "project"
    registry_path = root / "projects.json"
    registry = json.loads(registry_path.read_text()) if registry_path.exists() else {"projects": {}}
    registry["projects"][cwd] = slug
    root.mkdir(parents=True, exist_ok=True)
    registry_path.write_text(json.dumps(registry, indent=2))
    project = root / "tmp" / slug
    (project / "chats").mkdir(parents=True, exist_ok=True)
    (project / ".project_root").write_text(cwd)
    path = project / "chats" / f"session-{started.strftime('%Y-%m-%dT%H-%M')}-{session_id[:8]}.jsonl"
    t = started
    lines: list[Any] = [{"sessionId": session_id, "projectHash": hashlib.sha256(cwd.encode()).hexdigest(),
                         "startTime": _stamp(t), "lastUpdated": _stamp(t), "kind": "main"}]
    for step in steps:
        t += timedelta(seconds=30)
        if step.kind == "user":
            lines.append({"id": str(uuid.uuid4()), "timestamp": _stamp(t), "type": "user", "content": [{"text": step.text}]})
        elif step.kind == "gemini":
            lines.append({"id": str(uuid.uuid4()), "timestamp": _stamp(t), "type": "gemini", "content": step.text,
                          "thoughts": [], "tokens": {"input": 900, "output": 120, "cached": 0, "total": 1020}, "model": model})
        else:
            call_id = f"{step.tool}-{uuid.uuid4().hex[:12]}"
            message = {"id": str(uuid.uuid4()), "timestamp": _stamp(t), "type": "gemini", "content": "", "thoughts": [],
                       "model": model}
            lines.append(message)  # Gemini writes the turn, then again once its tool call is done
            result = [{"functionResponse": {"id": call_id, "name": step.tool, "response": {"output": step.output}}}]
            lines.append(message | {"toolCalls": [{"id": call_id, "name": step.tool, "args": step.args, "result": result,
                                                   "status": step.status, "timestamp": _stamp(t)}]})
        lines.append({"$set": {"lastUpdated": _stamp(t)}})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def demo(folder: Path, sessions: list[DemoSession]) -> dict[str, Any]:
    """Write `sessions` as a Gemini folder under `folder`; the options that read it."""
    root = folder / ".gemini"
    for spec in sessions:
        write_chat(root, spec.cwd, spec.started, [_step(turn) for turn in spec.turns], session_id=spec.id,
                   model=spec.model or "gemini-2.5-pro")
    (root / "tmp").mkdir(parents=True, exist_ok=True)
    return {"path": str(root.absolute())}


def _step(turn: Turn) -> Step:
    if turn.role == "user":
        return Step("user", turn.text)
    if turn.role == "assistant":
        return Step("gemini", turn.text)
    # run_shell_command answers with the output and, for a command that failed, its exit code;
    # the call itself succeeded.
    output = turn.output + ("\nExit Code: 1" if turn.failed else "")
    return Step("tool", tool="run_shell_command", args={"command": turn.text}, output=output)
