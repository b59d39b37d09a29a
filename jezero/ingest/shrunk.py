"""A session read back with less than the library holds for it.

Transcripts are appended to; they do not shrink. When a session's file is read again with fewer
blocks than its stored items hold (truncated by a crash or a restore, rewritten shorter by a
tool, a line in the middle gone bad, a rewrite caught half-done), replacing the stored items
with what is left would lose the part that is gone from the file but not from the library: a
memory outlives its transcripts. Such a session is left as stored, with a warning; its cursor
moves, so the same bytes are not read (and warned about) again, and the file is read afresh
once it changes.

Both sides are counted the same way, from rendered text (`parse_rendered`), so a text that
happens to hold a line like a block header counts alike on both, and a redactor that changes
words, not blocks, changes nothing here. A session that regroups its segments (a new
`max_input_chars`) keeps its blocks and is replaced as before.
"""

from __future__ import annotations

from jezero.ingest.segments import parse_rendered
from jezero.models import Segment


def blocks_in(texts) -> int:
    return sum(len(parse_rendered(t)) for t in texts)


def read_back_shorter(session_id: str, stored: dict[str, tuple[int, str]], originals,
                      segments: list[Segment]) -> str | None:
    """Why the new reading of a session must not replace its stored items, or None when it may.
    `stored`: uid -> (id, content hash) of its items; `originals()`: their stored texts."""
    new = {s.uid: s.content_hash for s in segments}
    if all(new.get(uid) == digest for uid, (_, digest) in stored.items()):
        return None  # every stored item is kept as it is: nothing to lose
    had, has = blocks_in(originals()), blocks_in(s.text for s in segments)
    if has >= had:
        return None
    return (f"session {session_id}: read back with {has} block(s) where the library holds {had} "
            "(its file was truncated or rewritten shorter?); kept the stored items, wrote nothing")
