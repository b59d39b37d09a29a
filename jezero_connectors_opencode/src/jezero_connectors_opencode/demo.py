"""Made-up sessions written as OpenCode 1.18 writes them (an `opencode.db` with its `session`,
`message` and `part` tables and JSON columns), for `jezero up --demo` and the tests: the demo then
goes through this connector like a real OpenCode data folder does."""

from __future__ import annotations

import json
import random
import string
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import apsw

from jezero.plugin import DemoSession, Turn

# The columns the connector reads, as OpenCode declares them (Drizzle schema, 1.18).
SCHEMA = """
CREATE TABLE IF NOT EXISTS project (id text PRIMARY KEY, worktree text NOT NULL, vcs text, name text,
    time_created integer NOT NULL, time_updated integer NOT NULL, sandboxes text NOT NULL);
CREATE TABLE IF NOT EXISTS session (id text PRIMARY KEY, project_id text NOT NULL, workspace_id text, parent_id text,
    slug text NOT NULL, directory text NOT NULL, path text, title text NOT NULL, version text NOT NULL,
    share_url text, summary_additions integer, summary_deletions integer, summary_files integer, summary_diffs text,
    metadata text, cost real DEFAULT 0 NOT NULL, tokens_input integer DEFAULT 0 NOT NULL,
    tokens_output integer DEFAULT 0 NOT NULL, tokens_reasoning integer DEFAULT 0 NOT NULL,
    tokens_cache_read integer DEFAULT 0 NOT NULL, tokens_cache_write integer DEFAULT 0 NOT NULL, revert text,
    permission text, agent text, model text, time_created integer NOT NULL, time_updated integer NOT NULL,
    time_compacting integer, time_archived integer);
CREATE TABLE IF NOT EXISTS message (id text PRIMARY KEY, session_id text NOT NULL, time_created integer NOT NULL,
    time_updated integer NOT NULL, data text NOT NULL);
CREATE TABLE IF NOT EXISTS part (id text PRIMARY KEY, message_id text NOT NULL, session_id text NOT NULL,
    time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);
CREATE INDEX IF NOT EXISTS message_session_time_created_id_idx ON message (session_id, time_created, id);
CREATE INDEX IF NOT EXISTS part_message_id_id_idx ON part (message_id, id);
CREATE INDEX IF NOT EXISTS part_session_idx ON part (session_id);
"""


@dataclass
class Step:
    """A prompt ("user"), an answer ("assistant"), or a tool call ("tool") with its output."""

    kind: str
    text: str = ""
    tool: str | None = None
    args: dict = field(default_factory=dict)
    output: str = ""
    failed: bool = False  # the tool call itself failed (status "error")
    metadata: dict = field(default_factory=dict)  # state.metadata: a bash call's exit code, ...


def _ms(t: datetime) -> int:
    return int(t.timestamp() * 1000)


def _id(prefix: str, t: datetime, n: int) -> str:
    # OpenCode ids sort by time: a hex timestamp, then random characters.
    tail = "".join(random.choices(string.ascii_letters + string.digits, k=14))
    return f"{prefix}_{_ms(t) * 1000 + n:014x}{tail}"


def write_session(db_path: Path, cwd: str, started: datetime, steps: list[Step], *, title: str,
                  model: str = "claude-sonnet-4-5", parent_id: str | None = None) -> str:
    """One session in `db_path` (created when missing); returns its id."""
    db_path.parent.mkdir(parents=True, exist_ok=True)
    conn = apsw.Connection(str(db_path))
    try:
        conn.execute(SCHEMA)
        t = started
        sid = _id("ses", t, 0)
        rows: list[tuple[str, tuple]] = []
        n = 0
        user_id = None
        assistant: tuple[str, datetime] | None = None

        def part(mid: str, when: datetime, data: dict) -> None:
            nonlocal n
            n += 1
            rows.append(("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
                         (_id("prt", when, n), mid, sid, _ms(when), _ms(when), json.dumps(data))))

        def message(when: datetime, data: dict) -> str:
            nonlocal n
            n += 1
            mid = _id("msg", when, n)
            rows.append(("INSERT INTO message VALUES (?, ?, ?, ?, ?)", (mid, sid, _ms(when), _ms(when) + 900, json.dumps(data))))
            return mid

        for step in steps:
            t += timedelta(seconds=25)
            if step.kind == "user":
                user_id = message(t, {"role": "user", "time": {"created": _ms(t)}, "agent": "build",
                                      "model": {"providerID": "anthropic", "modelID": model}})
                part(user_id, t, {"type": "text", "text": step.text})
                assistant = None
                continue
            if assistant is None:
                mid = message(t, {"parentID": user_id, "role": "assistant", "mode": "build", "agent": "build",
                                  "path": {"cwd": cwd, "root": cwd}, "modelID": model, "providerID": "anthropic",
                                  "time": {"created": _ms(t), "completed": _ms(t) + 20000}, "finish": "stop"})
                assistant = (mid, t)
                part(mid, t, {"type": "step-start"})
            mid = assistant[0]
            if step.kind == "assistant":
                part(mid, t, {"type": "text", "text": step.text, "time": {"start": _ms(t), "end": _ms(t) + 400}})
            else:
                state = {"status": "error" if step.failed else "completed", "input": step.args, "title": "",
                         "time": {"start": _ms(t), "end": _ms(t) + 1500}}
                state["error" if step.failed else "output"] = step.output
                if step.metadata:
                    state["metadata"] = step.metadata
                part(mid, t, {"type": "tool", "tool": step.tool, "callID": f"toolu_{n:08d}", "state": state})
        conn.execute("INSERT OR IGNORE INTO project VALUES ('global', ?, 'git', NULL, ?, ?, '[]')", (cwd, _ms(started), _ms(t)))
        conn.execute("INSERT INTO session (id, project_id, parent_id, slug, directory, path, title, version, agent, model,"
                     " time_created, time_updated) VALUES (?, 'global', ?, 'demo', ?, '', ?, '1.18.33', 'build', ?, ?, ?)",
                     (sid, parent_id, cwd, title, json.dumps({"id": model, "providerID": "anthropic"}), _ms(started), _ms(t) + 1000))
        for sql, args in rows:
            conn.execute(sql, args)
    finally:
        conn.close()
    return sid


def demo(folder: Path, sessions: list[DemoSession]) -> dict[str, Any]:
    """Write `sessions` into an OpenCode data folder under `folder`; the options that read it."""
    db = folder / "opencode.db"
    for spec in sessions:
        # OpenCode's title until its small model names the session: the reader skips it.
        title = f"New session - {spec.started.strftime('%Y-%m-%dT%H:%M:%S.000Z')}"
        write_session(db, spec.cwd, spec.started, [_step(turn) for turn in spec.turns], title=title,
                      model=spec.model or "claude-sonnet-4-5")
    folder.mkdir(parents=True, exist_ok=True)
    return {"path": str(folder.absolute())}


def _step(turn: Turn) -> Step:
    if turn.role in ("user", "assistant"):
        return Step(turn.role, turn.text)
    # bash completes even when its command fails: the exit code is in the part's metadata.
    return Step("tool", tool="bash", args={"command": turn.text, "description": "Run the command"}, output=turn.output,
                metadata={"output": turn.output, "exit": 1 if turn.failed else 0, "description": "Run the command"})
