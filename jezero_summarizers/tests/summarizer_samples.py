"""Sessions and segments from the real transcripts in ../shared/samples (never copied into the
repository), for the summarizer tests.

Two ways in. `connector_sessions` uses the `claude` / `codex` connector types through the plugin
host when they are built. `local_sessions` is a small reader of its own that turns the sample
JSONL into blocks the way the connectors do (each tool call and result says what it did in
`action`, a shell call carries its `command`, a file tool its `paths`, results carry `is_error`);
it keeps these tests independent of the connector distributions. Neither is a connector: no cursors, no sub-agent linking, no
de-duplication beyond what the samples need."""

from __future__ import annotations

import hashlib
import json
import re
import shlex
from datetime import datetime, timezone
from pathlib import Path

from jezero.models import Block, ConnectorContext, Segment, Session

SAMPLES = Path(__file__).resolve().parents[3] / "shared" / "samples"

C1 = "claude/loose/tiny-conversation.jsonl"
C2 = "claude/projects/-Users-dain-workspace-claude-code-log-sample/326189cf-5676-4237-8cde-1ce80aae4a9f.jsonl"
C3 = "claude/projects/-src-experiments-claude_p/29ccd257-68b1-427f-ae5f-6524b7cb6f20.jsonl"
C4 = "claude/projects/-src-experiments-claude_p/29ccd257-68b1-427f-ae5f-6524b7cb6f20/subagents/agent-a2271d1.jsonl"
X1 = "codex/sessions/2026/01/02/rollout-2026-01-02T18-39-45-019b7f94-51b4-7593-922e-ba12b5b73b52.jsonl"
X2 = "codex/sessions/2026/05/11/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
ALL = {"C1": C1, "C2": C2, "C3": C3, "C4": C4, "X1": X1, "X2": X2}

TOOL_TEXT_LIMIT = 4000


def _clip(text: str, limit: int = TOOL_TEXT_LIMIT) -> str:
    if len(text) <= limit:
        return text
    head = limit * 3 // 4
    return f"{text[:head]}\n[... {len(text) - limit} characters cut ...]\n{text[-(limit - head):]}"


def _time(value) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).astimezone(timezone.utc)
    except ValueError:
        return None


def _records(path: Path):
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            yield json.loads(line)


# What the two agents' tools do, as their connectors say it (the summarizers read only this).
_ACTIONS = {
    "Bash": "shell", "Read": "read", "Edit": "edit", "MultiEdit": "edit", "NotebookEdit": "edit", "Write": "write",
    "Grep": "search", "Glob": "search", "LS": "search", "TodoWrite": "plan", "Task": "subagent", "Agent": "subagent",
    "WebFetch": "fetch", "WebSearch": "fetch",
    "shell": "shell", "exec_command": "shell", "write_stdin": "shell", "apply_patch": "edit", "update_plan": "plan",
    "web_search": "fetch",
}
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", re.M)


def normalize(blocks: list[Block]) -> list[Block]:
    """action / command / paths from the tool names, as a connector sets them."""
    running: dict[str, str] = {}
    pending: list[str] = []
    polled: list[str | None] = []
    for b in blocks:
        if b.kind not in ("tool_call", "tool_result"):
            continue
        b.action = _ACTIONS.get(b.tool or "", "other")
        if b.kind == "tool_call" and b.tool == "write_stdin":
            m = re.search(r"session_id\"?\s*:\s*(\d+)", b.text)
            polled.append(running.get(m.group(1)) if m else None)
        elif b.kind == "tool_call" and b.action == "shell":
            b.command = b.text.strip() or None
            if b.command:
                pending.append(b.command)
        elif b.kind == "tool_call" and b.action in ("edit", "write", "read"):
            b.paths = _PATCH_FILE.findall(b.text) or ([b.text.strip()] if b.text.strip() and "\n" not in b.text.strip() else [])
        elif b.kind == "tool_result" and b.tool == "write_stdin":
            b.command = polled.pop(0) if polled else None
        elif b.kind == "tool_result" and (b.action == "shell" or not b.tool):
            command = pending.pop(0) if pending else None
            m = re.search(r"Process running with session ID (\d+)", b.text[:400])
            if m and command:
                running[m.group(1)] = command
    return blocks


