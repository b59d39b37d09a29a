"""The load benchmark's library with messages: the search benchmark's items (benchmarks/search/
corpus.py, the same items byte for byte as `corpus.build` with the same seed) and, for each item's
session, the messages of its transcript, written together through `Store.write` as a connector
writes them, so that `messages_fts` (and, for tantivy, the messages index synced from the library)
is built by the real write path.

A session has the shape of benchmarks/messages/sessions.py (mean about 49 messages):
- 3-17 turns, each a user prompt of 8-60 words, 0-3 tool calls (a call of 4-20 words, its result
  30-400 words, one result in ten a long log of 1,500-5,000 words that the store cuts to
  TOOL_MESSAGE_CHARS, head and tail), then an assistant answer of 20-200 words;
- 3% routine runs (one scripted prompt, 2-5 turns);
- the first prompt carries the item's title words and the last answer part of its summary, as a
  summary is drawn from its transcript; every other word is drawn from the same Zipf vocabulary
  (common words common, identifiers rare), from a random stream of its own so that the items do
  not change;
- message times a few seconds to minutes apart from the item's time, tools Bash, Read, Edit, Grep.

The item's `original` stays the placeholder of corpus.py (the load benchmark never reads it; a real
one holds the whole transcript, which would add about 66 KB an item to the file).
"""

from __future__ import annotations

import sys
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "search"))

from corpus import Corpus, write_library  # noqa: E402  (benchmarks/search/corpus.py)

from jezero.store import ItemRecord  # noqa: E402
from jezero.store.messages import MessageRecord  # noqa: E402

ROUTINE_PROMPT = "run the nightly dependency audit and report anything new"
TOOLS = ["Bash", "Read", "Edit", "Grep"]
TOOL_WEIGHTS = [50, 25, 15, 10]


class MessagesCorpus:
    def __init__(self, seed: int = 1):
        self.items = Corpus(seed)  # the items: the same draws as corpus.build(seed=seed)
        self.talk = Corpus(seed + 1000)  # the messages' own stream over the same vocabulary

    def item(self, i: int, n: int) -> ItemRecord:
        item = self.items.item(i, n)
        item.messages = self.messages(item)
        return item

    def messages(self, item: ItemRecord) -> list[MessageRecord]:
        rng, text = self.talk.rng, self.talk.text
        at = item.occurred_at
        out: list[MessageRecord] = []

        def add(role: str, body: str, tool: str | None = None) -> None:
            nonlocal at
            at = at + timedelta(seconds=rng.randint(2, 90))
            out.append(MessageRecord(role, body, at, tool))

        routine = rng.random() < 0.03
        if routine:
            add("user", ROUTINE_PROMPT)
            turns = rng.randint(2, 5)
        else:
            turns = rng.randint(3, 17)
        for t in range(turns):
            if not routine:
                prompt = text(rng.randint(8, 60))
                add("user", (item.title.lower() + " " + prompt) if t == 0 else prompt)
            for _ in range(rng.randint(0, 3)):
                tool = rng.choices(TOOLS, weights=TOOL_WEIGHTS)[0]
                add("tool", text(rng.randint(4, 20)), tool)
                long = rng.random() < 0.1
                add("tool", text(rng.randint(1500, 5000) if long else rng.randint(30, 400)), tool)
            answer = text(rng.randint(20, 200))
            if t == turns - 1:
                answer += " " + " ".join(item.summary.split()[: rng.randint(10, 30)])
            add("assistant", answer)
        return out


def build(path, n: int, *, seed: int = 1, batch: int = 500, progress=None) -> None:
    """`n` items with their messages, `batch` sessions a transaction (a connector's run writes a
    few at a time; larger batches only make the build faster). The items' FTS5 index is left as
    FTS5's automerge leaves it, as for corpus.build's library, so that the items index is
    comparable between the two. The messages' is merged into one segment, as `jezero run` leaves
    it after an import (Store.tidy_index's 'optimize'): left to automerge it had 14 segments at
    20,000 items, and every lookup of the fused search's read of unread sessions
    (fused.unread_evidence) sought all 14 (benchmarks/load/README.md, 2026-12-03, `tantivy7`)."""
    write_library(path, MessagesCorpus(seed), n, batch, progress)
    tidy_messages(path)


def tidy_messages(path) -> None:
    """The messages' FTS5 index merged into one segment (FTS5's 'optimize')."""
    import apsw

    db = apsw.Connection(str(path))
    try:
        with db:
            db.execute("INSERT INTO messages_fts(messages_fts) VALUES('optimize')")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        db.close()


def sizes(path) -> dict:
    """Items and messages, the file, and the FTS5 indexes' shadow tables in MB (dbstat)."""
    import apsw

    db = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    one = lambda sql: db.execute(sql).fetchone()[0]  # noqa: E731
    out = {"items": one("SELECT count(*) FROM items"), "messages": one("SELECT count(*) FROM messages"),
           "file_mb": round(Path(path).stat().st_size / 1e6, 1)}
    try:
        for table in ("items_fts", "messages_fts", "message_texts"):
            out[f"{table}_mb"] = round(one(f"SELECT sum(pgsize) FROM dbstat WHERE name LIKE '{table}%'") / 1e6, 1)
    except apsw.SQLError:
        pass  # SQLite built without dbstat
    db.close()
    return out
