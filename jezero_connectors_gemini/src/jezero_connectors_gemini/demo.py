"""Made-up Gemini CLI sessions for `jezero up --demo`, written the way Gemini CLI 0.61 writes them
(JSONL chats under `tmp/<slug>/chats/`, the slug in `projects.json` and `.project_root`)."""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any


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


def write_demo(folder: Path, now: datetime | None = None) -> dict[str, Any]:
    """Two made-up sessions in `folder/gemini`; returns the options that read them."""
    now = now or datetime.now(timezone.utc)
    root = folder / "gemini"
    write_chat(root, "/home/demo/src/weather-app", (now - timedelta(days=9)).replace(hour=10, minute=0, second=0, microsecond=0), [
        Step("user", "The forecast page shows temperatures in Kelvin. Show Celsius instead."),
        Step("tool", tool="grep_search", args={"pattern": "kelvin", "dir_path": "src"},
             output="src/forecast.ts:41: return data.main.temp; // kelvin"),
        Step("tool", tool="replace", args={"file_path": "/home/demo/src/weather-app/src/forecast.ts",
                                             "old_string": "return data.main.temp;",
                                             "new_string": "return data.main.temp - 273.15;"},
             output="Successfully modified file: src/forecast.ts (1 replacements)."),
        Step("tool", tool="run_shell_command", args={"command": "npm test -- forecast"}, output="Tests: 6 passed, 6 total"),
        Step("gemini", "Fixed: the forecast now converts Kelvin to Celsius in src/forecast.ts (temp - 273.15); tests pass."),
    ])
    write_chat(root, "/home/demo/src/weather-app", (now - timedelta(days=4)).replace(hour=15, minute=30, second=0, microsecond=0), [
        Step("user", "Which weather API plan are we on, and what is the rate limit?"),
        Step("tool", tool="read_file", args={"file_path": "/home/demo/src/weather-app/.env.example"},
             output="OPENWEATHER_PLAN=startup\nOPENWEATHER_RATE_LIMIT=600/min"),
        Step("gemini", "We use the OpenWeather Startup plan with a limit of 600 calls per minute."),
    ])
    return {"path": str(root.absolute())}
