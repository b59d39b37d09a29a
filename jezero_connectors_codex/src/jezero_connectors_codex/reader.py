"""Parse one Codex rollout (any generation) into a Session.

A rollout holds two views of the same conversation: `response_item`s (what the model saw) and
`event_msg`s (what the UI showed). Each user prompt, answer, reasoning summary and shell result
appears once on each side; the reader folds every such pair into one block. Messages are paired
by their text within a short window of records, tool results by `call_id`."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from datetime import datetime
from typing import Any, Callable, Iterable, Iterator

from jezero.plugin import TITLE_MAX_CHARS, Block, JsonlRead, JsonlStream, Session, clip, damage_warnings, parse_time

from . import render

AGENT = "codex"

# Record kinds and payload types that carry nothing for a transcript (or that the reader reads
# elsewhere): skipped without a warning. Anything else is skipped with one warning per type.
KNOWN_RECORDS = {
    "session_meta", "response_item", "event_msg", "turn_context", "compacted", "world_state",
    "inter_agent_communication", "inter_agent_communication_metadata", "token_usage_record",
    "retained_context", "security_risk_score", "realtime_item", "fork_reference",
}
KNOWN_ITEMS = {
    "message", "reasoning", "function_call", "function_call_output", "custom_tool_call",
    "custom_tool_call_output", "local_shell_call", "web_search_call", "ghost_snapshot",
    "image_generation_call", "tool_search_call", "tool_search_output", "agent_message",
    "additional_tools", "compaction", "context_compaction", "compaction_summary", "other",
    "mcp_tool_call", "mcp_tool_call_output",
}
KNOWN_EVENTS = {
    "user_message", "agent_message", "agent_reasoning", "agent_reasoning_raw_content",
    "agent_reasoning_section_break", "token_count", "task_started", "task_complete",
    "turn_started", "turn_complete", "turn_aborted", "exec_command_begin", "exec_command_end",
    "exec_approval_request", "apply_patch_approval_request", "patch_apply_begin",
    "patch_apply_end", "mcp_tool_call_begin", "mcp_tool_call_end", "web_search_begin",
    "web_search_end", "image_generation_begin", "image_generation_end", "context_compacted",
    "thread_rolled_back", "entered_review_mode", "exited_review_mode", "thread_goal_updated",
    "sub_agent_activity", "item_started", "item_completed", "error", "warning", "stream_error",
    "background_event", "view_image_tool_call", "thread_name_updated", "session_name_updated",
    "undo_started", "undo_completed", "plan_update", "turn_diff", "session_configured",
    "shutdown_complete", "get_history_entry_response", "mcp_list_tools_response",
    "list_custom_prompts_response", "conversation_path", "user_shell_command",
    "request_user_input", "deprecation_notice", "model_reroute",
    "thread_settings_applied",  # 0.171: the thread's model/sandbox settings, no conversation
}
KNOWN_EVENT_PREFIXES = ("collab_", "dynamic_tool_call", "realtime_", "guardian_", "raw_")

# Both halves of a folded pair are written within a few records of each other (adjacent in
# every sample); a wider window only risks folding a prompt genuinely typed twice.
FOLD_WINDOW = 64
BAD_LINES_REPORTED = 10


class RolloutParser:
    """Feed records in file order, then call `session()`."""

    def __init__(self, path: str, *, thread_names: dict[str, str] | None = None, locate: Callable[[int], str] | None = None):
        self.path = path
        self.locate = locate or (lambda n: f"{path}:{n}")
        self.thread_names = thread_names or {}
        self.blocks: list[Block] = []
        self.warnings: list[str] = []
        self._unknown: dict[str, list[int]] = {}  # what -> [first line, count]
        self.meta: dict | None = None
        self.meta_cwd: str | None = None
        self.turn_cwd: str | None = None
        self.env_cwd: str | None = None
        self.branch: str | None = None
        self.models: Counter[str] = Counter()
        self._model_seen: dict[str, int] = {}
        self.times: list[datetime] = []
        self.thread_name: str | None = None
        self._pools: dict[str, list[tuple[int, str, str]]] = {}
        self._calls: dict[str, str | None] = {}  # call_id -> tool name
        self._results: dict[str, tuple[Block, str]] = {}  # call_id -> (block, side that made it)
        self._seq = 0
        self._now: datetime | None = None
        self._line = 0
        self._bad = 0

    # ------------------------------------------------------------------------------------------
    # Input

    def feed(self, line: int, obj: dict) -> None:
        self._seq += 1
        self._line = line
        if isinstance(obj.get("type"), str) and "payload" in obj:
            self._envelope(obj)
            return
        self._now = None  # bare (pre-envelope) lines carry no time
        if "record_type" in obj:
            if obj["record_type"] != "state":
                self._unknown_kind(f"record_type {obj['record_type']!r}")
        elif isinstance(obj.get("type"), str):
            self._item(obj)
        elif "id" in obj and "timestamp" in obj:
            self.session_meta(obj)
        else:
            self._unknown_kind("record (no type)")

    def bad_line(self, line: int) -> None:
        self._bad += 1
        if self._bad <= BAD_LINES_REPORTED:
            self.warnings.append(f"{self.locate(line)}: not a JSON object, skipped")

    def _envelope(self, obj: dict) -> None:
        kind = obj["type"]
        payload = obj["payload"]
        self._now = parse_time(obj.get("timestamp"))
        if self._now is not None:
            self.times.append(self._now)
        if not isinstance(payload, dict):
            self._unknown_kind(f"record type {kind!r} (payload is not an object)")
            return
        if kind == "session_meta":
            self.session_meta(payload)
        elif kind == "turn_context":
            self._turn_context(payload)
        elif kind == "response_item":
            self._item(payload)
        elif kind == "event_msg":
            self._event(payload)
        elif kind == "compacted":
            message = payload.get("message")
            if isinstance(message, str) and message.strip():
                self._add("system", "compaction", message.strip())
        elif kind not in KNOWN_RECORDS:
            self._unknown_kind(f"record type {kind!r}")

    def session_meta(self, meta: dict) -> None:
        if self.meta is not None:
            return  # a fork's copy of its parent's meta, or a resumed header: the first one rules
        self.meta = meta
        when = parse_time(meta.get("timestamp"))
        if when is not None:
            self.times.append(when)
        if isinstance(meta.get("cwd"), str) and meta["cwd"]:
            self.meta_cwd = meta["cwd"]
        git = meta.get("git")
        if isinstance(git, dict) and isinstance(git.get("branch"), str) and git["branch"]:
            self.branch = git["branch"]

    def _turn_context(self, ctx: dict) -> None:
        if self.turn_cwd is None and isinstance(ctx.get("cwd"), str) and ctx["cwd"]:
            self.turn_cwd = ctx["cwd"]
        model = ctx.get("model")
        if isinstance(model, str) and model:
            self.models[model] += 1
            self._model_seen[model] = self._seq

    # ------------------------------------------------------------------------------------------
    # response_item payloads (and the bare items of the older generations)

    def _item(self, item: dict) -> None:
        kind = item.get("type")
        if kind == "message":
            self._message(item)
        elif kind == "reasoning":
            parts = _texts(item.get("summary")) or _texts(item.get("content"))
            for part in parts:
                if not self._fold("thinking", part, "response"):
                    self._add("assistant", "thinking", part)
        elif kind in ("function_call", "custom_tool_call"):
            name = item.get("name") if isinstance(item.get("name"), str) else None
            if name and isinstance(item.get("namespace"), str) and item["namespace"]:
                name = f"{item['namespace']}.{name}"
            if kind == "custom_tool_call":
                body = item.get("input")
                text = body if isinstance(body, str) else render.tool_call_text(name, body)
            else:
                text = render.tool_call_text(item.get("name"), item.get("arguments"))
            self._call(item.get("call_id") or item.get("id"), name, text)
        elif kind == "local_shell_call":
            action = item.get("action") if isinstance(item.get("action"), dict) else {}
            self._call(item.get("call_id") or item.get("id"), "local_shell", render.argv_text(action.get("command")))
        elif kind in ("function_call_output", "custom_tool_call_output"):
            self._output(item.get("call_id"), item.get("output"))
        elif kind == "web_search_call":
            text = render.web_search_text(item.get("action"))
            if text and not self._fold("web_search", text, "response"):
                self._add("assistant", "tool_call", text, tool="web_search")
        elif kind not in KNOWN_ITEMS:
            self._unknown_kind(f"item type {kind!r}")

    def _message(self, item: dict) -> None:
        role = item.get("role")
        content = item.get("content")
        if role == "user":
            if self.env_cwd is None:
                for part in _texts(content) if isinstance(content, list) else [content]:
                    if isinstance(part, str) and (cwd := render.cwd_from_environment_context(part)):
                        self.env_cwd = cwd
                        break
            text = render.user_text(content)
            if text and not self._fold("user", text, "response"):
                self._add("user", "text", text)
        elif role == "assistant":
            text = render.content_text(content).strip()
            if text and not self._fold("assistant", text, "response"):
                self._add("assistant", "text", text)
        # developer / system messages are harness instructions: never part of the transcript

    def _call(self, call_id: Any, tool: str | None, text: str) -> None:
        if isinstance(call_id, str):
            self._calls[call_id] = tool
        self._add("assistant", "tool_call", clip(text), tool=tool)

    def _output(self, call_id: Any, output: Any) -> None:
        text, code, success = render.tool_output(output)
        failed = (code is not None and code != 0) or success is False
        known = self._results.get(call_id) if isinstance(call_id, str) else None
        if known is not None and known[1] == "event":
            block = known[0]  # the event came first: keep its place, take the model's text
            if text:
                block.text = render.result_text(text)
            block.is_error = block.is_error or failed
            self._results[call_id] = (block, "both")
            return
        tool = self._calls.get(call_id) if isinstance(call_id, str) else None
        block = self._add("tool", "tool_result", render.result_text(text), tool=tool, is_error=failed)
        if isinstance(call_id, str):
            self._results[call_id] = (block, "response")

    # ------------------------------------------------------------------------------------------
    # event_msg payloads

    def _event(self, event: dict) -> None:
        kind = event.get("type")
        if kind == "user_message":
            if event.get("kind") not in render.PROMPT_KINDS:
                return
            message = event.get("message") if isinstance(event.get("message"), str) else ""
            if render.is_scaffolding(message):
                return
            images = [render.image(i) for i in (event.get("images") or [])]
            images += [render.image(i) for i in (event.get("local_images") or [])]
            text = "\n".join(p for p in [message.strip(), *images] if p)
            if text and not self._fold("user", text, "event"):
                self._add("user", "text", text)
        elif kind == "agent_message":
            text = event.get("message")
            if isinstance(text, str) and text.strip() and not self._fold("assistant", text.strip(), "event"):
                self._add("assistant", "text", text.strip())
        elif kind == "agent_reasoning":
            text = event.get("text")
            if isinstance(text, str) and text.strip() and not self._fold("thinking", text.strip(), "event"):
                self._add("assistant", "thinking", text.strip())
        elif kind == "exec_command_end":
            status = event.get("status")
            code = event.get("exit_code")
            failed = (isinstance(code, int) and code != 0) or status in ("failed", "declined")
            body = event.get("aggregated_output") or event.get("formatted_output") or "\n".join(
                s for s in (event.get("stdout"), event.get("stderr")) if isinstance(s, str) and s
            )
            role = "user" if event.get("source") == "user_shell" else "assistant"
            self._event_result(event.get("call_id"), "shell", render.argv_text(event.get("command")), body, failed, role)
        elif kind == "patch_apply_end":
            body = "\n".join(s for s in (event.get("stdout"), event.get("stderr")) if isinstance(s, str) and s)
            changes = event.get("changes") if isinstance(event.get("changes"), dict) else {}
            self._event_result(event.get("call_id"), "apply_patch", "\n".join(changes), body, event.get("success") is False)
        elif kind == "mcp_tool_call_end":
            inv = event.get("invocation") if isinstance(event.get("invocation"), dict) else {}
            tool = f"mcp__{inv.get('server')}__{inv.get('tool')}" if inv else None
            args = json.dumps(inv.get("arguments"), ensure_ascii=False) if inv.get("arguments") is not None else ""
            body, failed = render.mcp_result(event.get("result"))
            self._event_result(event.get("call_id"), tool, args, body, failed)
        elif kind == "web_search_end":
            text = render.web_search_text(event.get("action"), event.get("query"))
            if text and not self._fold("web_search", text, "event"):
                self._add("assistant", "tool_call", text, tool="web_search")
        elif kind in ("thread_name_updated", "session_name_updated"):
            name = event.get("thread_name") or event.get("name")
            if isinstance(name, str) and name.strip():
                self.thread_name = name.strip()
        elif kind not in KNOWN_EVENTS and not (isinstance(kind, str) and kind.startswith(KNOWN_EVENT_PREFIXES)):
            self._unknown_kind(f"event type {kind!r}")

    def _event_result(self, call_id: Any, tool: str | None, command: str, body: Any, failed: bool, role: str = "assistant") -> None:
        """The event half of a tool result: marks the response half as failed when it already
        exists, otherwise stands in for it (and for the call, when that was never recorded)."""
        known = self._results.get(call_id) if isinstance(call_id, str) else None
        if known is not None:
            known[0].is_error = known[0].is_error or failed
            return
        if not isinstance(call_id, str) or call_id not in self._calls:
            if command:
                self._add(role, "tool_call", clip(command), tool=tool)
        else:
            tool = self._calls[call_id] or tool
        block = self._add("tool", "tool_result", render.result_text(body if isinstance(body, str) else str(body or "")), tool=tool, is_error=failed)
        if isinstance(call_id, str):
            self._calls.setdefault(call_id, tool)
            self._results[call_id] = (block, "event")

    # ------------------------------------------------------------------------------------------
    # Helpers

    def _add(self, role: str, kind: str, text: str, *, tool: str | None = None, is_error: bool = False) -> Block:
        block = Block(role=role, kind=kind, text=text, time=self._now, tool=tool, is_error=is_error)
        self.blocks.append(block)
        return block

    def _fold(self, pool_name: str, text: str, side: str) -> bool:
        """True when the other side already gave this text: the pair is complete and the
        caller adds nothing. Otherwise the text waits for its other half."""
        key = render.fold_key(text)
        pool = [e for e in self._pools.get(pool_name, []) if self._seq - e[0] <= FOLD_WINDOW]
        for i, (_, k, s) in enumerate(pool):
            if s != side and k == key:
                del pool[i]
                self._pools[pool_name] = pool
                return True
        pool.append((self._seq, key, side))
        self._pools[pool_name] = pool
        return False

    def _unknown_kind(self, what: str, line: int | None = None) -> None:
        entry = self._unknown.setdefault(what, [line or self._line, 0])
        entry[1] += 1

    # ------------------------------------------------------------------------------------------
    # Output

    def session(self, fallback_id: str) -> Session:
        meta = self.meta or {}
        session_id = meta.get("id") if isinstance(meta.get("id"), str) and meta.get("id") else fallback_id
        warnings = list(self.warnings)
        if self._bad > BAD_LINES_REPORTED:
            warnings.append(f"{self.path}: {self._bad - BAD_LINES_REPORTED} more lines that are not JSON objects, skipped")
        for what, (line, count) in self._unknown.items():
            warnings.append(f"{self.locate(line)}: unknown {what}, skipped" + (f" ({count} times)" if count > 1 else ""))
        model = None
        if self.models:
            model = max(self.models, key=lambda m: (self.models[m], self._model_seen[m]))
        title = self.thread_names.get(session_id) or self.thread_name or _first_prompt(self.blocks)
        return Session(
            id=session_id,
            agent=AGENT,
            blocks=self.blocks,
            cursor_key="",
            cursor_value=None,
            cwd=self.meta_cwd or self.turn_cwd or self.env_cwd,
            git_branch=self.branch,
            started_at=min(self.times) if self.times else None,
            ended_at=max(self.times) if self.times else None,
            parent_id=parent_of(meta),
            model=model,
            title=title,
            warnings=warnings,
        )


def parent_of(meta: dict) -> str | None:
    """The thread a sub-agent was spawned from, else the thread a fork was made from."""
    source = meta.get("source")
    if isinstance(source, dict):
        sub = source.get("subagent")
        if isinstance(sub, dict):
            spawn = sub.get("thread_spawn")
            if isinstance(spawn, dict) and isinstance(spawn.get("parent_thread_id"), str):
                return spawn["parent_thread_id"]
    for key in ("parent_thread_id", "forked_from_id"):
        if isinstance(meta.get(key), str) and meta[key]:
            return meta[key]
    return None


def _texts(value: Any) -> list[str]:
    """Texts of a reasoning `summary` / `content` list (`summary_text`, `reasoning_text`)."""
    if not isinstance(value, list):
        return []
    out = []
    for part in value:
        text = part.get("text") if isinstance(part, dict) else part if isinstance(part, str) else None
        if isinstance(text, str) and text.strip():
            out.append(text.strip())
    return out


def _first_prompt(blocks: Iterable[Block]) -> str | None:
    for block in blocks:
        if block.role == "user" and block.kind == "text":
            for line in block.text.splitlines():
                line = " ".join(line.split())
                if line and not line.startswith("[image"):
                    return line if len(line) <= TITLE_MAX_CHARS else line[: TITLE_MAX_CHARS - 3] + "..."
    return None


# ----------------------------------------------------------------------------------------------
# Forks: the copied parent history


def fingerprint(obj: dict) -> str:
    return json.dumps([obj.get("type"), obj.get("payload")], sort_keys=True, separators=(",", ":"))


def copied_prefix(records: list[tuple[int, dict]], parent_records: Callable[[str], list[dict] | None]) -> set[int]:
    """Line numbers of a fork's copy of its parent's history, which follows the fork's own
    `session_meta` and starts with the parent's. The copy is matched record by record against
    the parent file and stops at the first difference, so nothing the fork added is dropped;
    without the parent file nothing is."""
    if not records:
        return set()
    first = records[0][1]
    meta = first.get("payload") if first.get("type") == "session_meta" else None
    if not isinstance(meta, dict):
        return set()
    parent_ids = {v for v in (meta.get("forked_from_id"), meta.get("parent_thread_id"), parent_of(meta)) if isinstance(v, str) and v}
    start = next(
        (i for i, (_, obj) in enumerate(records[1:], start=1)
         if obj.get("type") == "session_meta" and isinstance(obj.get("payload"), dict) and obj["payload"].get("id") in parent_ids),
        None,
    )
    if start is None:
        return set()
    parent = parent_records(records[start][1]["payload"]["id"])
    if not parent:
        return set()
    # The parent's meta counts as copied even if it was rewritten; the items after it must match.
    copied = {records[start][0]}
    i, j = start + 1, 1
    while i < len(records) and j < len(parent) and fingerprint(records[i][1]) == fingerprint(parent[j]):
        copied.add(records[i][0])
        i += 1
        j += 1
    return copied


# ----------------------------------------------------------------------------------------------
# Whole files


def read_rollout(
    path: str,
    jsonl: JsonlRead | JsonlStream,
    *,
    fallback_id: str,
    thread_names: dict[str, str] | None = None,
    parent_records: Callable[[str], list[dict] | None] | None = None,
) -> Session:
    """A Session from the complete lines of a JSONL rollout (envelope or bare lines). A
    `JsonlStream` is read one line at a time, unless the rollout is a fork: finding its copy of
    the parent's history needs its records side by side."""
    parser = RolloutParser(path, thread_names=thread_names)
    lines = _in_order(jsonl) if isinstance(jsonl, JsonlRead) else iter(jsonl)
    copied: set[int] = set()
    if parent_records is not None:
        head = list(itertools.islice(lines, 1))
        if head and head[0][1] is not None and _may_be_fork(head[0][1]):
            rest = list(lines)
            copied = copied_prefix([(n, o) for n, o in head + rest if o is not None], parent_records)
            lines = iter(head + rest)
        else:
            lines = itertools.chain(head, lines)
    for line, obj in lines:
        if obj is None:
            parser.bad_line(line)
        elif line not in copied:
            parser.feed(line, obj)
    parser.warnings.extend(damage_warnings(path, jsonl))
    return parser.session(fallback_id)


def _in_order(jsonl: JsonlRead) -> Iterator[tuple[int, dict | None]]:
    """A JsonlRead's records and bad lines in file order, bad lines as (number, None)."""
    merged = [*jsonl.records, *((n, None) for n in jsonl.bad_lines)]
    return iter(sorted(merged, key=lambda e: e[0]))


def _may_be_fork(first: dict) -> bool:
    meta = first.get("payload") if first.get("type") == "session_meta" else None
    return isinstance(meta, dict) and any(
        isinstance(v, str) and v for v in (meta.get("forked_from_id"), meta.get("parent_thread_id"), parent_of(meta)))


def read_document(path: str, doc: dict, *, fallback_id: str, thread_names: dict[str, str] | None = None) -> Session:
    """A Session from a first-generation document `{"session": {...}, "items": [...]}`."""
    parser = RolloutParser(path, thread_names=thread_names, locate=lambda n: f"{path}: item {n}")
    session = doc.get("session")
    if isinstance(session, dict):
        parser.session_meta(session)
    items = doc.get("items")
    for number, item in enumerate(items if isinstance(items, list) else [], start=1):
        if isinstance(item, dict):
            parser.feed(number, item)
        else:
            parser.bad_line(number)
    return parser.session(fallback_id)
