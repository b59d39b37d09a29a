"""One Claude Code transcript file, parsed into threads of blocks.

A main session file holds one thread, plus (Claude Code 1.0.x) sub-agent runs written inline as
`isSidechain` lines, which become threads of their own. A sub-agent file (2.0 flat
`agent-*.jsonl`, 2.1 `subagents/agent-*.jsonl`) is one thread. The reader is tolerant: unknown
record and block types, and lines that are not JSON, are skipped and reported as warnings."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from jezero.plugin import Block, JsonlStream, clip, damage_warnings, parse_time, strip_ansi

from jezero_connectors_claude.render import (
    COMPACT_PREFIX,
    TEXT_LIMIT,
    THINKING_LIMIT,
    compact_json,
    media_marker,
    strip_reminders,
    tool_input_text,
    tool_result_text,
    user_text_blocks,
)

# Record types Claude Code writes that carry no conversation (or only a title): never warned
# about. From the format notes §1.4, plus types seen in public parsers' fixtures.
METADATA_TYPES = {
    "summary", "file-history-snapshot", "file-history-delta", "queue-operation", "progress",
    "attachment", "permission-mode", "mode", "last-prompt", "custom-title", "ai-title",
    "agent-name", "agent-color", "agent-setting", "tag", "pr-link", "frame-link",
    "worktree-state", "relocated", "bridge-session", "atis-latch", "started", "result",
    "cost-state",
    # 2.1.332: what each model call sent (params, hashes of the message blobs, the system prompt
    # and tool list, the blobs themselves) and which tools ran. The conversation is on the
    # user/assistant lines already; these only repeat it for the API.
    "api-request", "api-request-shape", "api-request-blob", "tools-used",
}
CONVERSATION_TYPES = {"user", "assistant", "system"}
KNOWN_TYPES = CONVERSATION_TYPES | METADATA_TYPES
# Title records, best first; the field that holds the title, then a fallback field.
TITLE_FIELDS = {
    "custom-title": ("customTitle", "title"),
    "agent-name": ("agentName", "name"),
    "ai-title": ("aiTitle", "title"),
}
# System lines that are bookkeeping, not something anyone said.
SILENT_SYSTEM_SUBTYPES = {"compact_boundary", "microcompact_boundary", "turn_duration"}
TOOL_CALL_TYPES = {"tool_use", "server_tool_use", "mcp_tool_use"}
SYNTHETIC_MODEL = "<synthetic>"


@dataclass
class Thread:
    """The blocks and facts of one conversation thread: a session or one sub-agent run."""

    key: str | None = None  # None: the file's own thread; "sidechain-…" for an inline sub-agent run
    blocks: list[Block] = field(default_factory=list)
    session_ids: Counter = field(default_factory=Counter)
    last_session_id: str | None = None
    cwds: Counter = field(default_factory=Counter)
    git_branch: str | None = None
    started_at: datetime | None = None
    ended_at: datetime | None = None
    models: Counter = field(default_factory=Counter)
    first_prompt: str | None = None
    titles: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    _model_messages: set = field(default_factory=set)
    _parts: set = field(default_factory=set)

    @property
    def cwd(self) -> str | None:
        """The most common working folder of the thread's lines (the first seen on a tie): a
        brief `cd` into a sub-folder or a worktree does not move the session."""
        return self.cwds.most_common(1)[0][0] if self.cwds else None

    @property
    def model(self) -> str | None:
        """The model that answered the most messages."""
        return self.models.most_common(1)[0][0] if self.models else None

    @property
    def is_warmup(self) -> bool:
        """Claude Code 2.0 starts throwaway sub-agents whose only prompt is "Warmup"."""
        return (self.first_prompt or "").strip().lower() == "warmup"

    def note(self, rec: dict) -> None:
        time = parse_time(rec.get("timestamp"))
        if time is not None:
            self.started_at = time if self.started_at is None else min(self.started_at, time)
            self.ended_at = time if self.ended_at is None else max(self.ended_at, time)
        sid = rec.get("sessionId")
        if isinstance(sid, str) and sid:
            self.session_ids[sid] += 1
            if rec.get("type") in CONVERSATION_TYPES:
                self.last_session_id = sid
        cwd = rec.get("cwd")
        if isinstance(cwd, str) and cwd:
            self.cwds[cwd] += 1
        branch = rec.get("gitBranch")
        if isinstance(branch, str) and branch:
            self.git_branch = branch  # the last one: where the work ended up

    def add(self, blocks: list[Block]) -> None:
        for block in blocks:
            if self.first_prompt is None and block.role == "user" and block.kind == "text":
                self.first_prompt = block.text
            self.blocks.append(block)

    def title(self) -> str | None:
        for kind in ("custom-title", "agent-name", "ai-title", "summary"):
            if self.titles.get(kind):
                return self.titles[kind]
        return None


@dataclass
class TranscriptRead:
    path: Path
    consumed: int  # bytes up to the last complete line
    main: Thread
    sidechains: list[Thread]  # inline sub-agent runs, in order of their first line


def read_transcript(path: str | Path, *, split_sidechains: bool = True, label: str | None = None) -> TranscriptRead:
    """Parse one transcript file. `split_sidechains` puts inline `isSidechain` lines (1.0.x) into
    threads of their own; a sub-agent file is read as one thread. `label` names the file in
    warnings (default: the path). OSError (the file vanished, cannot be read) propagates."""
    path = Path(path)
    lines = JsonlStream(path)
    reader = _FileReader(label or str(path), split_sidechains)
    for number, rec in lines:
        if rec is not None:
            reader.record(number, rec)
    reader.finish(lines.bad_lines)
    reader.main.warnings.extend(damage_warnings(reader.label, lines))
    return TranscriptRead(path, lines.consumed, reader.main, list(reader.sidechains.values()))


class _FileReader:
    def __init__(self, label: str, split_sidechains: bool):
        self.label = label
        self.split = split_sidechains
        self.main = Thread()
        self.sidechains: dict[str, Thread] = {}
        self.uuids: set[str] = set()
        self.uuid_thread: dict[str, str] = {}  # sidechain line uuid -> its thread key
        self.tool_names: dict[str, str] = {}  # tool_use id -> tool name
        self.summaries: list[tuple[Any, Any]] = []  # (leafUuid, summary)
        # (what, type name) -> [first line, count, thread]: one warning per type per file
        self.unknown: dict[tuple[str, str], list] = {}

    # -- dispatch ------------------------------------------------------------------------------

    def record(self, number: int, rec: dict) -> None:
        rtype = rec.get("type")
        if not isinstance(rtype, str) or rtype not in KNOWN_TYPES:
            self._unknown("record type", rtype if isinstance(rtype, str) else repr(rtype), number, self.main)
            return
        uuid = rec.get("uuid")
        if isinstance(uuid, str) and uuid:
            if uuid in self.uuids:
                return  # a resumed or compacted session replaying a line it already holds
            self.uuids.add(uuid)
        thread = self._thread_for(rec)
        thread.note(rec)
        if rtype == "user":
            self._user(thread, number, rec)
        elif rtype == "assistant":
            self._assistant(thread, number, rec)
        elif rtype == "system":
            self._system(thread, rec, number)
        elif rtype == "attachment":
            self._attachment(thread, rec)
        elif rtype == "summary":
            self.summaries.append((rec.get("leafUuid"), rec.get("summary")))
        elif rtype in TITLE_FIELDS:
            for key in TITLE_FIELDS[rtype]:
                value = rec.get(key)
                if isinstance(value, str) and value.strip():
                    self.main.titles[rtype] = value.strip()  # the last one wins
                    break

    def _thread_for(self, rec: dict) -> Thread:
        if not self.split or rec.get("isSidechain") is not True:
            return self.main
        uuid, parent = rec.get("uuid"), rec.get("parentUuid")
        key = self.uuid_thread.get(parent) if isinstance(parent, str) else None
        if key is None and rec.get("type") not in CONVERSATION_TYPES:
            return self.main  # bookkeeping starts no sub-agent run
        if key is None:
            # A new run starts at a line whose parent is not a sidechain line (its root).
            agent = rec.get("agentId")
            if isinstance(agent, str) and agent:
                key = f"sidechain-{agent}"
            elif isinstance(uuid, str) and uuid:
                key = f"sidechain-{uuid[:8]}"
            else:
                key = "sidechain"
        thread = self.sidechains.get(key)
        if thread is None:
            thread = self.sidechains[key] = Thread(key=key)
        if isinstance(uuid, str) and uuid:
            self.uuid_thread[uuid] = key
        return thread

    # -- record types --------------------------------------------------------------------------

    def _user(self, thread: Thread, number: int, rec: dict) -> None:
        message = rec.get("message")
        if not isinstance(message, dict) or rec.get("isMeta") is True:
            return  # injected text shown as user: caveats, slash-command expansions
        content = message.get("content")
        time = parse_time(rec.get("timestamp"))
        if rec.get("isCompactSummary") is True or _plain_text(content).lstrip().startswith(COMPACT_PREFIX):
            text = strip_reminders(_plain_text(content)).strip()
            if text:
                thread.add([Block("system", "compaction", clip(text, TEXT_LIMIT), time)])
            return
        if isinstance(content, str):
            thread.add(user_text_blocks(content, time))
            return
        content = self._parts(content, number, thread)
        for item in content:
            if not isinstance(item, dict):
                continue
            kind = item.get("type")
            if kind == "text":
                text = item.get("text")
                if isinstance(text, str):
                    thread.add(user_text_blocks(text, time))
            elif kind in ("image", "document"):
                thread.add([Block("user", "image", media_marker(kind, item), time)])
            elif kind == "tool_result":
                thread.add([self._tool_result(thread, number, item, time)])
            else:
                self._unknown("content block type", str(kind), number, thread)

    def _tool_result(self, thread: Thread, number: int, item: dict, time: datetime | None) -> Block:
        # The message content, never the duplicated `toolUseResult` (Edit's carries the whole file).
        unknown: list[str] = []
        text = tool_result_text(item.get("content"), unknown)
        for kind in unknown:
            self._unknown("content block type", kind, number, thread)
        tool = self.tool_names.get(item.get("tool_use_id")) if isinstance(item.get("tool_use_id"), str) else None
        return Block("tool", "tool_result", text or "(no output)", time, tool=tool, is_error=item.get("is_error") is True)

    def _assistant(self, thread: Thread, number: int, rec: dict) -> None:
        message = rec.get("message")
        if not isinstance(message, dict):
            return
        message_id = message.get("id") if isinstance(message.get("id"), str) else None
        model = message.get("model")
        if isinstance(model, str) and model and model != SYNTHETIC_MODEL:
            uuid = rec.get("uuid")
            counted = message_id or (uuid if isinstance(uuid, str) and uuid else number)
            if counted not in thread._model_messages:
                thread._model_messages.add(counted)
                thread.models[model] += 1
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        content = self._parts(content, number, thread)
        time = parse_time(rec.get("timestamp"))
        api_error = rec.get("isApiErrorMessage") is True
        for item in content:
            if not isinstance(item, dict):
                continue
            if message_id is not None:
                # One API response is written as one line per content block, and replays repeat
                # lines: keep each block of a message once.
                part = (message_id, _part_key(item))
                if part in thread._parts:
                    continue
                thread._parts.add(part)
            block = self._assistant_block(thread, number, item, time, api_error)
            if block is not None:
                thread.add([block])

    def _assistant_block(self, thread: Thread, number: int, item: dict, time, api_error: bool) -> Block | None:
        kind = item.get("type") if isinstance(item.get("type"), str) else repr(item.get("type"))
        if kind == "text":
            text = str(item.get("text") or "").strip()
            if not text or text == "(no content)":
                return None
            return Block("assistant", "meta" if api_error else "text", clip(text, TEXT_LIMIT), time)
        if kind == "thinking":
            text = str(item.get("thinking") or "").strip()
            return Block("assistant", "thinking", clip(text, THINKING_LIMIT), time) if text else None
        if kind == "redacted_thinking":
            return None  # opaque by design
        if kind in TOOL_CALL_TYPES:
            name = str(item.get("name") or "?")
            if isinstance(item.get("id"), str):
                self.tool_names[item["id"]] = name
            return Block("assistant", "tool_call", tool_input_text(name, item.get("input")), time, tool=name)
        if kind.endswith("_tool_result"):
            # Server-side tools (web search, code execution) answer inside the assistant message.
            unknown: list[str] = []
            text = tool_result_text(item.get("content"), unknown)
            tool_id = item.get("tool_use_id")
            tool = self.tool_names.get(tool_id) if isinstance(tool_id, str) else None
            is_error = isinstance(item.get("content"), dict) and "error" in str(item["content"].get("type", ""))
            return Block("tool", "tool_result", text or "(no output)", time, tool=tool or kind[: -len("_tool_result")], is_error=is_error)
        self._unknown("content block type", kind, number, thread)
        return None

    def _system(self, thread: Thread, rec: dict, number: int) -> None:
        subtype = rec.get("subtype") if isinstance(rec.get("subtype"), str) else None
        content = rec.get("content")
        if subtype in SILENT_SYSTEM_SUBTYPES:
            return
        if not isinstance(content, str) and content is not None:
            # As a list of text blocks or one block (as messages hold them): their text, not
            # nothing (it was dropped without a word).
            content = _plain_text(self._parts(content, number, thread))
        if not isinstance(content, str) or not content.strip():
            return
        time = parse_time(rec.get("timestamp"))
        if subtype == "local_command":
            thread.add([b for b in user_text_blocks(content, time) if b.kind == "meta"])
            return
        # Hook output, API errors, recaps: worth a line, with 1.0.x's ANSI codes stripped.
        thread.add([Block("system", "meta", clip(strip_ansi(content).strip()), time)])

    def _attachment(self, thread: Thread, rec: dict) -> None:
        attachment = rec.get("attachment")
        if not isinstance(attachment, dict) or attachment.get("type") != "queued_command":
            return  # hook context, tool lists, reminders: scaffolding
        # A message typed while the agent was busy; it never becomes a user line of its own.
        prompt = attachment.get("prompt")
        if not isinstance(prompt, str):
            return
        time = parse_time(rec.get("timestamp"))
        blocks = user_text_blocks(prompt, time)
        if (attachment.get("commandMode") or "prompt") != "prompt":
            blocks = [Block(b.role, "meta", b.text, b.time, b.tool) for b in blocks]
        thread.add(blocks)

    def _parts(self, content: Any, number: int, thread: Thread) -> list:
        """A message's content as a list of blocks: a list as it is, one block (a dict) as a
        list of it (it was dropped without a word), nothing for null; any other shape is said
        and skipped."""
        if isinstance(content, list):
            return content
        if isinstance(content, dict):
            return [content]
        if content is not None:
            self._unknown("content shape", type(content).__name__, number, thread)
        return []

    # -- the end -------------------------------------------------------------------------------

    def _unknown(self, what: str, name: str, number: int, thread: Thread) -> None:
        entry = self.unknown.setdefault((what, name), [number, 0, thread])
        entry[1] += 1

    def finish(self, bad_lines: list[int]) -> None:
        leaves = [s for leaf, s in self.summaries if isinstance(leaf, str) and leaf in self.uuids and isinstance(s, str) and s.strip()]
        if leaves:
            # `summary` lines mostly name other sessions' branches; only one whose leaf is here
            # titles this session.
            self.main.titles["summary"] = leaves[-1].strip()
        if bad_lines:
            more = f" (and {len(bad_lines) - 1} more: lines {', '.join(map(str, bad_lines[1:6]))}{', …' if len(bad_lines) > 6 else ''})" if len(bad_lines) > 1 else ""
            self.main.warnings.append(f"{self.label}:{bad_lines[0]}: not a JSON object, skipped{more}")
        for (what, name), (number, count, thread) in self.unknown.items():
            unit = "line" if what == "record type" else "block"
            thread.warnings.append(f"{self.label}:{number}: unknown {what} {name!r} ({count} {unit}{'s' if count > 1 else ''} skipped)")


def _plain_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = [content]
    if isinstance(content, list):
        return "\n".join(
            str(i.get("text") or "") for i in content if isinstance(i, dict) and i.get("type") == "text"
        )
    return ""


def _part_key(item: dict) -> tuple:
    kind = str(item.get("type"))
    if isinstance(item.get("id"), str):
        return (kind, item["id"])
    for key in ("text", "thinking", "data"):
        if isinstance(item.get(key), str):
            return (kind, item[key])
    return (kind, compact_json(item))
