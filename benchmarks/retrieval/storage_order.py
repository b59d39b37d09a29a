"""Storage order for the retrieval benchmark (`bench.py --order`, `--pad`, `--pad-after`).

A library is not stored in time order: connectors read files in path order (Claude Code's are
named by uuid), several connectors run one after another, a team's other computers upload their
backlog later, and a first `jezero run` backfills years of sessions. `--order` stores the judged
sessions in one of these orders, each session in its own run of the real connectors (so the
order is exact):

- path: one run over every file, as a first `jezero run` reads them (the benchmark's default);
- time: oldest first, as if every session had been read the moment it ended;
- reverse: newest first (the oldest look newest to anything that reads storage order);
- shuffle:SEED: a seeded random order.

`--pad N` adds N distractor sessions to each set, written by that set's own generators through
the same connectors: the coding set's from benchmarks/messages/sessions.py (the search
benchmark's Zipf dev vocabulary: tool, library and file names among everyday dev words, 12-70
messages with tool calls and long logs), the chats' from chats.py's small talk (more sessions of
the same conversations, no planted fact), the long chats' from longchats.py's exchanges on its
topics (more sessions of the same users). They are dated over the set's own span. With
`--pad-after` they are stored after every judged session (a backlog uploaded late); without it
they take their place in `--order` with the judged ones.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "messages"))

from specs import NOW, Spec  # noqa: E402
from specs._base import A, C, U  # noqa: E402

ORDERS = ("path", "time", "reverse", "shuffle")
# Judged sessions are one run each; distractors between two of them go in runs of this many.
FILLER_BATCH = 100


def check_order(order: str) -> str:
    name = order.split(":", 1)[0]
    if name not in ORDERS or (name == "shuffle") != (":" in order):
        raise SystemExit(f"--order must be path, time, reverse or shuffle:SEED; got {order!r}")
    return order


def ordered(specs: list[Spec], order: str) -> list[Spec]:
    """`specs` in storage order (path: as given; the caller stores them in one run)."""
    name = order.split(":", 1)[0]
    if name == "time":
        return sorted(specs, key=lambda s: (s.started(), s.key))
    if name == "reverse":
        return sorted(specs, key=lambda s: (s.started(), s.key), reverse=True)
    if name == "shuffle":
        out = list(specs)
        random.Random(int(order.split(":", 1)[1])).shuffle(out)
        return out
    return list(specs)


def runs(judged: list[Spec], fillers: list[Spec], order: str, after: bool) -> list[list[Spec]]:
    """The connector runs, in order, each a list of sessions: a judged session alone, distractors
    in batches of FILLER_BATCH. path: one run of everything (distractors after: a second run)."""
    if order == "path":
        return [judged + fillers] if not after else [judged] + ([fillers] if fillers else [])
    if after:
        sequence = ordered(judged, order) + sorted(fillers, key=lambda s: (s.started(), s.key))
    else:
        sequence = ordered(judged + fillers, order)
    pad = {s.key for s in fillers}
    out: list[list[Spec]] = []
    for s in sequence:
        if s.key in pad and out and out[-1][0].key in pad and len(out[-1]) < FILLER_BATCH:
            out[-1].append(s)
        else:
            out.append([s])
    return out


# -- distractors: each set's own generators -------------------------------------------------------


def coding_fillers(n: int, span: tuple[float, float], cwds: list[str]) -> list[Spec]:
    """Coding sessions in the search benchmark's vocabulary (benchmarks/messages/sessions.py),
    as user prompts, commands with their output, and answers, in the judged set's projects."""
    from sessions import SessionCorpus  # benchmarks/messages/sessions.py

    corpus = SessionCorpus(17)
    out = []
    for i in range(n):
        corpus.rng = random.Random(17 * 1_000_003 + i)
        item = corpus.session(i, n)
        turns, pending = [], None
        for m in item.messages:
            if m.role == "tool":
                if pending is None:
                    pending = m.text
                else:
                    turns.append(C(pending[:300], m.text))
                    pending = None
            elif m.role == "user":
                turns.append(U(m.text))
            else:
                turns.append(A(m.text))
        if not turns or turns[0].role != "user":
            turns.insert(0, U(item.title))
        rng = random.Random(f"pad-coding:{i}")
        out.append(Spec(f"pad-coding-{i:05d}", "claude" if i % 3 else "codex", cwds[i % len(cwds)],
                        rng.uniform(*span), turns, notes="distractor (storage order benchmark)"))
    return out


def chat_fillers(n: int) -> list[Spec]:
    """More sessions of each conversation: small talk only (chats.py's own lines)."""
    import chats

    out = []
    for i in range(n):
        conv = chats.CONVERSATIONS[i % len(chats.CONVERSATIONS)]
        rng = random.Random(f"pad-chats:{conv.key}:{i}")
        cwd = f"/home/{conv.a.name.lower().replace('í', 'i')}/chats/{conv.key}"
        turns = chats._turns(conv, chats._session_lines(rng, conv, []))
        out.append(Spec(f"pad-chat-{i:05d}", "claude", cwd, rng.uniform(1, chats.DAYS_SPANNED + 5), turns, branch="",
                        notes="distractor (storage order benchmark)"))
    return out


def long_fillers(n: int) -> list[Spec]:
    """More sessions of each user with the assistant: longchats.py's exchanges on its topics."""
    import longchats

    out = []
    topics = list(longchats.TOPICS)
    for i in range(n):
        user = longchats.USERS[i % len(longchats.USERS)]
        rng = random.Random(f"pad-long:{user.key}:{i}")
        turns = []
        for ask, answer in longchats._exchanges(rng, rng.choice(topics), rng.randint(10, 30)):
            turns += [U(ask), A(answer)]
        out.append(Spec(f"pad-long-{i:05d}", "claude", f"/home/{user.key}/{user.key}-assistant",
                        rng.uniform(1, longchats.DAYS_SPANNED + 5), turns, branch="",
                        notes="distractor (storage order benchmark)"))
    return out


__all__ = ["NOW", "ORDERS", "check_order", "chat_fillers", "coding_fillers", "long_fillers", "ordered", "runs"]
