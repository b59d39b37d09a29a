"""Parse one GitHub Copilot CLI event log (`events.jsonl`) into Sessions.

Every line is an event `{type, data, id, timestamp, parentId}`. The conversation is told by
`user.message`, `assistant.message` (text and `toolRequests`), `assistant.reasoning` and
`tool.execution_start/complete`; the rest is bookkeeping (hooks, usage, turns), skipped. Events of
a sub-agent run share the file and carry the run's `agentId`: each run becomes a child session."""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from jezero.plugin import Block, JsonlRead, clip, damage_warnings, parse_time, strip_ansi

from . import tools

AGENT = "copilot-cli"
BAD_LINES_REPORTED = 10

# Events that carry nothing for a transcript, or whose content is read from another event.
KNOWN = {
    "session.start", "session.resume", "session.model_change", "session.info", "session.error",
    "session.warning", "session.shutdown", "session.truncation", "session.idle", "session.usage_record",
    "session.usage_checkpoint", "session.auto_mode_resolved", "session.mode_changed", "session.plan_changed",
    "session.context_changed", "session.task_complete", "session.compaction_start",
    "session.compaction_complete", "session.title_changed", "session.handoff", "session.snapshot_rewind",
    "user.message", "system.message", "assistant.message", "assistant.message_delta", "assistant.reasoning",
    "assistant.reasoning_delta", "assistant.turn_start", "assistant.turn_end", "assistant.usage",
    "assistant.intent", "tool.execution_start", "tool.execution_complete", "tool.execution_progress",
    "tool.execution_partial_result", "tool.user_requested", "subagent.started", "subagent.completed",
    "subagent.failed", "subagent.configured", "subagent.selected", "abort", "pending_messages.modified",
}
KNOWN_PREFIXES = ("hook.", "permission.", "user_input.", "elicitation.", "skill.", "mcp.", "external_tool.", "command.")
# Runtime notices (a background shell or agent finished) arrive as user messages; nobody typed them.
NOTICE_PREFIXES = ("<system_notification>",)
# What Copilot appends to a prompt before the model sees it (hook output, the date).
_REMINDER = re.compile(r"<system_reminder>.*?</system_reminder>|<current_datetime>.*?</current_datetime>", re.DOTALL)


@dataclass
class Thread:
    """The main conversation, or one sub-agent run."""

    blocks: list[Block] = field(default_factory=list)
    calls: dict[str, tuple[str | None, Any]] = field(default_factory=dict)  # toolCallId -> (name, arguments)
    models: Counter = field(default_factory=Counter)
    times: list[datetime] = field(default_factory=list)
    first_prompt: str | None = None
    description: str | None = None  # a sub-agent run's name and task
    model: str | None = None  # the model in force


@dataclass
class EventLog:
    session_id: str | None = None
    cwd: str | None = None
    branch: str | None = None
    started_at: datetime | None = None
    main: Thread = field(default_factory=Thread)
    runs: dict[str, Thread] = field(default_factory=dict)  # agentId -> its thread, in order of first event
    warnings: list[str] = field(default_factory=list)


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(_text(v) for v in value if _text(v))
    if isinstance(value, dict):
        for key in ("text", "content", "message"):
            if isinstance(value.get(key), str):
                return value[key]
        return json.dumps(value, ensure_ascii=False)
    return "" if value is None else str(value)


