"""The messages layer: every stored item's transcript, one row per message, in its own FTS5 index
(`messages_fts`) in the same file, written in the same transaction as the item.

An item indexes a few hundred characters that a summarizer chose; the words a person later looks
for are often only in the transcript. Each message keeps what recall filters on (session, parent
session, project, source, role, time) and where it sits in its session (segment, then position),
so recall can show the messages around a hit.

Messages follow their item: written when the item is written, replaced when it is rewritten,
deleted with it, retagged with it. The text is the item's, so it has been through the same
redactors before it reaches this table. Tool calls and results are messages of role "tool", cut
to TOOL_MESSAGE_CHARS (head and tail: an error is often at the end), and any message to
MESSAGE_CHARS, so that a session that printed megabytes does not make the index grow with it.

A derived index engine (`[search] engine = "tantivy"`) keeps its own index of these rows beside
the library, kept in step by the items' change log (`item_changes`): every write here happens
with a write of its item, in the same transaction, so the item's change number covers it.

A message's id follows its time, not the order it was stored in (time_id, allocate_ids): the id
is the message's time in milliseconds since 1970, moved up to the next free id when that one is
taken. FTS5 reads a word's list from the highest id down for free, and the lanes read a common
word at its newest matches that way (jezero.query.messages, jezero.query.fused): with ids in storage order,
a backfill of old sessions (a first `jezero run`, a device's backlog uploaded late, connectors
reading files in path order) looked newest, and pushed the sessions people meant out of reach.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime, timezone

# Measured in benchmarks/messages/README.md (2,000 sessions): the word-level index is a sixth of
# the trigram one (32 against 191 MB) and recall on it about twice as fast. Its terms are
# whole words (a fragment such as `migrat` does not find `migration` here; the items index,
# trigram, still does), and a token joined by punctuation (`fs.inotify.max_user_watches`) is read
# as a phrase of its parts, which is how such a token should match anyway.
MESSAGES_TOKENIZER = "unicode61 remove_diacritics 2"

# A tool's output: the head says what ran, the tail how it ended. 2,000 characters keep both for
# nearly every call while a build log of megabytes costs the index no more than a short answer.
TOOL_MESSAGE_CHARS = 2000
TOOL_TAIL_CHARS = 600
# A person or an agent writing: long pastes are cut, the prose around them is kept whole.
MESSAGE_CHARS = 8000
CUT_MARK = "\n[... cut ...]\n"

ROLES = ("user", "assistant", "tool", "system")
TOOL_KINDS = {"tool_call", "tool_result"}
SYSTEM_KINDS = {"summary", "compaction", "meta"}


@dataclass
class MessageRecord:
    """One message as the store writes it (the pipeline builds them from a segment's blocks)."""

    role: str  # one of ROLES
    text: str
    at: datetime | None = None  # None: the item's time
    tool: str | None = None


def message_role(block_role: str, kind: str) -> str:
    """A block's role as recall filters on it: tool calls and results are their own role whoever
    made them; a thinking block is the assistant's; summaries and meta blocks are the system's."""
    if kind in TOOL_KINDS or block_role == "tool":
        return "tool"
    if kind in SYSTEM_KINDS or block_role == "system":
        return "system"
    return block_role if block_role in ROLES else "system"


def bound(role: str, text: str) -> str:
    text = text.strip()
    if role == "tool":
        if len(text) <= TOOL_MESSAGE_CHARS:
            return text
        head = TOOL_MESSAGE_CHARS - TOOL_TAIL_CHARS - len(CUT_MARK)
        return text[:head] + CUT_MARK + text[-TOOL_TAIL_CHARS:]
    if len(text) <= MESSAGE_CHARS:
        return text
    return text[: MESSAGE_CHARS - len(CUT_MARK)] + CUT_MARK


def prompt_hash(role: str, text: str) -> str | None:
    """Of a person's prompt, whitespace and case folded: the same scripted prompt in many sessions
    is how recall tells a routine session (a scheduled or scripted run) from real work."""
    if role != "user":
        return None
    folded = " ".join(text.lower().split())
    return hashlib.sha256(folded.encode("utf-8")).hexdigest()[:16] if folded else None


def from_blocks(blocks) -> list[MessageRecord]:
    """A segment's blocks (already redacted) as messages."""
    out = []
    for b in blocks:
        if not (b.text or "").strip():
            continue
        role = message_role(b.role, b.kind)
        out.append(MessageRecord(role, b.text, b.time, b.tool))
    return out


def from_original(original: str) -> list[MessageRecord]:
    """The messages of an item stored before this layer existed, from its rendered original
    (already redacted). Times are not in the text: the item's time stands in."""
    # The rendering belongs to the segmenter; read it back with its own parser.
    from jezero.ingest.segments import parse_rendered

    return from_blocks(parse_rendered(original or ""))


# -- writing, inside the item's transaction ---------------------------------------------------------


def replace(db, item_id: int, item, at_text, messages: list[MessageRecord] | None,
            index_rows: list | None = None) -> int:
    """Make `item_id`'s messages those of `item` (its fields: source, session, project...).
    `messages` None: derive them from the item's original. Returns how many were written.
    `index_rows` (an IndexRows): the messages' (id, text) are added there, for the caller to put
    into `messages_fts` by insert_index_rows() once the transaction's items are all written; else
    they are indexed here."""
    if index_rows is not None and item_id in index_rows.items:
        insert_index_rows(db, index_rows)  # written twice in one transaction: index the first before removing it
    remove(db, item_id)
    if messages is None:
        messages = from_original(item.original)
    default_at = at_text(item.occurred_at)
    rows = []
    for seq, role, m, text in kept(messages):
        rows.append(((item_id, item.source, item.session_id, item.parent_session_id, item.project,
                      item.segment_index, seq, role, m.tool, at_text(m.at) if m.at else default_at,
                      prompt_hash(role, text)), text))
    ids = allocate_ids(db, [row[9] for row, _ in rows])
    for message_id, (row, text) in zip(ids, rows):
        db.execute(
            "INSERT INTO messages(id, item_id, source, session_id, parent_session_id, project, segment_index, seq, "
            "role, tool, at, prompt_hash) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)", (message_id, *row))
        db.execute("INSERT INTO message_texts(id, text) VALUES(?, ?)", (message_id, text))
        if index_rows is not None:
            index_rows.append((message_id, text))
            index_rows.items.add(item_id)
        else:
            db.execute("INSERT INTO messages_fts(rowid, text) VALUES(?, ?)", (message_id, text))
    return len(rows)


class IndexRows(list):
    """Index rows (message id, text) replace() collected, and the items they belong to."""

    def __init__(self):
        super().__init__()
        self.items: set[int] = set()


def insert_index_rows(db, index_rows: IndexRows) -> None:
    """The (id, text) rows replace() collected, into `messages_fts` in id order, and then none
    are pending. FTS5 keeps a
    transaction's new rows in memory while their ids rise and writes a segment out each time one
    does not: items stored out of time order, each indexed as it was written, made a segment per
    item (a write of 600 sessions, shuffled: 2.1-2.8 s of CPU before ids followed time, 3.3-3.7
    with a segment per item)."""
    index_rows.sort()
    db.executemany("INSERT INTO messages_fts(rowid, text) VALUES(?, ?)", index_rows)
    index_rows.clear()
    index_rows.items.clear()


# Ids per second of a message's time. Milliseconds: messages a second apart (a tool call and its
# result) keep their order, while a posting in the index grows by about one byte against ids
# numbered as stored (benchmarks/messages/README.md). A message whose id is taken (another at the
# same millisecond, or a run spilling up from one) takes the next free one above: its time is
# then read as a few milliseconds later, which no ranking can tell.
IDS_PER_SECOND = 1000
# Fewer free ids than this ahead of the wanted one are read in one look-up.
_TAKEN_WINDOW = 256
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def time_id(at: str) -> int:
    """The id a message stored at `at` (stored time text, UTC) wants: its time in 1/IDS_PER_SECOND
    seconds since 1970, at least 1."""
    try:  # the stored form, YYYY-MM-DDTHH:MM:SS.ffffffZ, read by position (strptime is 10x slower)
        if len(at) != 27 or at[26] != "Z":
            raise ValueError(at)
        dt = datetime(int(at[0:4]), int(at[5:7]), int(at[8:10]), int(at[11:13]), int(at[14:16]), int(at[17:19]),
                      int(at[20:26]), tzinfo=timezone.utc)
    except (TypeError, ValueError):
        dt = datetime.fromisoformat(str(at).replace("Z", "+00:00"))
        dt = dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)
    delta = dt - _EPOCH
    return max(1, (delta.days * 86_400 + delta.seconds) * IDS_PER_SECOND
               + delta.microseconds * IDS_PER_SECOND // 1_000_000)


def allocate_ids(db, ats: list[str]) -> list[int]:
    """Free message ids for messages at these times, in this order: each its time_id(), or the
    next id above it that neither the table nor an earlier one of `ats` holds. `db` answers
    `?`-marked SQL (SQLite or the PostgreSQL backend's connection)."""
    out: list[int] = []
    mine: set[int] = set()
    last: dict[int, int] = {}  # wanted id -> the last id given for it here (a run of equal times)
    for at in ats:
        wanted = time_id(at)
        start = last.get(wanted, wanted - 1) + 1
        while True:
            taken = {r[0] for r in db.execute("SELECT id FROM messages WHERE id >= ? AND id < ?",
                                              (start, start + _TAKEN_WINDOW))}
            candidate = next((c for c in range(start, start + _TAKEN_WINDOW) if c not in taken and c not in mine),
                             None)
            if candidate is not None:
                break
            start += _TAKEN_WINDOW
        out.append(candidate)
        mine.add(candidate)
        last[wanted] = candidate
    return out


def time_ordered(rows) -> dict[int, int]:
    """New ids for existing messages, from (id, at) pairs: in (at, id) order, each its time_id()
    or one above the previous one's, whichever is higher (the migration renumbers with this)."""
    out: dict[int, int] = {}
    previous = 0
    for old, at in sorted(rows, key=lambda r: (r[1], r[0])):
        previous = max(time_id(at), previous + 1)
        out[old] = previous
    return out


def kept(messages: list[MessageRecord]) -> list[tuple[int, str, MessageRecord, str]]:
    """(seq, role, message, bounded text) of each message that replace() stores, numbered as it
    numbers them: the semantic lane's message windows are cut from exactly these."""
    out = []
    for seq, m in enumerate(messages):
        role = m.role if m.role in ROLES else "system"
        text = bound(role, m.text or "")
        if text:
            out.append((seq, role, m, text))
    return out


def remove(db, item_id: int) -> None:
    # An external-content index forgets a row only when told its old text.
    db.execute("INSERT INTO messages_fts(messages_fts, rowid, text) SELECT 'delete', t.id, t.text "
               "FROM messages AS m JOIN message_texts AS t ON t.id = m.id WHERE m.item_id = ?", (item_id,))
    db.execute("DELETE FROM message_texts WHERE id IN (SELECT id FROM messages WHERE item_id = ?)", (item_id,))
    db.execute("DELETE FROM messages WHERE item_id = ?", (item_id,))


def retag(db, item_id: int, project: str | None) -> None:
    db.execute("UPDATE messages SET project = ? WHERE item_id = ?", (project, item_id))


SCHEMA = """
CREATE TABLE messages(
    id INTEGER PRIMARY KEY,
    item_id INTEGER NOT NULL,          -- the item (segment) whose transcript holds it
    source TEXT NOT NULL,
    session_id TEXT NOT NULL,
    parent_session_id TEXT,            -- set for a subagent's session
    project TEXT,                      -- the item's, retagged with it
    segment_index INTEGER NOT NULL,    -- (segment_index, seq): its place in the session
    seq INTEGER NOT NULL,
    role TEXT NOT NULL,                -- user, assistant, tool, system
    tool TEXT,
    at TEXT NOT NULL,                  -- UTC, fixed width, like items.occurred_at
    prompt_hash TEXT                   -- user messages only: finds the same prompt in many sessions
);
-- The text apart: rows of `messages` stay ~100 bytes, so that mapping a few thousand matching
-- ids to their sessions reads a few hundred pages, not one page (or more) per message.
CREATE TABLE message_texts(
    id INTEGER PRIMARY KEY,            -- = messages.id
    text TEXT NOT NULL                 -- redacted, bounded
);
CREATE INDEX messages_item ON messages(item_id);
CREATE INDEX messages_session ON messages(source, session_id, segment_index, seq);
CREATE INDEX messages_prompt ON messages(prompt_hash) WHERE prompt_hash IS NOT NULL;
"""


def backfill(db, format_time) -> int:
    """Messages for every item already stored, from its original: the only copy of the transcript
    the library is sure to have (a connector's files may be gone, an upload was read once)."""
    written = 0
    rows = db.execute("SELECT id, source, session_id, parent_session_id, project, segment_index, occurred_at, "
                      "original FROM items ORDER BY id").fetchall()
    for item_id, source, session_id, parent, project, segment_index, occurred_at, original in rows:
        item = _Stored(source, session_id, parent, project, segment_index, occurred_at, original)
        written += replace(db, item_id, item, lambda t: t if isinstance(t, str) else format_time(t), None)
    return written


@dataclass
class _Stored:
    """The fields of a stored item that its messages copy (occurred_at as stored text)."""

    source: str
    session_id: str
    parent_session_id: str | None
    project: str | None
    segment_index: int
    occurred_at: str
    original: str


def create(db, tokenizer: str | None = None) -> None:
    tokenizer = tokenizer or MESSAGES_TOKENIZER
    db.execute(SCHEMA)
    tok = tokenizer.replace("'", "''")
    db.execute(f"CREATE VIRTUAL TABLE messages_fts USING fts5(text, content='message_texts', content_rowid='id', "
               f"tokenize='{tok}')")
    db.execute("INSERT INTO meta(key, value) VALUES('messages_tokenizer', ?) "
               "ON CONFLICT(key) DO UPDATE SET value = excluded.value", (tokenizer,))
