"""What an item is about, and the current decision first.

`later` and search share one notion of "a newer item on the same subject". The subject of an
item is its title plus the texts of its decision, fact and file atoms (subject_text); its
distinctive subject is the words of those atoms (the title when it has none) that at most
DISTINCT_SHARE of its project's items hold (distinctive_terms): a speaker's name in a chat, or
`shop` in the shop project, tells no subject apart. A newer item of the same project is on the
subject when its relevance for those words reaches a share of the item's own (SELF_SHARE for the
subject, DISTINCT_SELF_SHARE for the distinctive one).

Search uses it after ranking. Measured on the retrieval benchmark's decision queries, a stale
session outranked the current one when its item scored 1.1 to 2.0 times the current item's
relevance: the first session of a chain states the subject at length in the words people ask
with, the revision is short and names the new choice. The recency factor cannot bridge more than
1 / (1 - recency_weight) = 1.43, and a wider recency rule would also push old fixes down under
any newer item. So the rule is narrow: among the hits returned, when a hit has a newer hit of the
same project on its subject further down the list, the newest such hit is moved to just before
it (on MOVE_SHARE, stricter than later's, on its distinctive subject too, and only when the older
hit leads by at most MAX_LEAD). Nothing is dropped: the old item stays in the list, one place
lower, and the scores are left as they were (the list is then not sorted by score: explain says
which hit moved and why). Only hits of other sessions move (the segments of one session are one
piece of work).
"""

from __future__ import annotations

import json

import apsw

from jezero.query import bm25, rare, stats
from jezero.query.first_prompt import STOP_WORDS, fold
from jezero.query.terms import parse_terms, split_tokenizer
from jezero.store import FTS_COLUMNS

# The atoms that say what an item settled and touched (the title is the person's first sentence,
# often a complaint; the revising session names the decision, its parts and its files).
SUBJECT_ATOMS = ("decision", "fact", "file")
# A newer item is on an item's subject from this share of the item's own relevance for it up.
# Measured on the benchmark's decision chains: revising sessions score 0.19-0.55 of the item,
# unrelated newer work of the project 0.00-0.22, mostly under 0.1.
SELF_SHARE = 0.15
# The same for later() without a query, where the subject is the item's distinctive words
# (distinctive_terms). Chosen on half A of the retrieval benchmark's chains
# (benchmarks/retrieval/later_eval.py, with DISTINCT_SHARE), checked on half B: at 0.15 the chats'
# small talk still got in (precision 0.75 on A), at 0.2 none of it on A and every revision.
DISTINCT_SELF_SHARE = 0.2
# Search moves a newer hit on a stricter share than later lists one: a move changes what an agent
# reads first. At SELF_SHARE an unrelated newer crash report (0.18 of the state-library decision)
# and GC work (0.17 of the backend decision) went first on the benchmark; at 0.2 they stay put,
# and the TLS revision (0.19) is no longer moved.
MOVE_SHARE = 0.2
# The rule moves a newer hit only when the older one's score is at most MAX_LEAD times its own.
# Measured on the benchmark: a stale decision led the current one by 1.1-2.0x; an exact error,
# command or file match leads the newer work of its project by 2.2-14x, and stays first.
MAX_LEAD = 2.0
# later(): a subject word held by more than this share of the project's items that match the
# subject does not tell the subject apart (a speaker's name in a chat, "shop" in the shop project).
# Half A: 0.1 dropped the words a revision shares (recall 0.75 on the coding chains), 0.5 kept small
# talk (chats precision 0.26); 0.25 was best on both sets.
DISTINCT_SHARE = 0.25
# Fewer items than this are too few to call a word common: the share is taken of MIN_POOL.
MIN_POOL = 8
# Only the first hits are checked for a newer decision: they are what an agent reads and acts
# on, and each check costs a count per subject word the first time it is seen.
ANCHORS = 3


def subject_text(conn: apsw.Connection, item: dict, title: bool = True) -> str:
    """The title, then the texts of the item's SUBJECT_ATOMS atoms, one per line. `title=False`:
    the atoms alone when it has any."""
    row = conn.execute("SELECT atoms FROM items WHERE id = ?", (item["id"],)).fetchone()
    try:
        atoms = json.loads(row[0]) if row and row[0] else []
    except ValueError:
        atoms = []
    if not isinstance(atoms, list):
        atoms = []
    texts = [t for t in (a.get("text") for a in atoms if isinstance(a, dict) and a.get("type") in SUBJECT_ATOMS)
             if isinstance(t, str)]
    return "\n".join(texts if texts and not title else [item["title"] or "", *texts])


