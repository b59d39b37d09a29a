"""Parse one Gemini CLI chat recording into a Session.

Two shapes (gemini-cli `chatRecordingService.ts`):
- since 0.40, `session-*.jsonl`: a metadata line (`sessionId`, `projectHash`, `startTime`, ...),
  then message records (`{"id", "type", "content", ...}`), metadata patches (`{"$set": {...}}`,
  whose `messages` key, when present, is a snapshot of the whole conversation) and truncations
  (`{"$rewindTo": id}`). A message written again with the same id replaces the earlier copy (Gemini
  rewrites a model turn once its tool calls finish);
- before, `session-*.json`: one document `{sessionId, ..., messages: [...]}`.

Both are replayed into the list of messages Gemini itself would load, then turned into blocks."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from jezero.plugin import Block, JsonlRead, Session, clip, damage_warnings, parse_time, strip_ansi, title_line

from . import tools

AGENT = "gemini-cli"
MESSAGE_TYPES = ("user", "gemini", "info", "error", "warning")
BAD_LINES_REPORTED = 10

# Text Gemini or a hook adds to what the person typed: hook output is wrapped in
# <hook_context>, the first message of a session is a <session_context> block.
_HOOK_CONTEXT = re.compile(r"<hook_context>.*?</hook_context>\s*", re.DOTALL)
_UNTRUSTED = re.compile(r"</?untrusted_context>")
_WORKSPACE_DIRS = re.compile(r"Workspace Directories:\*{0,2}\s*\n((?:[ \t]*-[^\n]*\n?)+)")


@dataclass
class Chat:
    """A recording replayed: its metadata and its messages in order."""

    meta: dict = field(default_factory=dict)
    messages: dict[str, dict] = field(default_factory=dict)  # id -> record, in order
    warnings: list[str] = field(default_factory=list)


class ChatReplay:
    """Feed records in file order; `chat` holds the state Gemini would load."""

    def __init__(self, label: str):
        self.label = label
        self.chat = Chat()
        self._bad = 0
        self._unknown: dict[str, list[int]] = {}

    def feed(self, line: int, obj: dict) -> None:
        if isinstance(obj.get("$rewindTo"), str):
            self._rewind(obj["$rewindTo"])
        elif isinstance(obj.get("id"), str):
            self.message(line, obj)
        elif isinstance(obj.get("$set"), dict):
            patch = obj["$set"]
            if isinstance(patch.get("messages"), list):
                self.chat.messages = {}
                for m in patch["messages"]:
                    if isinstance(m, dict) and isinstance(m.get("id"), str):
                        self.message(line, m)
            self.chat.meta.update({k: v for k, v in patch.items() if k != "messages"})
        elif isinstance(obj.get("sessionId"), str):
            self.chat.meta.update(obj)
        else:
            self._unknown_kind(line, "record without id, $set or $rewindTo")

    def message(self, line: int, obj: dict) -> None:
        kind = obj.get("type")
        if kind not in MESSAGE_TYPES:
            self._unknown_kind(line, f"message type {kind!r}")
            return
        self.chat.messages[obj["id"]] = obj  # a rewritten message keeps its first place

    def _rewind(self, message_id: str) -> None:
        ids = list(self.chat.messages)
        if message_id in ids:  # an unknown id removes nothing: better too much than lost text
            for dropped in ids[ids.index(message_id):]:
                del self.chat.messages[dropped]

    def bad_line(self, line: int) -> None:
        self._bad += 1
        if self._bad <= BAD_LINES_REPORTED:
            self.chat.warnings.append(f"{self.label}:{line}: not a JSON object, skipped")

    def _unknown_kind(self, line: int, what: str) -> None:
        seen = self._unknown.setdefault(what, [line, 0])
        seen[1] += 1

    def finish(self) -> Chat:
        if self._bad > BAD_LINES_REPORTED:
            self.chat.warnings.append(f"{self.label}: {self._bad - BAD_LINES_REPORTED} more lines not JSON objects, skipped")
        for what, (line, count) in self._unknown.items():
            more = f" ({count} records)" if count > 1 else ""
            self.chat.warnings.append(f"{self.label}:{line}: unknown {what}{more}, skipped")
        return self.chat


def replay_jsonl(label: str, jsonl: JsonlRead) -> Chat:
    replay = ChatReplay(label)
    for line, obj in jsonl.in_order():
        if obj is None:
            replay.bad_line(line)
        else:
            replay.feed(line, obj)
    chat = replay.finish()
    chat.warnings.extend(damage_warnings(label, jsonl))
    return chat


def replay_document(label: str, doc: dict) -> Chat:
    """A pre-0.40 `.json` recording: one ConversationRecord."""
    replay = ChatReplay(label)
    replay.chat.meta.update({k: v for k, v in doc.items() if k != "messages"})
    for n, m in enumerate(doc.get("messages") if isinstance(doc.get("messages"), list) else [], start=1):
        if isinstance(m, dict) and isinstance(m.get("id"), str):
            replay.message(n, m)
        else:
            replay.chat.warnings.append(f"{label}: message {n} is not a message record, skipped")
    return replay.finish()


# ----------------------------------------------------------------------------------------------
# Messages to blocks


def part_texts(content: Any) -> list[str]:
    """The readable pieces of a `PartListUnion`: a string, a part, or a list of parts. Inline
    data becomes its media type and size, never its bytes; function calls and responses are
    left to the tool-call reader."""
    if isinstance(content, str):
        return [content]
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return []
    out = []
    for part in content:
        if isinstance(part, str):
            out.append(part)
        elif isinstance(part, dict):
            if part.get("thought") is True:
                continue
            if isinstance(part.get("text"), str):
                out.append(part["text"])
            elif isinstance(part.get("inlineData"), dict):
                data = part["inlineData"]
                size = len(str(data.get("data") or "")) * 3 // 4
                out.append(f"[inline data: {data.get('mimeType') or 'unknown type'}, {size} bytes]")
            elif isinstance(part.get("fileData"), dict):
                out.append(f"[file: {part['fileData'].get('fileUri') or part['fileData'].get('mimeType')}]")
    return out


def function_responses(content: Any) -> list[dict]:
    parts = content if isinstance(content, list) else [content]
    return [p["functionResponse"] for p in parts if isinstance(p, dict) and isinstance(p.get("functionResponse"), dict)]


def response_text(response: Any) -> tuple[str, bool]:
    """(text, failed) of a functionResponse's `response` (`{"output"}` or `{"error"}`)."""
    if isinstance(response, dict):
        if response.get("error") not in (None, ""):
            return _plain(response["error"]), True
        for key in ("output", "content", "result"):
            if key in response:
                return _plain(response[key]), False
        return json.dumps(response, ensure_ascii=False), False
    return _plain(response), False


