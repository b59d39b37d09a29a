"""Cutting a session into stable segments.

A segment holds whole blocks, in order, up to `max_input_chars` of rendered text. Boundaries are
chosen greedily from the first block, so they depend only on the blocks themselves: when a
session grows, every segment but the last keeps its blocks, its text and its content hash, and
only the last one is summarised again. A segment's uid comes from the session and its first
block, so it survives the session growing too.
"""

from __future__ import annotations

import hashlib
import re
from datetime import datetime, timezone

from jezero.models import Block, Segment, Session


def render_block(block: Block) -> str:
    """One block as the summarizer and the stored original see it: a header, then the text."""
    header = block.role if block.kind == "text" else f"{block.role} {block.kind}"
    if block.tool:
        header += f" {block.tool}"
    if block.is_error:
        header += " error"
    return f"[{header}]\n{block.text.strip()}\n"


def _clip_to(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    marker = "\n[... cut to fit one segment ...]\n"
    return text[: limit - len(marker)] + marker


def segment_session(session: Session, source: str, max_input_chars: int) -> list[Segment]:
    rendered = [_clip_to(render_block(b), max_input_chars) for b in session.blocks if b.text.strip()]
    kept = [b for b in session.blocks if b.text.strip()]
    groups: list[list[int]] = []
    size = 0
    for i, text in enumerate(rendered):
        if groups and size + len(text) <= max_input_chars:
            groups[-1].append(i)
            size += len(text)
        else:
            groups.append([i])
            size = len(text)
    segments = []
    for index, members in enumerate(groups):
        blocks = [kept[i] for i in members]
        text = "".join(rendered[i] for i in members)
        first = kept[members[0]]
        anchor = f"{first.time.isoformat() if first.time else ''}\n{rendered[members[0]]}"
        uid = f"{source}:{session.id}:{hashlib.sha256(anchor.encode()).hexdigest()[:12]}"
        segments.append(Segment(
            uid=uid,
            source=source,
            session=session,
            index=index,
            blocks=blocks,
            text=text,
            content_hash=hashlib.sha256(text.encode()).hexdigest(),
            occurred_at=_last_time(blocks) or session.ended_at or datetime.now(timezone.utc),
        ))
    return segments


def _last_time(blocks: list[Block]) -> datetime | None:
    for b in reversed(blocks):
        if b.time is not None:
            return b.time
    return None


_HEADER = re.compile(
    r"^\[(user|assistant|tool|system)"
    r"(?: (text|thinking|tool_call|tool_result|summary|compaction|image|meta))?"
    r"(?: (?!error\])([^\]\s]+))?( error)?\]$"
)


def parse_rendered(text: str) -> list[Block]:
    """The blocks back from a stored original (what `jezero resummarize` sends again)."""
    blocks: list[Block] = []
    for line in text.split("\n"):
        m = _HEADER.match(line)
        if m:
            blocks.append(Block(role=m[1], kind=m[2] or "text", text="", tool=m[3], is_error=bool(m[4])))
        elif blocks:
            blocks[-1].text += ("\n" if blocks[-1].text else "") + line
    for b in blocks:
        b.text = b.text.rstrip("\n")
    return blocks
