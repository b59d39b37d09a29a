"""Made-up sessions written as Claude Code writes them (2.x JSONL under `projects/<cwd>/`), for
`jezero up --demo` and for benchmarks: the demo then goes through this connector like a real
store does."""

from __future__ import annotations

import json
import re
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

from jezero.plugin import DemoSession


def demo(folder: Path, sessions: list[DemoSession]) -> dict[str, Any]:
    """Write `sessions` as a Claude Code store under `folder`; the options that read it."""
    projects = folder / "projects"
    for spec in sessions:
        write_claude(projects, spec)
    projects.mkdir(parents=True, exist_ok=True)
    return {"path": str(projects)}


def _claude_dir_name(cwd: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "-", cwd)


def write_claude(projects: Path, spec: DemoSession) -> Path:
    """A Claude Code 2.x session file under `projects/<encoded cwd>/<id>.jsonl`."""
    folder = projects / _claude_dir_name(spec.cwd)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{spec.id}.jsonl"
    t = spec.started
    parent = None
    lines = []

    def line(kind: str, message: dict, **extra) -> None:
        nonlocal parent, t
        t += timedelta(seconds=40)
        this = str(uuid.uuid4())
        lines.append({"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": spec.cwd,
                      "sessionId": spec.id, "version": "2.1.17", "gitBranch": spec.branch, "type": kind,
                      "message": message, "uuid": this, "timestamp": t.strftime("%Y-%m-%dT%H:%M:%S.000Z"), **extra})
        parent = this

    model = spec.model or "claude-sonnet-4-5"
    for turn in spec.turns:
        if turn.role == "user":
            line("user", {"role": "user", "content": turn.text})
        elif turn.role == "assistant":
            line("assistant", {"id": f"msg_{uuid.uuid4().hex[:20]}", "type": "message", "role": "assistant",
                               "model": model, "content": [{"type": "text", "text": turn.text}],
                               "stop_reason": "end_turn", "usage": {"input_tokens": 10, "output_tokens": 10}})
        else:
            call = f"toolu_{uuid.uuid4().hex[:20]}"
            line("assistant", {"id": f"msg_{uuid.uuid4().hex[:20]}", "type": "message", "role": "assistant",
                               "model": model, "content": [{"type": "tool_use", "id": call, "name": "Bash",
                                                            "input": {"command": turn.text}}],
                               "stop_reason": "tool_use", "usage": {"input_tokens": 10, "output_tokens": 10}})
            line("user", {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call,
                                                       "content": turn.output, "is_error": turn.failed}]},
                 toolUseResult={"stdout": "" if turn.failed else turn.output,
                                "stderr": turn.output if turn.failed else "", "interrupted": False})
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path
