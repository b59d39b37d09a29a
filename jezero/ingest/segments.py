"""Cutting a session into stable segments.

A segment holds whole blocks, in order, up to `max_input_chars` of rendered text. Boundaries are
chosen greedily from the first block, so they depend only on the blocks themselves: when a
session grows, every segment but the last keeps its blocks, its text and its content hash, and
only the last one is summarised again. A segment's uid comes from the session and its first
block, so it survives the session growing too.

Two segments may start with the same block (a prompt "continue" in a transcript without times):
the second and later ones add how many earlier segments of the session share that start, which
depends only on earlier segments, so ids stay unique and stable as the session grows. The first
keeps the id it always had, so libraries built before keep their items. `check_unique` turns any
collision left (one in 2^48 per pair) into an error instead of one item overwriting another.
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
    starts: dict[str, int] = {}  # anchor -> how many earlier segments start with it
    for index, members in enumerate(groups):
        blocks = [kept[i] for i in members]
        text = "".join(rendered[i] for i in members)
        first = kept[members[0]]
        at = first.time.isoformat() if first.time else ""
        start = anchor_of(at, rendered[members[0]])
        seen = starts.get(start, 0)
        starts[start] = seen + 1
        uid = f"{source}:{session.id}:{anchor_hash(anchor_of(at, rendered[members[0]], seen))}"
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
    check_unique(segments)
    return segments


def anchor_of(time_text: str, first_block: str, seen: int = 0) -> str:
    """What a segment's id hashes: its first block's time and rendering, and, for the `seen`-th
    later segment of the session starting with the same block, that number."""
    anchor = f"{time_text}\n{first_block}"
    return f"{anchor}\n#{seen}" if seen else anchor


def anchor_hash(anchor: str) -> str:
    """The last part of a segment's id (`source:session:hash`)."""
    return hashlib.sha256(anchor.encode()).hexdigest()[:12]


class SegmentIdCollision(Exception):
    """Two segments of one session got the same id: writing both would lose one."""


def check_unique(segments: list[Segment]) -> None:
    seen: dict[str, int] = {}
    for seg in segments:
        if seg.uid in seen:
            raise SegmentIdCollision(
                f"session {seg.session.id}: segments {seen[seg.uid]} and {seg.index} got the same segment id "
                f"{seg.uid}; nothing of this session was written")
        seen[seg.uid] = seg.index


def _last_time(blocks: list[Block]) -> datetime | None:
    """The latest time of the blocks (None when none has one). The latest, not the last block's:
    a transcript whose clock went back (a clock set right, a machine moved across zones) made an
    item end before it started, dated by its oldest message."""
    return max((b.time for b in blocks if b.time is not None), default=None)


def first_time(blocks: list[Block]) -> datetime | None:
    """The earliest time of the blocks (None when none has one); see _last_time."""
    return min((b.time for b in blocks if b.time is not None), default=None)


BLOCK_HEADER = re.compile(
    r"^\[(user|assistant|tool|system)"
    r"(?: (text|thinking|tool_call|tool_result|summary|compaction|image|meta))?"
    r"(?: (?!error\])([^\]\s]+))?( error)?\]$"
)


def parse_rendered(text: str) -> list[Block]:
    """The blocks back from a stored original (what `jezero resummarize` sends again)."""
    blocks: list[Block] = []
    for line in text.split("\n"):
        m = BLOCK_HEADER.match(line)
        if m:
            blocks.append(Block(role=m[1], kind=m[2] or "text", text="", tool=m[3], is_error=bool(m[4])))
        elif blocks:
            blocks[-1].text += ("\n" if blocks[-1].text else "") + line
    for b in blocks:
        b.text = b.text.rstrip("\n")
    return blocks
