"""Atom candidates by type, de-duplicated on their normalised text and scored."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .errors import error_key
from .text import ATOM_TEXT_LIMIT, one_line, squash


@dataclass
class Candidate:
    type: str
    text: str
    score: float
    order: int  # where it first appeared: ties go to the earlier one
    tag: str = ""  # for errors: "warning", "generic" or "weak" (see ErrorLine)
    base: float = 0.0  # the best score it was seen with
    bonus: float = 0.0  # for being seen again
    counted: bool = True  # seen at least once in a way that counts (not only in a listing)


_SHELL_COMMENT = re.compile(r"\s+#[^'\"\n]*$")
REPEAT_BONUS, MAX_ERROR_BONUS = 0.5, 1.0  # a line seen again counts more (an error, up to a point)


@dataclass
class Candidates:
    """Atom candidates by type, de-duplicated on their normalised text; a repeat raises the score
    (not a trivial one's, and an error's only up to a point: a log repeats its errors)."""

    by_key: dict[tuple[str, str], Candidate] = field(default_factory=dict)

    def add(self, type_: str, text: str, score: float, order: int, tag: str = "", repeat: bool = True) -> None:
        """`repeat=False`: a sighting that raises no score by itself (a path that a listing shows)."""
        text = text.strip()
        if len(text) < 3:
            return
        if len(text) > ATOM_TEXT_LIMIT:
            text = one_line(text, ATOM_TEXT_LIMIT)
        if type_ == "error":
            key = (type_, error_key(text))
        elif type_ == "command" and "#" in text:  # `pytest -q  # run 2` is `pytest -q`
            key = (type_, squash(_SHELL_COMMENT.sub("", text)).lower().strip(" .:;,`"))
        else:
            key = (type_, squash(text).lower().strip(" .:;,`"))
        seen = self.by_key.get(key)
        if seen is None:
            self.by_key[key] = Candidate(type_, text, score, order, tag, score, counted=repeat)
            return
        seen.base = max(seen.base, score)
        if repeat and seen.counted and seen.base >= 1.0:  # a repeated trivial `ls` stays trivial
            seen.bonus += REPEAT_BONUS
        if repeat and not seen.counted:  # its place is where it counted first
            seen.order, seen.counted = order, True
        seen.score = seen.base + (min(seen.bonus, MAX_ERROR_BONUS) if type_ == "error" else seen.bonus)
        if seen.tag and not tag:
            seen.tag = ""

    def of(self, type_: str) -> list[Candidate]:
        found = [c for c in self.by_key.values() if c.type == type_]
        return sorted(found, key=lambda c: (-c.score, c.order))