def _plain(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(part_texts(value)) or json.dumps(value, ensure_ascii=False)
    return "" if value is None else json.dumps(value, ensure_ascii=False)


def user_text(message: dict) -> str:
    """What the person typed: `displayContent` (without the files an @-reference pulled in)
    when Gemini kept it, without hook output."""
    content = message.get("displayContent") if message.get("displayContent") else message.get("content")
    texts = [_HOOK_CONTEXT.sub("", t).strip() for t in part_texts(content)]
    return "\n".join(t for t in texts if t).strip()


def is_session_context(message: dict) -> bool:
    texts = part_texts(message.get("content"))
    return bool(texts) and texts[0].lstrip().startswith("<session_context>")


def workspace_dirs(text: str) -> list[str]:
    m = _WORKSPACE_DIRS.search(text)
    if not m:
        return []
    return [line.strip()[1:].strip() for line in m.group(1).splitlines() if line.strip().startswith("-")]


def tool_blocks(call: dict, fallback_time: datetime | None) -> list[Block]:
    name = call.get("name") if isinstance(call.get("name"), str) else None
    args = call.get("args")
    when = parse_time(call.get("timestamp")) or fallback_time
    action = tools.action(name)
    command = tools.command(name, args)
    paths = tools.paths(name, args)
    blocks = [Block("assistant", "tool_call", clip(tools.call_text(name, args)), when, tool=name, action=action, command=command, paths=list(paths))]
    status = call.get("status")
    texts, failed = [], status in ("error", "cancelled")
    for response in function_responses(call.get("result")):
        text, bad = response_text(response.get("response"))
        texts.append(text)
        failed = failed or bad
    if not texts and isinstance(call.get("resultDisplay"), str):
        texts.append(call["resultDisplay"])
    if status == "cancelled" and not any(texts):
        texts.append("[cancelled]")
    if texts or status in ("success", "error", "cancelled"):
        text = strip_ansi(_UNTRUSTED.sub("", "\n".join(texts)).strip())
        failed = failed or tools.shell_failed(name, text)
        text = clip(text)
        blocks.append(Block("tool", "tool_result", text, when, tool=name, is_error=failed, action=action,
                            command=command, paths=list(paths)))
    return blocks


@dataclass
class Transcript:
    blocks: list[Block]
    model: str | None
    first_prompt: str | None
    context_dirs: list[str]
    times: list[datetime]


def transcript(chat: Chat) -> Transcript:
    blocks: list[Block] = []
    models: Counter[str] = Counter()
    latest: dict[str, int] = {}
    first_prompt = None
    context_dirs: list[str] = []
    times: list[datetime] = []
    called: set[str] = set()
    for n, message in enumerate(chat.messages.values()):
        when = parse_time(message.get("timestamp"))
        if when is not None:
            times.append(when)
        kind = message.get("type")
        if kind == "user":
            if is_session_context(message):
                context_dirs = context_dirs or workspace_dirs("\n".join(part_texts(message.get("content"))))
                continue
            for response in function_responses(message.get("content")):
                if response.get("id") in called:
                    continue  # already told with its call
                text, failed = response_text(response.get("response"))
                name = response.get("name") if isinstance(response.get("name"), str) else None
                blocks.append(Block("tool", "tool_result", clip(_UNTRUSTED.sub("", text).strip()), when, tool=name,
                                    is_error=failed, action=tools.action(name)))
            text = user_text(message)
            if text:
                blocks.append(Block("user", "text", text, when))
                first_prompt = first_prompt or text
        elif kind == "gemini":
            model = message.get("model")
            if isinstance(model, str) and model:
                models[model] += 1
                latest[model] = n
            for thought in message.get("thoughts") or []:
                if isinstance(thought, dict):
                    text = ": ".join(str(thought[k]).strip() for k in ("subject", "description") if thought.get(k))
                    if text:
                        blocks.append(Block("assistant", "thinking", text, parse_time(thought.get("timestamp")) or when))
            text = "\n".join(part_texts(message.get("content"))).strip()
            if text:
                blocks.append(Block("assistant", "text", text, when))
            for call in message.get("toolCalls") or []:
                if isinstance(call, dict):
                    if isinstance(call.get("id"), str):
                        called.add(call["id"])
                    blocks += tool_blocks(call, when)
        else:  # info, warning, error: what the CLI told the person
            text = "\n".join(part_texts(message.get("content"))).strip()
            if text:
                blocks.append(Block("system", "meta", f"[{kind}] {strip_ansi(text)}", when))
    model = max(models, key=lambda m: (models[m], latest[m])) if models else None
    return Transcript(blocks, model, first_prompt, context_dirs, times)


def project_hash(path: str) -> str:
    """How Gemini names a project folder before slugs: SHA-256 of its root path."""
    return hashlib.sha256(path.encode("utf-8")).hexdigest()


def session(chat: Chat, *, fallback_id: str, parent_id: str | None, project_roots: list[str],
            known_paths: list[str], cursor_key: str, cursor_value: Any) -> Session:
    """`project_roots`: the project folder's own root (`.project_root`, its slug in
    `projects.json`); `known_paths`: every path `projects.json` knows. A path whose hash is the
    recording's `projectHash` wins; then the project's root; then the folders Gemini listed in
    the session's context."""
    meta = chat.meta
    t = transcript(chat)
    wanted = meta.get("projectHash")
    directories = [d for d in meta.get("directories") or [] if isinstance(d, str)]
    candidates = [*project_roots, *known_paths, *t.context_dirs, *directories]
    cwd = next((c for c in candidates if wanted and project_hash(c) == wanted), None)
    cwd = cwd or (project_roots[0] if project_roots else None) or next(iter(t.context_dirs + directories), None)
    times = list(t.times)
    for key in ("startTime", "lastUpdated"):
        when = parse_time(meta.get(key))
        if when is not None:
            times.append(when)
    summary = meta.get("summary") if isinstance(meta.get("summary"), str) else None
    sid = meta.get("sessionId") if isinstance(meta.get("sessionId"), str) and meta["sessionId"] else fallback_id
    return Session(
        id=sid,
        agent=AGENT,
        blocks=t.blocks,
        cursor_key=cursor_key,
        cursor_value=cursor_value,
        cwd=cwd,
        started_at=parse_time(meta.get("startTime")) or (min(times) if times else None),
        ended_at=max(times) if times else None,
        parent_id=parent_id,
        model=t.model,
        title=title_line(summary) or title_line(t.first_prompt),
        warnings=list(chat.warnings),
    )
