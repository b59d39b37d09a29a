"""Turn one OpenCode session (its info, messages and parts, from the database or from JSON
files: the shapes are the same) into a Session.

A message is `{role, time, modelID, path: {cwd}, error?, summary?}`; its parts, in id order,
carry the content: `text`, `reasoning`, `tool` (`state: {status, input, output | error}`), `file`,
`subtask`, and bookkeeping (`step-start`, `step-finish`, `snapshot`, `patch`, ...)."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from jezero.plugin import Block, Session, clip, parse_time, read_json, strip_ansi, title_line

from . import tools

AGENT = "opencode"
# Parts that carry nothing for a transcript.
KNOWN_PARTS = {"step-start", "step-finish", "snapshot", "patch", "agent", "retry", "compaction"}
# The roles of OpenCode's messages.
ROLES = ("user", "assistant")
# Titles OpenCode gives before the small model has named the session.
DEFAULT_TITLES = ("New session - ", "Child session - ")


@dataclass
class Message:
    info: dict
    parts: list[dict] = field(default_factory=list)


@dataclass
class Raw:
    """A session as read from its source, before it becomes blocks."""

    info: dict  # id, parent_id, directory, title, time_created, time_updated (ms), model
    messages: list[Message]
    warnings: list[str] = field(default_factory=list)
    latest: datetime | None = None  # the newest change the source records


def loads(value: Any, what: str, warnings: list[str]) -> dict | None:
    """A JSON column or file's object, or None with a warning."""
    if isinstance(value, dict):
        return value
    try:
        obj = read_json(value)
    except (TypeError, ValueError):
        warnings.append(f"{what}: not valid JSON, skipped")
        return None
    if not isinstance(obj, dict):
        warnings.append(f"{what}: not a JSON object, skipped")
        return None
    return obj


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return "" if value is None else json.dumps(value, ensure_ascii=False)


def _tool_blocks(part: dict, when: datetime | None) -> list[Block]:
    name = part.get("tool") if isinstance(part.get("tool"), str) else None
    state = part.get("state") if isinstance(part.get("state"), dict) else {}
    args = state.get("input")
    action, command, paths = tools.action(name), tools.command(name, args), tools.paths(name, args)
    start = state.get("time", {}).get("start") if isinstance(state.get("time"), dict) else None
    end = state.get("time", {}).get("end") if isinstance(state.get("time"), dict) else None
    blocks = [Block("assistant", "tool_call", clip(tools.call_text(name, args)), parse_time(start) or when, tool=name, action=action,
                    command=command, paths=list(paths))]
    status = state.get("status")
    if status in ("completed", "error"):
        failed = status == "error" or tools.shell_failed(name, state.get("metadata"))
        body = _text(state.get("error") if status == "error" else state.get("output"))
        blocks.append(Block("tool", "tool_result", clip(strip_ansi(body)), parse_time(end) or when, tool=name,
                            is_error=failed, action=action, command=command, paths=list(paths)))
    return blocks


def _file_text(part: dict) -> str:
    url = part.get("url") if isinstance(part.get("url"), str) else ""
    name = part.get("filename") or (url if url and not url.startswith("data:") else "")
    mime = part.get("mime") or ""
    return f"[file: {', '.join(p for p in (name, mime) if p) or 'attachment'}]"