def distinctive_terms(conn: apsw.Connection, item: dict, pool: list[dict], tokenizer: str,
                      share: float = DISTINCT_SHARE, total: int | None = None) -> list:
    """The terms of the item's subject that at most `share` of its scope's items hold, counted in
    `pool` (other items of its scope): the words that tell its subject from the rest of its
    project. A term held by most of the project ("shop", a speaker's name, "booked") says nothing
    about which item is newer on the same subject. `total` is how many items the pool stands for
    (the scope's size, when the pool holds every item that has a subject word), else the pool's
    own size; under MIN_POOL it counts as MIN_POOL (too few to call a word common). Empty when no term is that rare; every term when there is nothing to compare with or
    on a SQLite error (the time budget included)."""
    terms = [t for t in parse_terms(subject_text(conn, item, title=False), tokenizer) if fold(t.text) not in STOP_WORDS]
    others = [h["id"] for h in pool if h["id"] != item["id"]]
    if not terms or not others:
        return terms
    try:
        texts = _Texts(conn, others, tokenizer)
        index = stats.index_stats(conn)
        if index.rows == 0:
            return terms
        bar = share * max(total or len(others), MIN_POOL)
        kept = []
        for t in terms:
            held = sum(1 for r in texts.relevance(others, [t], [1.0], index).values() if r > 0)
            if held <= bar:
                kept.append(t)
        return kept
    except apsw.Error:
        return terms


def current_first(conn: apsw.Connection, hits: list[dict], tokenizer: str, *, may_move=None,
                  move_share: float | None = None, placed: dict | None = None) -> list[dict]:
    """`hits` (best first) with, before each of the first ANCHORS hits, the newest later hit of
    its project on its subject, if one is further down. `may_move(hit, anchor)`, when given, is
    one more condition a hit must meet to move before an anchor, and `move_share` the share of
    the anchor's subject relevance it needs instead of MOVE_SHARE (the fused search gives both:
    fused.py, where a transcript test guards the move too); `placed`, when given, receives
    {moved hit's id: the anchor's id} for each move. Never raises: on any SQLite error (the time
    budget included) the hits come back as they were."""
    if len(hits) < 2:
        return hits
    try:
        moves: dict = {}
        out = _reorder(conn, list(hits), tokenizer, may_move, moves, move_share)
    except apsw.Error:
        return hits
    if placed is not None:
        placed.update(moves)
    return out


def _reorder(conn: apsw.Connection, hits: list[dict], tokenizer: str, may_move=None,
             moves: dict | None = None, move_share: float | None = None) -> list[dict]:
    checked: set[int] = set()
    texts: _Texts | None = None
    i = 0
    while i < min(ANCHORS, len(hits)):
        anchor = hits[i]
        if anchor["id"] in checked or not anchor.get("project"):
            i += 1
            continue
        checked.add(anchor["id"])
        newer = [h for h in hits[i + 1:] if _may_move(h, anchor) and (may_move is None or may_move(h, anchor))]
        if not newer:
            i += 1
            continue
        if texts is None:
            texts = _Texts(conn, [h["id"] for h in hits], tokenizer)
        relevance = _subject_relevance(conn, anchor, [anchor, *newer], texts, tokenizer)
        own = relevance.get(anchor["id"], 0.0)
        share = MOVE_SHARE if move_share is None else move_share
        on_subject = [h for h in newer if own > 0 and relevance.get(h["id"], 0.0) >= share * own]
        on_subject = _on_distinctive_subject(conn, anchor, on_subject, hits, texts, tokenizer)
        if not on_subject:
            i += 1
            continue
        current = max(on_subject, key=lambda h: (h["occurred_at"], h["id"]))
        hits.remove(current)
        hits.insert(i, current)
        if moves is not None:
            moves[current["id"]] = anchor["id"]
        if "explain" in current:
            current["explain"]["placed"] = {"rule": "current_first", "before": anchor["id"],
                                            "subject_share": relevance[current["id"]] / own}
        # the moved hit is now at i: check it as an anchor too (a chain of three revisions)
    return hits


def _on_distinctive_subject(conn, anchor: dict, newer: list[dict], hits: list[dict], texts: "_Texts",
                            tokenizer: str) -> list[dict]:
    """The `newer` hits that are also on the anchor's distinctive subject, as later() reads it
    (distinctive_terms, measured on the listed hits of the anchor's project; DISTINCT_SELF_SHARE
    of the anchor's own relevance for those words). Words the whole project shares made newer
    work look like a revision: the sitemap session was placed before the Redis cache one for
    `Redis cache category pages` (both name the shop's category pages). When no word is
    distinctive, the title test alone decides."""
    if not newer:
        return newer
    terms = distinctive_terms(conn, anchor, [h for h in hits if h.get("project") == anchor["project"]], tokenizer)
    if not terms:
        return newer
    index = stats.index_stats(conn)
    idfs = _sample_idfs(conn, index, terms)
    if idfs is None:  # the sample could not be read in time: no move
        return []
    relevance = texts.relevance([anchor["id"], *(h["id"] for h in newer)], terms, idfs, index)
    own = relevance.get(anchor["id"], 0.0)
    return [h for h in newer if own > 0 and relevance.get(h["id"], 0.0) >= DISTINCT_SELF_SHARE * own]