# -- Claude Code --------------------------------------------------------------------------------


def _claude_input(name: str, data) -> str:
    if not isinstance(data, dict):
        return json.dumps(data)
    if name == "Bash":
        return data.get("command", "")
    if name in ("Read", "Write", "Edit", "MultiEdit", "NotebookEdit"):
        return data.get("file_path") or data.get("notebook_path") or ""
    if name == "TodoWrite":
        return "\n".join(f"[{t.get('status')}] {t.get('content')}" for t in data.get("todos", []))
    if name in ("Task", "Agent"):
        return f"{data.get('subagent_type', '')}: {data.get('description', '')}\n{data.get('prompt', '')}"
    return json.dumps(data, ensure_ascii=False)


def _claude_user_text(text: str, time) -> list[Block]:
    if text.startswith("Caveat: The messages below"):
        return []
    m = re.match(r"\s*<bash-input>(.*?)</bash-input>", text, re.S)
    if m:
        return [Block("user", "tool_call", m.group(1), time, tool="Bash")]
    m = re.match(r"\s*<bash-stdout>(.*?)</bash-stdout>", text, re.S)
    if m:
        return [Block("tool", "tool_result", _clip(m.group(1)), time, tool="Bash")]
    return [Block("user", "text", text, time)]


def _claude_session(path: Path) -> Session:
    blocks: list[Block] = []
    tools: dict[str, str] = {}
    cwd = branch = model = sid = None
    times = []
    for rec in _records(path):
        time = _time(rec.get("timestamp"))
        if time:
            times.append(time)
        cwd = cwd or rec.get("cwd")
        branch = branch or rec.get("gitBranch") or None
        sid = sid or rec.get("sessionId")
        if rec.get("type") not in ("user", "assistant") or rec.get("isMeta"):
            continue
        message = rec.get("message") or {}
        model = model or message.get("model")
        content = message.get("content")
        if isinstance(content, str):
            blocks += _claude_user_text(content, time)
            continue
        for item in content or []:
            kind = item.get("type")
            if kind == "text" and rec["type"] == "user":
                blocks += _claude_user_text(item["text"], time)
            elif kind == "text":
                blocks.append(Block("assistant", "text", item["text"], time))
            elif kind == "thinking":
                blocks.append(Block("assistant", "thinking", item.get("thinking", ""), time))
            elif kind == "tool_use":
                tools[item["id"]] = item["name"]
                blocks.append(Block("assistant", "tool_call", _claude_input(item["name"], item.get("input")), time, tool=item["name"]))
            elif kind == "tool_result":
                body = item.get("content")
                if isinstance(body, list):
                    body = "\n".join(b.get("text", "") for b in body if isinstance(b, dict))
                blocks.append(Block("tool", "tool_result", _clip(str(body or "")), time,
                                    tool=tools.get(item.get("tool_use_id")), is_error=item.get("is_error") is True))
    return Session(id=str(sid or path.stem), agent="claude-code", blocks=normalize(blocks), cursor_key=path.name, cursor_value=None,
                   cwd=cwd, git_branch=branch, started_at=min(times), ended_at=max(times), model=model)


# -- Codex --------------------------------------------------------------------------------------

_SCAFFOLDING = ("<environment_context>", "# AGENTS.md instructions", "<permissions instructions>", "<user_instructions>")


def _codex_call_text(name: str, arguments) -> str:
    try:
        args = json.loads(arguments) if isinstance(arguments, str) else arguments
    except ValueError:
        return str(arguments)
    if isinstance(args, dict):
        if name == "shell" and isinstance(args.get("command"), list):
            argv = args["command"]
            return argv[2] if len(argv) == 3 and argv[1] in ("-lc", "-c") else shlex.join(argv)
        if name == "exec_command":
            return args.get("cmd", "")
    return json.dumps(args, ensure_ascii=False)


def _codex_output(output) -> tuple[str, bool]:
    text, failed = str(output or ""), False
    if text.lstrip().startswith("{"):
        try:
            data = json.loads(text)
            text = str(data.get("output", ""))
            failed = (data.get("metadata") or {}).get("exit_code", 0) not in (0, None)
        except ValueError:
            pass
    m = re.search(r"Process exited with code (\d+)", text[:400])
    if m and m.group(1) != "0":
        failed = True
    return _clip(text), failed


