"""The transcript reads: a session's own messages searched for the words the lane could not read.

A session the lane never read because a common word was read at its newest messages only is not
taken as lacking it: for names (a path, a flag), and plain words held by under half the sessions
within the filters (READ_WORDS), its own messages are searched (READ_UNREAD, unread_evidence()),
and what that finds is held by its transcript for the fused current-first too (READ_HELD). The
same bounded read (TranscriptRead) serves the rules after fusion that read the fused hits'
transcripts (passes.py: PAGE_WORDS, NAMES_READ).

The rules named here are constants of rules.py.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import apsw

from jezero.query import messages as mq
from jezero.query.common import budget, id_list
from jezero.query.fused import rules
from jezero.query.fused.messages_lane import _NONE


_RANGES = ("SELECT i.id, (SELECT min(m.id) FROM messages AS m WHERE m.item_id = i.id), "
           "(SELECT max(m.id) FROM messages AS m WHERE m.item_id = i.id) "
           "FROM items AS i WHERE i.source = ? AND i.session_id = ? ORDER BY i.id")


# The lookups' answers kept per state of the library's messages (the messages index's structure
# record, which FTS5 rewrites at every write to it, and the library's last change number: a
# message's project is also updated with its item's), for the last STATES_KEPT states, at most
# LOOKUPS_KEPT answers a state (then it starts over). A lookup's answer depends only on the
# messages in its item's id range and their columns under the filters, so in one state the same
# lookup has the same answer; the load benchmark's warm searches ask ~20 a search
# (benchmarks/load/README.md, 2026-12-06, `load12`).
STATES_KEPT = 2
LOOKUPS_KEPT = 50_000
_STATE = ("SELECT (SELECT block FROM messages_fts_data WHERE id = 10), "
          "(SELECT coalesce(max(seq), 0) FROM item_changes)")
_kept: OrderedDict[tuple, dict] = OrderedDict()
_kept_lock = threading.Lock()


def _kept_for(conn: apsw.Connection) -> dict:
    """The lookups' answers kept for the messages' state `conn` sees (a private dict when the state
    cannot be read: a library without a messages index or a change log)."""
    filename = getattr(conn, "filename", "") or ""
    try:
        row = conn.execute(_STATE).fetchone() if filename else None
    except apsw.SQLError:
        row = None
    if row is None or row[0] is None:
        return {}
    key = (filename, bytes(row[0]), row[1])
    with _kept_lock:
        found = _kept.get(key)
        if found is None:
            found = _kept[key] = {}
            while len(_kept) > STATES_KEPT:
                _kept.popitem(last=False)
        else:
            _kept.move_to_end(key)
        if len(found) > LOOKUPS_KEPT:
            found.clear()
    return found


def forget() -> None:
    """Drop every state's kept lookups (tests: a cold start)."""
    with _kept_lock:
        _kept.clear()


class TranscriptRead:
    """The bounded read of a session's own messages that READ_UNREAD, PAGE_WORDS and NAMES_READ
    share: whether an FTS5 expression matches within the id range of an item's messages, under
    the lane's filters (the first match ends it); a session's items' ranges are read once, and
    each lookup once: one read serves a search's three rules (`of`). Of the 23.4 lookups a search
    of the load benchmark made (20k items with messages, tantivy), 2.6 asked again what an earlier
    rule of the same search had asked (benchmarks/load/README.md, 2026-12-03, `load8`)."""

    def __init__(self, conn: apsw.Connection, lane):
        self.conn = conn
        where, self.args = lane.filters.sql()
        # (`+m.item_id`: the messages' item index is no use here, FTS5 drives the join, but with the
        # index in view SQLite prepared the statement again at each new item bound, ~7 us a lookup.)
        self.sql = ("SELECT 1 FROM messages_fts CROSS JOIN messages AS m ON m.id = messages_fts.rowid "
                    "WHERE messages_fts MATCH ? AND messages_fts.rowid BETWEEN ? AND ? AND +m.item_id = ?"
                    f"{' AND ' + where if where else ''} LIMIT 1")
        self.ranges: dict[tuple[str, str], list] = {}
        self.found: dict[tuple, bool] = {}  # (item, lo, hi, expression) -> whether it matched
        self.kept = _kept_for(conn)  # this state's answers, of every search's lookups
        self.shape = (self.sql, *self.args)

    @classmethod
    def of(cls, conn: apsw.Connection, lane) -> "TranscriptRead":
        """The search's read (kept on its lane, which is the search's own: its filters are the
        lane's): what one rule looked up is not looked up again by the next."""
        read = getattr(lane, "transcript_read", None)
        if read is None or read.conn is not conn:
            read = lane.transcript_read = cls(conn, lane)  # (a lane is a Hits: it takes attributes)
        return read

    def item_holds(self, item: int, lo: int, hi: int, expression: str) -> bool:
        key = (item, lo, hi, expression)
        found = self.found.get(key)
        if found is None:  # (an interrupted lookup raises: nothing is kept of it)
            shared = (self.shape, key)
            found = self.kept.get(shared)
            if found is None:
                found = self.kept[shared] = \
                    self.conn.execute(self.sql, [expression, lo, hi, item, *self.args]).fetchone() is not None
            self.found[key] = found
        return found

    def session_holds(self, key: tuple[str, str], expression: str) -> bool:
        if key not in self.ranges:
            # A session's items, and each one's first and last message id: from the items' session
            # index and two steps of the messages' item index each (a message has its item's source
            # and session). Grouping the session's messages by item read each of its ~50 rows
            # through the table for its item_id (34 us a session at 20k items, 18 this way).
            self.ranges[key] = [r for r in self.conn.execute(_RANGES, key) if r[1] is not None]
        return any(self.item_holds(item, lo, hi, expression) for item, lo, hi in self.ranges[key])