class EventParser:
    def __init__(self, label: str):
        self.label = label
        self.log = EventLog()
        self._bad = 0
        self._unknown: dict[str, list[int]] = {}

    def thread(self, obj: dict, data: dict) -> Thread:
        agent = obj.get("agentId") or (data.get("agentId") if str(obj.get("type", "")).startswith("subagent.") else None)
        if isinstance(agent, str) and agent:
            return self.log.runs.setdefault(agent, Thread())
        return self.log.main

    def feed(self, line: int, obj: dict) -> None:
        kind = obj.get("type")
        data = obj.get("data") if isinstance(obj.get("data"), dict) else {}
        if not isinstance(kind, str):
            self._unknown_kind(line, "event without a type")
            return
        thread = self.thread(obj, data)
        when = parse_time(obj.get("timestamp"))
        if when is not None:
            thread.times.append(when)
            if thread is not self.log.main:
                self.log.main.times.append(when)  # the parent session lasts as long as its runs
        if kind == "session.start":
            self._start(data)
        elif kind == "session.resume":
            self._context(data.get("context"))
        elif kind == "session.model_change":
            if isinstance(data.get("newModel"), str) and data["newModel"]:
                thread.model = data["newModel"]
        elif kind == "user.message":
            text = data.get("content") if isinstance(data.get("content"), str) else _REMINDER.sub("", _text(data.get("transformedContent")))
            attached = [a.get("path") or a.get("displayName") for a in data.get("attachments") or [] if isinstance(a, dict)]
            text = "\n".join([text.strip(), *(f"[attachment: {a}]" for a in attached if a)]).strip()
            if text and not text.startswith(NOTICE_PREFIXES):
                thread.blocks.append(Block("user", "text", text, when))
                thread.first_prompt = thread.first_prompt or text
        elif kind == "assistant.message":
            self._assistant(thread, data, when)
        elif kind == "assistant.reasoning":
            text = _text(data.get("content") or data.get("text")).strip()
            if text:
                thread.blocks.append(Block("assistant", "thinking", text, when))
        elif kind == "tool.execution_start":
            call_id = data.get("toolCallId")
            if isinstance(call_id, str) and call_id not in thread.calls:
                self._call(thread, call_id, data.get("toolName"), data.get("arguments"), when)
        elif kind == "tool.execution_complete":
            self._result(thread, data, when)
        elif kind in ("session.error", "session.warning"):
            text = _text(data.get("message") or data.get("error")).strip()
            if text:
                thread.blocks.append(Block("system", "meta", f"[{kind.split('.')[1]}] {strip_ansi(text)}", when))
        elif kind == "abort":
            thread.blocks.append(Block("system", "meta", f"[aborted] {_text(data.get('reason'))}".strip(), when))
        elif kind == "session.compaction_complete":
            text = _text(data.get("summaryContent") or data.get("summary")).strip()
            if text:
                thread.blocks.append(Block("system", "compaction", text, when))
        elif kind == "subagent.started":
            parts = [data.get(k) for k in ("agentDisplayName", "agentDescription")]
            thread.description = ": ".join(p.strip() for p in parts if isinstance(p, str) and p.strip()) or None
            if isinstance(data.get("model"), str) and data["model"]:
                thread.model = data["model"]
        elif kind not in KNOWN and not kind.startswith(KNOWN_PREFIXES):
            self._unknown_kind(line, f"event type {kind!r}")

    def _start(self, data: dict) -> None:
        if isinstance(data.get("sessionId"), str) and not self.log.session_id:
            self.log.session_id = data["sessionId"]
        self.log.started_at = self.log.started_at or parse_time(data.get("startTime"))
        if isinstance(data.get("selectedModel"), str) and data["selectedModel"]:
            self.log.main.model = data["selectedModel"]
        self._context(data.get("context"))

    def _context(self, ctx: Any) -> None:
        if not isinstance(ctx, dict):
            return
        if isinstance(ctx.get("cwd"), str) and ctx["cwd"] and not self.log.cwd:
            self.log.cwd = ctx["cwd"]
        if isinstance(ctx.get("branch"), str) and ctx["branch"] and not self.log.branch:
            self.log.branch = ctx["branch"]

    def _assistant(self, thread: Thread, data: dict, when: datetime | None) -> None:
        model = data.get("model") if isinstance(data.get("model"), str) and data["model"] else thread.model
        if model:
            thread.models[model] += 1
        reasoning = data.get("reasoningText")
        if isinstance(reasoning, str) and reasoning.strip():
            thread.blocks.append(Block("assistant", "thinking", reasoning.strip(), when))
        text = _text(data.get("content")).strip()
        if text:
            thread.blocks.append(Block("assistant", "text", text, when))
        for request in data.get("toolRequests") or []:
            if isinstance(request, dict) and isinstance(request.get("toolCallId"), str):
                self._call(thread, request["toolCallId"], request.get("name"), request.get("arguments"), when)

    def _call(self, thread: Thread, call_id: str, name: Any, arguments: Any, when: datetime | None) -> None:
        name = name if isinstance(name, str) else None
        args = tools.arguments(arguments)
        thread.calls[call_id] = (name, args)
        thread.blocks.append(Block("assistant", "tool_call", clip(tools.call_text(name, args)), when, tool=name,
                                   action=tools.action(name, args), command=tools.command(name, args),
                                   paths=tools.paths(name, args)))

    def _result(self, thread: Thread, data: dict, when: datetime | None) -> None:
        call_id = data.get("toolCallId")
        name, args = thread.calls.get(call_id, (data.get("toolName") if isinstance(data.get("toolName"), str) else None, None))
        result = data.get("result")
        text = _text(result.get("content") if isinstance(result, dict) and "content" in result else
                     result.get("detailedContent") if isinstance(result, dict) else result)
        failed = data.get("success") is False
        if data.get("error"):
            failed = True
            text = "\n".join(t for t in (text, _text(data["error"])) if t)
        text = strip_ansi(text)
        failed = failed or tools.shell_failed(name, text)
        thread.blocks.append(Block("tool", "tool_result", clip(text), when, tool=name, is_error=failed,
                                   action=tools.action(name, args), command=tools.command(name, args),
                                   paths=tools.paths(name, args)))

    def bad_line(self, line: int) -> None:
        self._bad += 1
        if self._bad <= BAD_LINES_REPORTED:
            self.log.warnings.append(f"{self.label}:{line}: not a JSON object, skipped")

    def _unknown_kind(self, line: int, what: str) -> None:
        self._unknown.setdefault(what, [line, 0])[1] += 1

    def finish(self) -> EventLog:
        if self._bad > BAD_LINES_REPORTED:
            self.log.warnings.append(f"{self.label}: {self._bad - BAD_LINES_REPORTED} more lines not JSON objects, skipped")
        for what, (line, count) in self._unknown.items():
            more = f" ({count} events)" if count > 1 else ""
            self.log.warnings.append(f"{self.label}:{line}: unknown {what}{more}, skipped")
        return self.log


def parse(label: str, jsonl: JsonlRead) -> EventLog:
    parser = EventParser(label)
    for line, obj in jsonl.in_order():
        if obj is None:
            parser.bad_line(line)
        else:
            parser.feed(line, obj)
    log = parser.finish()
    log.warnings.extend(damage_warnings(label, jsonl))
    return log


def model_of(thread: Thread) -> str | None:
    if thread.models:
        return thread.models.most_common(1)[0][0]
    return thread.model
