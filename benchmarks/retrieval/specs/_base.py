"""What every spec file shares: the fixed `now`, the turn constructors and the session record."""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from jezero.demo import SessionSpec, Turn

# The benchmark's fixed present. Every session is dated relative to it and search runs at it.
NOW = datetime(2026, 11, 15, 12, 0, tzinfo=timezone.utc)
_NS = uuid.UUID("6d1f3c64-9a7e-4e58-8f0b-2b7f4e1c9a10")


def U(text: str) -> Turn:
    return Turn("user", text)


def A(text: str) -> Turn:
    return Turn("assistant", text)


def C(command: str, output: str = "", failed: bool = False) -> Turn:
    return Turn("command", command, output, failed)


@dataclass
class Spec:
    """One labelled session. `key` is what queries name; the session id is derived from it."""

    key: str
    agent: str  # "claude" | "codex"
    cwd: str
    days_ago: float
    turns: list[Turn]
    lang: str = "en"
    branch: str = "main"
    notes: str = ""  # what the session is, for people reading the data set
    # For long sessions: strings stated only near the end. bench.py checks that the session is cut
    # into several segments and that each string is in the last segment's text only.
    end_facts: list[str] = field(default_factory=list)

    @property
    def id(self) -> str:
        return str(uuid.uuid5(_NS, self.key))

    def started(self) -> datetime:
        t = NOW - timedelta(days=self.days_ago)
        # Sessions happen in working hours, at a time that depends only on the key.
        hour = 8 + random.Random(self.key).randint(0, 9)
        return t.replace(hour=hour, minute=random.Random(self.key + "m").randint(0, 59), second=0, microsecond=0)

    def to_session_spec(self) -> SessionSpec:
        return SessionSpec(self.agent, self.cwd, self.started(), self.turns, branch=self.branch, id=self.id)


def rng_for(key: str) -> random.Random:
    return random.Random("retrieval-bench:" + key)