def unread_evidence(conn: apsw.Connection, lane, item_hits: list[dict], time_budget_ms: int) -> dict:
    """READ_UNREAD: the evidence of the items lane's first READ_SESSIONS sessions that the
    messages lane never read (READ_SEEN: also those it read in part), for the common terms it read
    at their newest LANE_MAX_ROWS only that are names or parts of one (READ_NAMES), or plain words
    held by under WORDS_SPREAD of the sessions within the filters (READ_WORDS). Each term is
    looked up in that session's own messages: FTS5's match within the id range of each of its
    items the items lane hit (a bounded read of one session; the first match ends it; a part of a
    name found whole is held). A term found there scores what each of its messages scored in the
    lane; the session's evidence is then what the lane computes (its terms' scores summed, times
    the weighted share of the query's words it holds to COVERAGE_POWER). Only the sessions that
    gain are returned, by (source, session_id); {} when every term was read whole or on a backend
    ranking the messages itself; an empty Cut when out of work."""
    common = getattr(lane, "common", None) if lane else None
    if not common or mq.backend(conn) is not None:
        return {}
    if rules.READ_NAMES:  # names, and with READ_WORDS the plain words held by under half the sessions
        spread = (getattr(lane, "spread", None) or {}) if rules.READ_WORDS else None
        common = {t: c for t, c in common.items()
                  if c[2] or (spread is not None and spread.get(t, 0.0) < rules.WORDS_SPREAD)}
        if not common:
            return {}
    evidence, held, weights = lane.evidence, lane.held, lane.weights
    whole = sum(weights.values())
    read = TranscriptRead.of(conn, lane)

    def share(terms) -> float:
        if not rules.COVERAGE_POWER or whole <= 0:
            return 1.0
        return (sum(weights.get(t, 0.0) for t in terms) / whole) ** rules.COVERAGE_POWER

    out = Read()
    items: dict[tuple[str, str], list[int]] = {}
    ranked: dict[tuple[str, str], None] = {}  # the items lane's sessions, in its order
    for h in item_hits:
        key = (h["source"], h["session_id"])
        if key not in ranked and len(ranked) >= rules.READ_SESSIONS:
            continue
        ranked.setdefault(key)
        if rules.READ_SEEN or key not in evidence:  # else the lane read it: its evidence stands
            items.setdefault(key, []).append(h["id"])
    if not items:
        return out
    with budget(conn, time_budget_ms):
        try:
            listed, ids = id_list(conn, [i for found in items.values() for i in found])
            ranges = {r[0]: (r[1], r[2]) for r in conn.execute(
                f"SELECT item_id, min(id), max(id) FROM messages WHERE item_id IN {listed} GROUP BY item_id", ids)}
            for key, found_items in items.items():
                have = held.get(key, _NONE)
                found: list[str] = []
                for t in sorted(common, key=lambda t: common[t][3] is not None):  # whole names first
                    if t in have:
                        continue
                    if common[t][3] in found or any(  # a part of a name found whole is held
                            read.item_holds(i, *ranges[i], common[t][1]) for i in found_items if i in ranges):
                        found.append(t)
                if not found:
                    continue
                before = share(have)
                raw = evidence.get(key, 0.0) / before if before > 0 else 0.0
                raw += sum(common[t][0] for t in found)
                out[key] = raw * share(set(have) | set(found))
                out.held[key] = frozenset(have) | frozenset(found)
                out.found[key] = tuple(found)
        except apsw.InterruptError:
            out = Cut()  # out of work: the lane's own evidence stands, and the answer says it was cut
    return out


class Read(dict):
    """unread_evidence()'s answer: each session's evidence, and in `held` the terms its transcript
    holds (the lane's and those the read found)."""

    def __init__(self):
        super().__init__()
        self.held: dict[tuple[str, str], frozenset] = {}  # the lane's terms and the read's
        self.found: dict[tuple[str, str], tuple[str, ...]] = {}  # the read's alone


class Cut(Read):
    """unread_evidence() out of work: nothing read, and the search's answer is marked cut."""

    cut = True
