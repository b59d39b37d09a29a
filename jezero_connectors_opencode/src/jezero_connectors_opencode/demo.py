"""Made-up OpenCode sessions for `jezero up --demo`, written into an `opencode.db` with the tables
and JSON columns OpenCode 1.18 uses (`session`, `message`, `part`)."""

from __future__ import annotations

import json
import random
import string
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import apsw

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
    failed: bool = False


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


def write_demo(folder: Path, now: datetime | None = None) -> dict[str, Any]:
    """Two made-up sessions in `folder/opencode/opencode.db`; returns the options that read them."""
    now = now or datetime.now(timezone.utc)
    data = folder / "opencode"
    db = data / "opencode.db"
    write_session(db, "/home/demo/src/newsletter", (now - timedelta(days=6)).replace(hour=9, minute=0, second=0, microsecond=0), [
        Step("user", "Emails to Outlook users land in spam. Can you check our DNS records?"),
        Step("tool", tool="bash", args={"command": "dig +short TXT demo-news.example"}, output='"v=spf1 include:_spf.mailhost.example ~all"'),
        Step("tool", tool="bash", args={"command": "dig +short TXT _dmarc.demo-news.example"}, output=""),
        Step("assistant", "SPF is present but there is no DMARC record. Add TXT _dmarc with "
                          "'v=DMARC1; p=quarantine; rua=mailto:dmarc@demo-news.example'."),
    ], title="Outlook spam: missing DMARC record")
    write_session(db, "/home/demo/src/newsletter", (now - timedelta(days=1)).replace(hour=14, minute=0, second=0, microsecond=0), [
        Step("user", "Add an unsubscribe link to the footer template."),
        Step("tool", tool="read", args={"filePath": "/home/demo/src/newsletter/templates/footer.html"}, output="<footer>© Demo News</footer>"),
        Step("tool", tool="edit", args={"filePath": "/home/demo/src/newsletter/templates/footer.html",
                                        "oldString": "<footer>", "newString": "<footer><a href=\"{{unsubscribe_url}}\">Unsubscribe</a> "},
             output="Edit applied successfully."),
        Step("assistant", "Added an Unsubscribe link ({{unsubscribe_url}}) to templates/footer.html."),
    ], title="Unsubscribe link in the footer")
    return {"path": str(data.absolute())}
