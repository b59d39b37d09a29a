"""Libraries of whole sessions for the messages benchmark: each session is one item (as in
benchmarks/search/corpus.py: ~1 KB of indexed summary text) plus the messages of its transcript.

A session has 12-70 messages (mean ~40): user prompts of 8-60 words, assistant answers of 20-200
words, tool calls of 4-20 words and tool results of 30-400 words, one result in ten a long log of
1,500-5,000 words (what the store bounds). The item's `original` is the rendered transcript,
unbounded, as the pipeline stores it. About 8% of sessions are subagent runs (a parent session),
3% are a routine run (the same scripted prompt). Words come from the search benchmark's Zipf
vocabulary, so summaries and transcripts share their statistics.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "search"))

from corpus import Corpus  # noqa: E402  (benchmarks/search/corpus.py)

from jezero.store import Store  # noqa: E402
from jezero.store.messages import MessageRecord  # noqa: E402

ROUTINE_PROMPT = "run the nightly dependency audit and report anything new"


class SessionCorpus(Corpus):
    def session(self, i: int, n: int):
        rng = self.rng
        item = self.item(i, n)
        msgs: list[MessageRecord] = []
        routine = rng.random() < 0.03
        if routine:
            msgs.append(MessageRecord("user", ROUTINE_PROMPT))  # the only prompt: the agent works alone
            turns = rng.randint(2, 5)
        else:
            turns = rng.randint(3, 17)
        if rng.random() < 0.08 and i > 10:
            item.parent_session_id = f"s{rng.randrange(i)}"
        for t in range(turns):
            if not routine:
                msgs.append(MessageRecord("user", self.text(rng.randint(8, 60))))
            for _ in range(rng.randint(0, 3)):
                msgs.append(MessageRecord("tool", self.text(rng.randint(4, 20)), tool="Bash"))
                long = rng.random() < 0.1
                msgs.append(MessageRecord("tool", self.text(rng.randint(1500, 5000) if long else rng.randint(30, 400)),
                                          tool="Bash"))
            msgs.append(MessageRecord("assistant", self.text(rng.randint(20, 200))))
        item.messages = msgs
        item.original = "".join(f"[{m.role}]\n{m.text}\n" for m in msgs)
        return item


def build(path, n: int, *, seed: int = 1, batch: int = 500, progress=None, tokenizer: str | None = None) -> None:
    corpus = SessionCorpus(seed)
    import jezero.store.messages as layer

    saved = layer.MESSAGES_TOKENIZER
    if tokenizer:
        layer.MESSAGES_TOKENIZER = tokenizer  # the migration reads it when it creates the index
    try:
        with Store(path) as store:
            for start in range(0, n, batch):
                store.write([corpus.session(i, n) for i in range(start, min(start + batch, n))])
                if progress:
                    progress(min(start + batch, n))
            store.tidy_index(written=n)
            store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        layer.MESSAGES_TOKENIZER = saved