def blocks_of(raw: Raw) -> tuple[list[Block], Counter, str | None, list[datetime], list[str]]:
    blocks: list[Block] = []
    models: Counter[str] = Counter()
    first_prompt = None
    times: list[datetime] = []
    unknown: Counter[str] = Counter()
    odd_roles: Counter[str] = Counter()  # a role OpenCode does not write: its text is read as the assistant's
    for message in raw.messages:
        info = message.info
        role = info.get("role")
        if role not in ROLES:
            odd_roles[repr(role)] += 1
        mtime = info.get("time") if isinstance(info.get("time"), dict) else {}
        when = parse_time(mtime.get("created"))
        for t in (when, parse_time(mtime.get("completed"))):
            if t is not None:
                times.append(t)
        if role == "assistant" and isinstance(info.get("modelID"), str) and info["modelID"]:
            models[info["modelID"]] += 1
        compaction = role == "assistant" and info.get("summary") is True  # the summary a compaction wrote
        for part in message.parts:
            kind = part.get("type")
            ptime = part.get("time") if isinstance(part.get("time"), dict) else {}
            pwhen = parse_time(ptime.get("start")) or when
            if kind == "text":
                if part.get("synthetic") or part.get("ignored") or not isinstance(part.get("text"), str):
                    continue  # text OpenCode added (file contents, reminders), not said
                text = part["text"].strip()
                if not text:
                    continue
                if role == "user":
                    blocks.append(Block("user", "text", text, pwhen))
                    first_prompt = first_prompt or text
                else:
                    blocks.append(Block("system" if compaction else "assistant", "compaction" if compaction else "text", text, pwhen))
            elif kind == "reasoning":
                text = _text(part.get("text")).strip()
                if text:
                    blocks.append(Block("assistant", "thinking", text, pwhen))
            elif kind == "tool":
                blocks += _tool_blocks(part, pwhen)
            elif kind == "file":
                blocks.append(Block("user" if role == "user" else "assistant", "text", _file_text(part), pwhen))
            elif kind == "subtask":
                text = "\n".join(_text(part.get(k)) for k in ("description", "prompt") if part.get(k))
                blocks.append(Block("assistant", "tool_call", clip(text), pwhen, tool=tools.SUBTASK, action="subagent"))
            elif kind not in KNOWN_PARTS:
                unknown[str(kind)] += 1
        error = info.get("error")
        if isinstance(error, dict):
            data = error.get("data") if isinstance(error.get("data"), dict) else {}
            text = _text(data.get("message") or error.get("name")).strip()
            if text:
                blocks.append(Block("system", "meta", f"[error] {strip_ansi(text)}", when))
    warnings = [f"session {raw.info.get('id')}: unknown part type {k!r} ({n} parts), skipped" for k, n in unknown.items()]
    warnings += [f"session {raw.info.get('id')}: unknown message role {k} ({n} messages), read as the assistant's"
                 for k, n in odd_roles.items()]
    return blocks, models, first_prompt, times, warnings


def session(raw: Raw, *, cursor_key: str, cursor_value: Any) -> Session:
    info = raw.info
    blocks, models, first_prompt, times, warnings = blocks_of(raw)
    created, updated = parse_time(info.get("time_created")), parse_time(info.get("time_updated"))
    times += [t for t in (created, updated, raw.latest) if t is not None]
    model = models.most_common(1)[0][0] if models else None
    if model is None:
        declared = info.get("model")
        if isinstance(declared, str):
            declared = loads(declared, "session.model", []) or {}
        model = declared.get("id") if isinstance(declared, dict) and isinstance(declared.get("id"), str) else None
    cwd = info.get("directory") if isinstance(info.get("directory"), str) and info["directory"] else None
    if cwd is None:
        cwd = next((m.info["path"]["cwd"] for m in raw.messages
                    if isinstance(m.info.get("path"), dict) and isinstance(m.info["path"].get("cwd"), str)), None)
    title = info.get("title") if isinstance(info.get("title"), str) else None
    if title and title.startswith(DEFAULT_TITLES):
        title = None
    return Session(
        id=str(info.get("id")),
        agent=AGENT,
        blocks=blocks,
        cursor_key=cursor_key,
        cursor_value=cursor_value,
        cwd=cwd,
        started_at=created or (min(times) if times else None),
        ended_at=max(times) if times else None,
        parent_id=info.get("parent_id") if isinstance(info.get("parent_id"), str) and info["parent_id"] else None,
        model=model,
        title=title_line(title) or title_line(first_prompt),
        warnings=[*raw.warnings, *warnings],
    )
