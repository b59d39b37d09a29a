"""Made-up GitHub Copilot CLI sessions for `jezero up --demo`, written the way Copilot CLI 1.0
writes them: `session-state/<id>/events.jsonl` (one event per line, each pointing at the one
before) and `workspace.yaml`."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any


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


def write_demo(folder: Path, now: datetime | None = None) -> dict[str, Any]:
    """Two made-up sessions in `folder/copilot`; returns the options that read them."""
    now = now or datetime.now(timezone.utc)
    home = folder / "copilot"
    write_session(home, "/home/demo/src/mobile-app", (now - timedelta(days=7)).replace(hour=11, minute=0, second=0, microsecond=0), [
        Step("user", "The Android build fails after the Gradle upgrade. Fix it."),
        Step("tool", tool="bash", args={"command": "./gradlew assembleDebug", "description": "Build the app"},
             output="Namespace not specified. Specify a namespace in the module's build file.", success=False),
        Step("tool", tool="edit", args={"path": "/home/demo/src/mobile-app/app/build.gradle",
                                        "old_str": "android {", "new_str": "android {\n    namespace 'com.demo.mobile'"},
             output="File app/build.gradle updated."),
        Step("tool", tool="bash", args={"command": "./gradlew assembleDebug"}, output="BUILD SUCCESSFUL in 41s"),
        Step("assistant", "Fixed: Android Gradle Plugin 8 needs a namespace; added namespace 'com.demo.mobile' "
                          "to app/build.gradle and the debug build succeeds."),
    ])
    write_session(home, "/home/demo/src/mobile-app", (now - timedelta(days=2)).replace(hour=16, minute=0, second=0, microsecond=0), [
        Step("user", "What minimum Android SDK do we support?"),
        Step("tool", tool="view", args={"path": "/home/demo/src/mobile-app/app/build.gradle"}, output="minSdk 26\ntargetSdk 34"),
        Step("assistant", "The app supports Android 8.0 and up (minSdk 26) and targets SDK 34."),
    ])
    return {"path": str(home.absolute())}