def _sample_idfs(conn, index: stats.IndexStats, terms) -> list[float] | None:
    """Each term's IDF from the query planner's sample (see _subject_relevance); None when the
    sample could not be read in time."""
    idfs = []
    for t in terms:
        share = stats.sample_share(conn, index, t)
        if share is None:
            return None
        idfs.append(bm25.idf(index.rows, round(min(share, 1.0) * index.rows)))
    return idfs


def _may_move(hit: dict, anchor: dict) -> bool:
    """A hit of another session of the anchor's project, newer, whose score is within MAX_LEAD
    of the anchor's. (Hits are items: their ids are read from items_fts.)"""
    score, lead = hit.get("score") or 0.0, anchor.get("score") or 0.0
    return (hit.get("project") == anchor["project"] and hit.get("session_id") != anchor.get("session_id")
            and (hit.get("occurred_at") or "") > (anchor.get("occurred_at") or "")
            and score > 0 and lead <= MAX_LEAD * score)


def _subject_relevance(conn, anchor: dict, rows: list[dict], texts: "_Texts", tokenizer: str) -> dict[int, float]:
    """Each row's bm25 relevance for the anchor's subject, computed from its indexed text.

    The IDFs come from the query planner's sample (stats.sample_share), not from exact counts: a
    subject has up to MAX_TERMS words, and counting each over the index cost 20-150 ms per search
    on a library of 10,000 items whenever the index had changed. The share test only needs common
    words to weigh little and distinctive ones much, which the sample tells; the sample of a
    library of up to SAMPLE_SIZE items is the whole library."""
    terms = parse_terms(subject_text(conn, anchor), tokenizer)
    if not terms:
        return {}
    index = stats.index_stats(conn)
    if index.rows == 0:
        return {}
    idfs = _sample_idfs(conn, index, terms)
    if idfs is None:  # the sample could not be read in time: no judgement
        return {}
    return texts.relevance([h["id"] for h in rows], terms, idfs, index)


class _Texts:
    """The indexed text of the hits, read once per search and scored as FTS5 would: through
    rare.py's folded text for a case-folding trigram index (substring counts in C), else by
    tokenizing (bm25.explain_row)."""

    def __init__(self, conn: apsw.Connection, ids: list[int], tokenizer: str):
        marks = ",".join("?" * len(ids))
        self.columns = {r[0]: list(r[1:]) for r in conn.execute(
            f"SELECT rowid, {', '.join(FTS_COLUMNS)} FROM items_fts WHERE rowid IN ({marks})", ids)}
        self.fold = rare.folder(*split_tokenizer(tokenizer))
        self.rows: dict[int, rare.Row] = {}
        if self.fold is not None:
            sizes = dict(conn.execute(f"SELECT id, sz FROM items_fts_docsize WHERE id IN ({marks})", ids))
            for rowid, cols in self.columns.items():
                size = rare.total_tokens(sizes.get(rowid, b""))
                self.rows[rowid] = rare.Row(rowid, [self.fold(c) for c in cols], size, "", None, "")
        else:
            name, args = split_tokenizer(tokenizer)
            tok = conn.fts5_tokenizer(name, args)
            self.tokenize_doc = lambda text: tok(text.encode("utf-8"), apsw.FTS5_TOKENIZE_DOCUMENT, None,
                                                 include_offsets=False, include_colocated=False)

    def relevance(self, rowids: list[int], terms, idfs: list[float], index: stats.IndexStats) -> dict[int, float]:
        """Each row's relevance for `terms`; the terms are folded (or keyed) once for all rows."""
        if self.fold is not None:
            folded = [rare.folded(t) for t in terms]
            average = index.tokens / index.rows
            return {rowid: -rare.score(self.rows[rowid], folded, idfs, average) if rowid in self.rows else 0.0
                    for rowid in rowids}
        keys = [t.key for t in terms]
        empty = [""] * len(FTS_COLUMNS)
        return {rowid: bm25.explain_row(self.columns.get(rowid, empty), keys, idfs, index.rows, index.tokens,
                                        self.tokenize_doc)["relevance"] for rowid in rowids}