def _codex_session(path: Path) -> Session:
    blocks: list[Block] = []
    tools: dict[str, str] = {}
    cwd = branch = model = sid = None
    times = []
    for rec in _records(path):
        time = _time(rec.get("timestamp"))
        if time:
            times.append(time)
        payload = rec.get("payload") or {}
        kind = rec.get("type")
        if kind == "session_meta":
            sid, cwd = payload.get("id"), payload.get("cwd")
            branch = (payload.get("git") or {}).get("branch")
        elif kind == "turn_context":
            model = model or payload.get("model")
        elif kind == "response_item":
            ptype = payload.get("type")
            if ptype == "message":
                role = payload.get("role")
                text = "".join(c.get("text", "") for c in payload.get("content", []) if isinstance(c, dict))
                if role == "user" and not text.lstrip().startswith(_SCAFFOLDING):
                    blocks.append(Block("user", "text", text, time))
                elif role == "assistant":
                    blocks.append(Block("assistant", "text", text, time))
            elif ptype in ("function_call", "custom_tool_call"):
                name = payload.get("name") or "?"
                tools[payload.get("call_id")] = name
                text = payload.get("input") if ptype == "custom_tool_call" else _codex_call_text(name, payload.get("arguments"))
                blocks.append(Block("assistant", "tool_call", str(text or ""), time, tool=name))
            elif ptype in ("function_call_output", "custom_tool_call_output"):
                text, failed = _codex_output(payload.get("output"))
                blocks.append(Block("tool", "tool_result", text, time, tool=tools.get(payload.get("call_id")), is_error=failed))
    return Session(id=str(sid or path.stem), agent="codex", blocks=normalize(blocks), cursor_key=path.name, cursor_value=None,
                   cwd=cwd, git_branch=branch, started_at=min(times), ended_at=max(times), model=model)


def local_session(relative: str) -> Session:
    path = SAMPLES / relative
    return _claude_session(path) if relative.startswith("claude/") else _codex_session(path)


# -- through the connectors -----------------------------------------------------------------------


def connector_sessions(agent: str) -> list[Session] | str:
    """Every session the `agent` connector type reads from the samples, or why it cannot."""
    from jezero import plugins

    try:
        ctype = plugins.connector_types().get(agent)
    except Exception as e:  # the plugin host itself failing is reported by its own tests
        return f"the plugin host could not list connector types: {type(e).__name__}: {e}"
    if ctype is None or ctype.build is None:
        return f"connector type {agent!r} is not built yet"
    try:
        connector = ctype.build({"path": str(SAMPLES / agent)}, ConnectorContext(name=f"{agent}-samples", warn=lambda m: None))
        return list(connector.read({}))
    except Exception as e:  # another team's work in progress: report, do not fail these tests
        return f"connector type {agent!r} failed on the samples: {type(e).__name__}: {e}"


# -- segments -----------------------------------------------------------------------------------


def render(blocks: list[Block]) -> str:
    parts = []
    for b in blocks:
        head = b.role if b.kind == "text" else f"{b.kind} {b.tool or ''}{' error' if b.is_error else ''}".strip()
        parts.append(f"[{head}]\n{b.text}")
    return "\n\n".join(parts)


def segment(session: Session, source: str = "samples", blocks: list[Block] | None = None, index: int = 0) -> Segment:
    blocks = session.blocks if blocks is None else blocks
    text = render(blocks)
    digest = hashlib.sha256(text.encode()).hexdigest()
    return Segment(uid=f"{source}:{session.id}:{index}", source=source, session=session, index=index, blocks=blocks,
                   text=text, content_hash=digest, occurred_at=session.ended_at or datetime.now(timezone.utc))


def pipeline_segments(session: Session, source: str, max_input_chars: int = 60_000) -> list[Segment]:
    """The session cut as the pipeline cuts it (jezero.ingest.segments), or one segment of the
    whole session while the pipeline has no segmenter."""
    try:
        from jezero.ingest.segments import segment_session
    except ImportError:
        return [segment(session, source=source)]
    return segment_session(session, source, max_input_chars)
