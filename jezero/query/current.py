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

Two more readings of "the same subject" (benchmarks/retrieval/README.md, branch `coding`): a newer
decision that names the item's choice as what it replaced ("switched from LLVM/inkwell to
Cranelift") is its revision whatever their shares (NAMED_REVISION, within REVISION_LEAD), and a
newer item sharing only the item's files is not on its subject (FILES_ALONE, later() too).

And one reading for the fused search (branch `update`): when a hit's item does not say the query
words its transcript holds (a fact said in passing, which no title or atom keeps), its subject for
the query is those words, read in the transcripts: a newer session of its project holding them
all comes first (newer_on_the_query, TRANSCRIPT_SUBJECT), when few sessions hold them.
"""

from __future__ import annotations

import json
import re
import threading
from collections import OrderedDict

import apsw

from jezero.query import bm25, rare, stats
from jezero.query.common import id_list
from jezero.query.first_prompt import STOP_WORDS, fold
from jezero.query.terms import parse_terms, split_tokenizer
from jezero.store import FTS_COLUMNS, engines

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
# A newer item that shares only the item's files is not on its subject: two sessions that touched
# one file (a crash fix in the screen a state-library revision also edited; GC work in the file the
# backend revision wrote) are not the same decision. So when the item's distinctive subject holds
# words that are not (parts of) its file atoms' paths, a newer item must hold one of those words
# too (files_alone); an item whose subject is its files alone is still followed through them.
# Measured on the retrieval benchmark's chains (later_eval.py, README): every wrong item `later`
# listed (4 of 22) shared only a file with the chain session; no revision did.
FILES_ALONE = True
# A newer decision that names the item's choice as what it replaced ("switched from LLVM/inkwell
# to Cranelift", "moved from Redux Toolkit to Zustand", "instead of Meilisearch") revises it,
# whatever else the two share: the revision names the new choice, and its words seldom reach the
# old session's subject share (revises()).
NAMED_REVISION = True
# How far the older hit's score may lead a newer hit that names its choice as replaced (MAX_LEAD
# for any other newer hit on its subject).
REVISION_LEAD = 3.0
# Only the first hits are checked for a newer decision: they are what an agent reads and acts
# on, and each check costs a count per subject word the first time it is seen.
ANCHORS = 3
# In the fused search, the subject of a hit whose item does not say the query's words is read
# from the transcripts (newer_on_the_query): a fact said in passing ("My daughter goes to
# Greenway", later "We moved my daughter to Maple Park School") is seldom in the summary's title
# or atoms, so the share tests above see two unrelated items and the older session, found by both
# lanes, stays first. Then a newer session of the anchor's project whose transcript holds every
# query word the anchor's holds, with at least 1 / MAX_LEAD of its messages evidence, moves
# before it, when those words are held by at most TRANSCRIPT_HOLDERS sessions of the search's
# scope (a few statements of one subject, not a word every work chat or every module holds).
# Half A (benchmarks/retrieval/README.md, branch `update`): holders 2 and 3 leave coding A at
# MRR@10 0.931 (5 and no bound: 0.927, an old fix one place down); 3 takes long chats A MRR@10
# 0.825 -> 0.828 (2: unchanged). Without the items-silent test coding A fell to 0.921. The
# evidence bound ties on A from 1.25 to 3, so search's MAX_LEAD is used.
TRANSCRIPT_SUBJECT = True
TRANSCRIPT_HOLDERS = 3


def subject_text(conn: apsw.Connection, item: dict, title: bool = True) -> str:
    """The title, then the texts of the item's SUBJECT_ATOMS atoms, one per line. `title=False`:
    the atoms alone when it has any."""
    return _compose(item, _atom_texts(conn, item["id"]), title)


def _atom_texts(conn: apsw.Connection, item_id: int) -> list[str]:
    row = conn.execute("SELECT atoms FROM items WHERE id = ?", (item_id,)).fetchone()
    try:
        atoms = json.loads(row[0]) if row and row[0] else []
    except ValueError:
        atoms = []
    if not isinstance(atoms, list):
        atoms = []
    return [t for t in (a.get("text") for a in atoms if isinstance(a, dict) and a.get("type") in SUBJECT_ATOMS)
            if isinstance(t, str)]


def _typed_atoms(conn: apsw.Connection, item_id: int) -> dict[str, list[str]]:
    """The texts of the item's atoms by type."""
    row = conn.execute("SELECT atoms FROM items WHERE id = ?", (item_id,)).fetchone()
    try:
        atoms = json.loads(row[0]) if row and row[0] else []
    except ValueError:
        atoms = []
    out: dict[str, list[str]] = {}
    for a in atoms if isinstance(atoms, list) else ():
        if isinstance(a, dict) and isinstance(a.get("type"), str) and isinstance(a.get("text"), str):
            out.setdefault(a["type"], []).append(a["text"])
    return out


# What a decision says it replaced: "switched from X to Y", "moved from X to Y", "X instead of Y"
# reads Y, "replaced X with Y", and the Spanish "en lugar de X", "en vez de X", "de X a Y" after a
# verb of change. The clause ends at the next "to"/"with"/"a"/"por" or punctuation.
_REPLACED = re.compile(
    r"\b(?:(?:switch\w*|mov\w*|migrat\w*|chang\w*|port\w*|went|go\w*|back)\s+(?:\S+\s+){0,3}?from"
    r"|instead\s+of|in\s+place\s+of|rather\s+than|replac\w*|drop\w*|remov\w*"
    r"|en\s+lugar\s+de|en\s+vez\s+de|(?:cambi|pas|migr|sustitu|reemplaz)\w*\s+(?:\S+\s+){0,3}?de)"
    r"\s+(.+?)(?=\s+(?:to|with|by|for|a|por|con)\b|[,;()]|\.(?:\s|$)|$)",
    re.IGNORECASE)


def replaced_clauses(text: str) -> list[str]:
    """The parts of a decision's text that name what it replaced (_REPLACED)."""
    return [m.group(1) for m in _REPLACED.finditer(text or "")]


def _compose(item: dict, texts: list[str], title: bool) -> str:
    return "\n".join(texts if texts and not title else [item["title"] or "", *texts])


def distinctive_terms(conn: apsw.Connection, item: dict, pool: list[dict], tokenizer: str,
                      share: float = DISTINCT_SHARE, total: int | None = None, texts: "_Texts | None" = None) -> list:
    """The terms of the item's subject that at most `share` of its scope's items hold, counted in
    `pool` (other items of its scope): the words that tell its subject from the rest of its
    project. A term held by most of the project ("shop", a speaker's name, "booked") says nothing
    about which item is newer on the same subject. `total` is how many items the pool stands for
    (the scope's size, when the pool holds every item that has a subject word), else the pool's
    own size; under MIN_POOL it counts as MIN_POOL (too few to call a word common). Empty when no term is that rare; every term when there is nothing to compare with or
    on a SQLite error (the time budget included). `texts`: the caller's _Texts, to share what it
    has read."""
    if texts is None:
        terms = parse_terms(subject_text(conn, item, title=False), tokenizer)
    else:
        terms = texts.subject(item, title=False)
    terms = [t for t in terms if fold(t.text) not in STOP_WORDS]
    others = [h["id"] for h in pool if h["id"] != item["id"]]
    if not terms or not others:
        return terms
    try:
        texts = texts or _Texts(conn, (), tokenizer)
        index = texts.index
        if index.rows == 0:
            return terms
        key = ("distinct", item["id"], item.get("title"), tuple(others), share, total)
        kept = texts.cache.distinct.get(key)
        if kept is None:
            bar = share * max(total or len(others), MIN_POOL)
            kept = [t for t in terms if texts.held(others, t) <= bar]
            texts.cache.distinct[key] = kept
        return list(kept)
    except apsw.Error:
        return terms


def current_first(conn: apsw.Connection, hits: list[dict], tokenizer: str, *, may_move=None,
                  move_share: float | None = None, placed: dict | None = None, may_revise=None) -> list[dict]:
    """`hits` (best first) with, before each of the first ANCHORS hits, the newest later hit of
    its project on its subject, if one is further down. `may_move(hit, anchor)`, when given, is
    one more condition a hit must meet to move before an anchor, and `move_share` the share of
    the anchor's subject relevance it needs instead of MOVE_SHARE (the fused search gives both:
    fused/, where a transcript test guards the move too). A newer hit whose decision names the
    anchor's choice as replaced (revises(): NAMED_REVISION) moves whatever its subject share, within
    REVISION_LEAD, on `may_revise(hit, anchor)` when given instead of `may_move` (the fused
    search's names rule alone: its transcript says the new choice in other words); it reads its
    score from "revision_score" when a hit has one. `placed`, when given, receives
    {moved hit's id: the anchor's id} for each move. Never raises: on any SQLite error (the time
    budget included) the hits come back as they were."""
    if len(hits) < 2:
        return hits
    try:
        moves: dict = {}
        out = _reorder(conn, list(hits), tokenizer, may_move, moves, move_share, may_revise)
    except apsw.Error:
        return hits
    if placed is not None:
        placed.update(moves)
    return out


def _reorder(conn: apsw.Connection, hits: list[dict], tokenizer: str, may_move=None,
             moves: dict | None = None, move_share: float | None = None, may_revise=None) -> list[dict]:
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
        named = [h for h in hits[i + 1:] if _may_move(h, anchor, REVISION_LEAD, "revision_score")
                 and ((may_revise or may_move) is None or (may_revise or may_move)(h, anchor))] \
            if NAMED_REVISION else []
        if not newer and not named:
            i += 1
            continue
        if texts is None:
            texts = _Texts(conn, (), tokenizer)
        relevance = _subject_relevance(conn, anchor, [anchor, *newer], texts, tokenizer) if newer else {}
        own = relevance.get(anchor["id"], 0.0)
        share = MOVE_SHARE if move_share is None else move_share
        on_subject = [h for h in newer if own > 0 and relevance.get(h["id"], 0.0) >= share * own]
        on_subject = _on_distinctive_subject(conn, anchor, on_subject, hits, texts, tokenizer)
        revisions = revises(conn, anchor, named, hits, texts, tokenizer) if named else []
        if not on_subject and not revisions:
            i += 1
            continue
        current = max([*on_subject, *revisions], key=lambda h: (h["occurred_at"], h["id"]))
        hits.remove(current)
        hits.insert(i, current)
        if moves is not None:
            moves[current["id"]] = anchor["id"]
        if "explain" in current:
            current["explain"]["placed"] = {"rule": "current_first", "before": anchor["id"],
                                            "subject_share": relevance.get(current["id"], 0.0) / own if own else 0.0,
                                            "names_it_replaced": any(h is current for h in revisions)}
        # the moved hit is now at i: check it as an anchor too (a chain of three revisions)
    return hits


def newer_on_the_query(conn: apsw.Connection, hits: list[dict], held: dict, evidence: dict, capped=frozenset(),
                       tokenizer: str | None = None) -> list[dict]:
    """TRANSCRIPT_SUBJECT, over a fused order: before each of the first ANCHORS hits whose item's
    subject (its title and atoms) says none of the query words its transcript holds, when at most
    TRANSCRIPT_HOLDERS sessions hold all those words, the newest later hit of its project whose
    transcript holds every one of them, with at least 1 / MAX_LEAD of the anchor's evidence, if one
    is further down (explain: placed.rule "newer_on_the_query"). `held` and
    `evidence` are the messages lane's ((source, session_id) -> the query terms its transcript
    holds; its score); `capped`, the terms the lane read at their newest messages only (a
    session that was not read may hold them: no move on those). Never raises: on any SQLite error
    (the time budget included) the hits come back as they were."""
    if len(hits) < 2:
        return hits
    try:
        if tokenizer is None:
            from jezero.query.search import library_tokenizer

            tokenizer = library_tokenizer(conn)
        return _newer_on_the_query(conn, list(hits), held, evidence, set(capped), tokenizer)
    except apsw.Error:
        return hits


def _newer_on_the_query(conn, hits: list[dict], held: dict, evidence: dict, capped: set, tokenizer: str) -> list[dict]:
    texts: _Texts | None = None
    checked: set = set()
    i = 0
    while i < min(ANCHORS, len(hits)):
        anchor = hits[i]
        key = (anchor["source"], anchor["session_id"])
        words = set(held.get(key, ()))
        if key in checked or not anchor.get("project") or not words or words & capped:
            i += 1
            continue
        checked.add(key)
        if sum(1 for found in held.values() if words <= set(found)) > TRANSCRIPT_HOLDERS:
            i += 1
            continue  # words many sessions hold: not one subject restated
        own = evidence.get(key, 0.0)
        newer = [h for h in hits[i + 1:]
                 if h.get("project") == anchor["project"] and h.get("session_id") != anchor["session_id"]
                 and (h.get("occurred_at") or "") > (anchor.get("occurred_at") or "")
                 and words <= set(held.get((h["source"], h["session_id"]), ()))
                 and evidence.get((h["source"], h["session_id"]), 0.0) * MAX_LEAD >= own]
        if not newer:
            i += 1
            continue
        if texts is None:
            texts = _Texts(conn, (), tokenizer)
        terms = [t for w in sorted(words) for t in parse_terms(w, tokenizer)]
        if texts.names(texts.atom_subject(anchor), terms):
            i += 1
            continue  # its item says the words: the items' subject rule (current_first) decides
        current = max(newer, key=lambda h: (h["occurred_at"], h["id"]))
        hits.remove(current)
        hits.insert(i, current)
        if "explain" in current:
            current["explain"]["placed"] = {
                "rule": "newer_on_the_query", "before": anchor["id"], "words": sorted(words),
                "evidence_share": evidence.get((current["source"], current["session_id"]), 0.0) / own if own else 0.0}
    return hits


def terms_held(conn: apsw.Connection, item_ids, terms, tokenizer: str) -> dict[int, set[str]]:
    """Which of `terms` (by their text) each item's indexed text holds, as the items' index matches
    them (read and kept per index state, _Texts). Never raises: on any SQLite error (the time
    budget included) every item holds none."""
    try:
        texts = _Texts(conn, item_ids, tokenizer)
        out: dict[int, set[str]] = {i: set() for i in item_ids}
        for t in terms:
            for item_id, value in texts.relevance(list(item_ids), [t], [1.0]).items():
                if value > 0:
                    out[item_id].add(t.text)
        return out
    except apsw.Error:
        return {i: set() for i in item_ids}


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
    terms = distinctive_terms(conn, anchor, [h for h in hits if h.get("project") == anchor["project"]], tokenizer,
                              texts=texts)
    if not terms:
        return newer
    idfs = texts.idfs(terms)
    if idfs is None:  # the sample could not be read in time: no move
        return []
    relevance = texts.relevance([anchor["id"], *(h["id"] for h in newer)], terms, idfs)
    own = relevance.get(anchor["id"], 0.0)
    kept = [h for h in newer if own > 0 and relevance.get(h["id"], 0.0) >= DISTINCT_SELF_SHARE * own]
    return beyond_files(texts, anchor, terms, kept)


def beyond_files(texts: "_Texts", item: dict, terms: list, newer: list[dict]) -> list[dict]:
    """The `newer` items that hold a word of the item's distinctive subject `terms` beyond its
    files (FILES_ALONE): when some of `terms` are not parts of the item's file atoms, a newer item
    holding only the file words shares a file, not the subject."""
    if not FILES_ALONE or not newer:
        return newer
    files = texts.file_keys(item)
    rest = [t for t in terms if t.key not in files]
    if not files or not rest:
        return newer
    return [h for h in newer if texts.holds_word(h["id"], rest)]


def revises(conn: apsw.Connection, anchor: dict, newer: list[dict], hits: list[dict], texts: "_Texts",
            tokenizer: str) -> list[dict]:
    """The `newer` hits whose decisions name, as what they replaced (replaced_clauses), a word of
    the anchor's distinctive subject (distinctive_terms over the listed hits of its project) that
    the anchor's own decisions do not name as replaced."""
    terms = distinctive_terms(conn, anchor, [h for h in hits if h.get("project") == anchor["project"]], tokenizer,
                              texts=texts)
    # what the anchor itself replaced is not its choice: a newer session saying the same ("a call
    # rather than texting", said again) repeats it, it does not revise it
    own = [c for d in texts.typed(anchor["id"]).get("decision", ()) for c in replaced_clauses(d)]
    if own:
        terms = [t for t in terms if not texts.names(own, [t])]
    if not terms:
        return []
    out = []
    for h in newer:
        clauses = [c for d in texts.typed(h["id"]).get("decision", ()) for c in replaced_clauses(d)]
        if clauses and texts.names(clauses, terms):
            out.append(h)
    return out


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


def _may_move(hit: dict, anchor: dict, max_lead: float | None = None, score_key: str = "score") -> bool:
    """A hit of another session of the anchor's project, newer, whose score (`score_key`, else its
    score) is within `max_lead` of the anchor's. (Hits are items: their ids are read from items_fts.)"""
    score, lead = hit.get(score_key, hit.get("score")) or 0.0, anchor.get("score") or 0.0
    max_lead = MAX_LEAD if max_lead is None else max_lead
    return (hit.get("project") == anchor["project"] and hit.get("session_id") != anchor.get("session_id")
            and (hit.get("occurred_at") or "") > (anchor.get("occurred_at") or "")
            and score > 0 and lead <= max_lead * score)


def _subject_relevance(conn, anchor: dict, rows: list[dict], texts: "_Texts", tokenizer: str) -> dict[int, float]:
    """Each row's bm25 relevance for the anchor's subject, computed from its indexed text.

    The IDFs come from the query planner's sample (stats.sample_share), not from exact counts: a
    subject has up to MAX_TERMS words, and counting each over the index cost 20-150 ms per search
    on a library of 10,000 items whenever the index had changed. The share test only needs common
    words to weigh little and distinctive ones much, which the sample tells; the sample of a
    library of up to SAMPLE_SIZE items is the whole library."""
    terms = texts.subject(anchor, title=True)
    if not terms:
        return {}
    if texts.index.rows == 0:
        return {}
    idfs = texts.idfs(terms)
    if idfs is None:  # the sample could not be read in time: no judgement
        return {}
    return texts.relevance([h["id"] for h in rows], terms, idfs)


# -- the hits' indexed text, read and scored once per index state -------------------------------

# What the rule reads and computes depends only on the index state (the items' indexed text and
# sizes, the averages, the sample's IDFs), so it is kept per state and shared by the searches of
# that state: a fused search runs the rule twice over mostly the same hits, and agents repeat and
# refine their searches. A write starts a new state and so a new cache; the newest CACHED_STATES
# are kept. Measured on benchmarks/load's 100k library (tantivy engine, query layer alone): the
# rule cost about as much as the engine's own search before (README there).
CACHED_STATES = 2
# Bounds on one state's cache, for a long-lived server on a library that does not change: rows
# of ~1 KB of indexed text each, and memoised relevance / distinctive-term answers.
CACHED_ROWS = 20_000
CACHED_ANSWERS = 20_000
# A hit's relevance is 0 for a term it does not hold; the rule only checks that quickly (a
# substring test over its folded text) when every column weight is positive, as FTS5's bm25
# weights here are: then a term adds to a row's score exactly when the row holds it.
_POSITIVE_WEIGHTS = all(w > 0 for w in bm25.WEIGHTS)


class _Items:
    """The items' indexed texts as read (rows, columns, atoms, subjects), shared by every state of
    one library: they depend on an item's own text only, so an entry stands for every state in
    which its item has not changed since it was read. `changed` holds the latest change number
    of each item changed since `head` was first taken (the library's change log, read once per
    new state: a few rows), so a commit costs the readers nothing but the items it wrote. (Until
    2026-12-01 each new state copied the previous state's texts of unchanged items: 4.8% of a
    search's samples with a writer committing five times a second, benchmarks/load/README.md.)"""

    def __init__(self, head: int) -> None:
        self.head = head  # every change after this number is in `changed`
        self.changed: dict[int, int] = {}
        self.lock = threading.Lock()
        self.rows: dict[int, tuple] = {}  # id -> (read at, (rare.Row, folded text NUL-joined) / None: no row)
        self.columns: dict[int, tuple] = {}  # id -> (read at, the indexed columns / None)
        self.atoms: dict[int, tuple] = {}  # id -> (read at, the texts of its SUBJECT_ATOMS atoms)
        self.subjects: dict[tuple, tuple] = {}  # (id, title?, title text) -> (read at, its subject's terms)
        self.typed: dict[int, tuple] = {}  # id -> (read at, its atoms' texts by type)

    def advance(self, conn: apsw.Connection, head: int) -> None:
        """Learn the changes up to `head` (the change number a new state was first seen at)."""
        with self.lock:
            if head <= self.head:
                return
            top = self.head
            for item_id, seq in conn.execute("SELECT item_id, seq FROM item_changes WHERE seq > ?", (self.head,)):
                self.changed[item_id] = seq
                top = max(top, seq)
            self.head = max(top, head)

    def trim(self) -> None:
        # Racing threads may both clear: either way the cache is only emptied, never wrong.
        if len(self.rows) > CACHED_ROWS or len(self.columns) > CACHED_ROWS:
            self.rows.clear()
            self.columns.clear()
            self.atoms.clear()
            self.typed.clear()
        if len(self.subjects) > CACHED_ANSWERS:
            self.subjects.clear()


class _Kept:
    """One table of _Items as a state at change number `seq` sees it (a mapping): an entry read
    at change number r is valid there when its item's latest change is at most min(r, seq), i.e.
    the item's text was the same when it was read and in this state."""

    __slots__ = ("items", "table", "seq", "of")

    def __init__(self, items: _Items, table: dict, seq: int, of=None) -> None:
        self.items, self.table, self.seq, self.of = items, table, seq, of

    def get(self, key, default=None):
        found = self.table.get(key)
        if found is None:
            return default
        read, value = found
        item_id = key if self.of is None else key[0]
        if self.items.changed.get(item_id, 0) > min(read, self.seq):
            return default
        return value

    def __contains__(self, key) -> bool:
        return self.get(key, _MISSING) is not _MISSING

    def __setitem__(self, key, value) -> None:
        self.table[key] = (self.seq, value)

    def setdefault(self, key, value):
        if key not in self:
            self[key] = value
        return self.get(key)

    def __len__(self) -> int:
        return len(self.table)


_MISSING = object()


class _StateCache:
    """What the rule computes for one index state (IDFs, relevance, distinctive terms), and the
    items' texts it reads (_Items, shared with the library's other states when the state's change
    number is known)."""

    def __init__(self, seq: int | None = None, items: _Items | None = None) -> None:
        self.seq = seq  # the library's last change number when the state was first seen (None: unknown)
        if items is None or seq is None:
            items, seq = _Items(0), 0  # this state's own
        self.items = items
        self.rows = _Kept(items, items.rows, seq)
        self.columns = _Kept(items, items.columns, seq)
        self.atoms = _Kept(items, items.atoms, seq)
        self.subjects = _Kept(items, items.subjects, seq, of=True)
        self.typed = _Kept(items, items.typed, seq)
        self.idfs: dict[tuple, float] = {}  # term key -> IDF from the sample
        self.scores: dict[tuple, dict[int, float]] = {}  # (terms, idfs) -> {id: relevance}
        self.distinct: dict[tuple, list] = {}  # distinctive_terms' answers

    def trim(self) -> None:
        # Racing threads may both clear: either way the cache is only emptied, never wrong.
        self.items.trim()
        for d in (self.idfs, self.scores, self.distinct):
            if len(d) > CACHED_ANSWERS:
                d.clear()


_caches: OrderedDict[tuple, _StateCache] = OrderedDict()
_items: dict[tuple, _Items] = {}  # (library file, tokenizer) -> its items' texts
_caches_lock = threading.Lock()


def _cache_for(conn: apsw.Connection, index: stats.IndexStats, tokenizer: str) -> _StateCache:
    """The cache of this index state (a private one when the state cannot be identified). The
    items' texts (rows, atoms, subjects) are the library's (_Items), valid in every state where
    their item has not changed since they were read: a connector committing every few seconds
    otherwise made the rule read and parse its hits again after every commit. What depends on
    the whole index (IDFs, averages, relevance) starts over with each state."""
    if index.token is None or not index.library:
        return _StateCache()
    key = (index.library, index.state, index.rows, index.tokens, tokenizer)
    with _caches_lock:
        cache = _caches.get(key)
        if cache is not None:
            _caches.move_to_end(key)
            items = None
        else:
            items = _items.get((index.library, tokenizer))
    if cache is None:
        seq = _change_number(conn)
        if seq is not None:
            if items is None or seq < items.head:
                # new, or a state older than one seen (a thread on an older snapshot; a library
                # replaced by an older copy): texts start over rather than guess
                items = _Items(seq)
            else:
                try:
                    items.advance(conn, seq)
                except apsw.Error:
                    items = _Items(seq)
        cache = _StateCache(seq, items)
        with _caches_lock:
            cache = _caches.setdefault(key, cache)
            if cache.seq is not None:
                _items[(index.library, tokenizer)] = cache.items
            while len(_caches) > CACHED_STATES:
                _caches.popitem(last=False)
    cache.trim()
    return cache


def folded_rows(conn: apsw.Connection, ids, tokenizer: str) -> dict[int, tuple]:
    """The items' indexed columns folded as a case-folding trigram `tokenizer` folds them, each
    {id: (rare.Row, its columns joined by NUL)} for the ids the index holds: read once and kept
    with this index state's texts (_StateCache, shared with the rule's own reads of them: an
    item changed since is read again). {} when the tokenizer does not fold (no rare.folder)."""
    texts = _Texts(conn, ids, tokenizer)
    if texts.fold is None:
        return {}
    rows = texts.cache.rows
    return {i: row for i in ids if (row := rows.get(i)) is not None}


def forget() -> None:
    """Drop every state's cache and the items' texts (tests: a cold start)."""
    with _caches_lock:
        _caches.clear()
        _items.clear()


def _change_number(conn: apsw.Connection) -> int | None:
    try:
        head = engines.library_head(conn)
    except apsw.Error:
        return None
    return head.seq if head is not None else None


class _Texts:
    """The indexed text of the hits, read when first needed and scored as FTS5 would: through
    rare.py's folded text for a case-folding trigram index (substring counts in C), else by
    tokenizing (bm25.explain_row). What it reads and computes is kept for the index state
    (_StateCache); `ids` are read at once."""

    def __init__(self, conn: apsw.Connection, ids, tokenizer: str):
        self.conn = conn
        self.tokenizer = tokenizer
        self.index = stats.index_stats(conn)
        self.cache = _cache_for(conn, self.index, tokenizer)
        self.fold = rare.folder(*split_tokenizer(tokenizer))
        self.tokenize_doc = None
        if self.fold is None:
            name, args = split_tokenizer(tokenizer)
            tok = conn.fts5_tokenizer(name, args)
            self.tokenize_doc = lambda text: tok(text.encode("utf-8"), apsw.FTS5_TOKENIZE_DOCUMENT, None,
                                                 include_offsets=False, include_colocated=False)
        if ids:
            self._load(ids)

    # -- reading -----------------------------------------------------------------------------

    def _load(self, ids) -> None:
        known = self.cache.rows if self.fold is not None else self.cache.columns
        missing = [i for i in dict.fromkeys(ids) if i not in known]
        if not missing:
            return
        ranker = stats._indexed_elsewhere(self.conn)  # a backend without FTS5: the items' own text
        if ranker is not None:
            for rowid, found in ranker.indexed_columns(ids=missing).items():
                cols, size = found
                if self.fold is None:
                    known[rowid] = cols
                else:
                    text = [self.fold(c) for c in cols]
                    known[rowid] = (rare.Row(rowid, text, size, "", None, ""), "\0".join(text))
            for rowid in missing:
                known.setdefault(rowid, None)
            return
        listed, args = id_list(self.conn, missing)  # (one statement whatever the count)
        columns = {r[0]: list(r[1:]) for r in self.conn.execute(
            f"SELECT rowid, {', '.join(FTS_COLUMNS)} FROM items_fts WHERE rowid IN {listed}", args)}
        if self.fold is None:
            for rowid in missing:
                known[rowid] = columns.get(rowid)
            return
        sizes = dict(self.conn.execute(f"SELECT id, sz FROM items_fts_docsize WHERE id IN {listed}", args))
        for rowid in missing:
            cols = columns.get(rowid)
            if cols is None:
                known[rowid] = None
                continue
            text = [self.fold(c) for c in cols]
            row = rare.Row(rowid, text, rare.total_tokens(sizes.get(rowid, b"")), "", None, "")
            known[rowid] = (row, "\0".join(text))

    def subject(self, item: dict, title: bool) -> list:
        """The terms of the item's subject (subject_text)."""
        key = (item["id"], title, item.get("title"))
        terms = self.cache.subjects.get(key)
        if terms is None:
            atoms = self.cache.atoms.get(item["id"])
            if atoms is None:
                atoms = self.cache.atoms[item["id"]] = _atom_texts(self.conn, item["id"])
            terms = self.cache.subjects[key] = parse_terms(_compose(item, atoms, title), self.tokenizer)
        return terms

    def atom_subject(self, item: dict) -> list[str]:
        """The item's subject as text: its title and the texts of its SUBJECT_ATOMS atoms."""
        atoms = self.cache.atoms.get(item["id"])
        if atoms is None:
            atoms = self.cache.atoms[item["id"]] = _atom_texts(self.conn, item["id"])
        return [item.get("title") or "", *atoms]

    def typed(self, item_id: int) -> dict[str, list[str]]:
        """The texts of the item's atoms by type (_typed_atoms)."""
        found = self.cache.typed.get(item_id)
        if found is None:
            found = self.cache.typed[item_id] = _typed_atoms(self.conn, item_id)
        return found

    def file_keys(self, item: dict) -> set:
        """The keys of the terms of the item's file atoms (their paths and the paths' parts)."""
        files = self.typed(item["id"]).get("file", ())
        return {t.key for t in parse_terms("\n".join(files), self.tokenizer)} if files else set()

    def holds_word(self, rowid: int, terms) -> bool:
        """Whether the row holds one of `terms` as a word of its own: with a trigram index, not
        only inside a longer word (`state` in `useState`)."""
        if self.fold is None:
            return any(v > 0 for v in self.relevance([rowid], terms, [1.0] * len(terms)).values())
        self._load([rowid])
        found = self.cache.rows.get(rowid)
        if found is None:
            return False
        text = found[1]
        for t in terms:
            needle = rare.folded(t)
            start = text.find(needle) if needle else -1
            while start >= 0:
                end = start + len(needle)
                if (start == 0 or not text[start - 1].isalnum()) and (end == len(text) or not text[end].isalnum()):
                    return True
                start = text.find(needle, start + 1)
        return False

    def names(self, texts: list[str], terms) -> bool:
        """Whether any of `texts` holds one of `terms` as the index would match it."""
        if self.fold is not None:
            folded = self.fold("\n".join(texts))
            return any((n := rare.folded(t)) and n in folded for t in terms)
        keys = {t.key for t in parse_terms("\n".join(texts), self.tokenizer)}
        return any(t.key in keys for t in terms)

    def idfs(self, terms) -> list[float] | None:
        """_sample_idfs, remembered per term for the state."""
        known = self.cache.idfs
        out = []
        for t in terms:
            idf = known.get(t.key)
            if idf is None:
                found = _sample_idfs(self.conn, self.index, [t])
                if found is None:
                    return None
                idf = known[t.key] = found[0]
            out.append(idf)
        return out

    # -- scoring -----------------------------------------------------------------------------

    def relevance(self, rowids: list[int], terms, idfs: list[float], index: stats.IndexStats | None = None
                  ) -> dict[int, float]:
        """Each row's relevance for `terms`; the terms are folded (or keyed) once for all rows."""
        index = index or self.index
        self._load(rowids)
        memo_key = (tuple(t.key for t in terms), tuple(idfs), index.rows, index.tokens)
        memo = self.cache.scores.get(memo_key)
        if memo is None:
            memo = self.cache.scores[memo_key] = {}
        out: dict[int, float] = {}
        if self.fold is not None:
            folded = [rare.folded(t) for t in terms]
            average = index.tokens / index.rows
            for rowid in rowids:
                value = memo.get(rowid)
                if value is None:
                    found = self.cache.rows.get(rowid)
                    if found is None:
                        value = 0.0
                    else:
                        row, text = found
                        # Terms the row does not hold add exactly 0.0 to its sum: leave them out.
                        held = [k for k, n in enumerate(folded) if not n or n in text] if _POSITIVE_WEIGHTS \
                            else range(len(folded))
                        value = -rare.score(row, [folded[k] for k in held], [idfs[k] for k in held], average) \
                            if held else 0.0
                    memo[rowid] = value
                out[rowid] = value
            return out
        keys = [t.key for t in terms]
        empty = [""] * len(FTS_COLUMNS)
        for rowid in rowids:
            value = memo.get(rowid)
            if value is None:
                value = memo[rowid] = bm25.explain_row(self.cache.columns.get(rowid) or empty, keys, idfs, index.rows,
                                                       index.tokens, self.tokenize_doc)["relevance"]
            out[rowid] = value
        return out

    def held(self, rowids: list[int], term) -> int:
        """How many of the rows hold the term (relevance > 0 for it alone)."""
        needle = rare.folded(term) if self.fold is not None else ""
        if not needle or not _POSITIVE_WEIGHTS:
            return sum(1 for r in self.relevance(rowids, [term], [1.0]).values() if r > 0)
        self._load(rowids)
        rows = self.cache.rows
        return sum(1 for rowid in dict.fromkeys(rowids)
                   if (found := rows.get(rowid)) is not None and needle in found[1])
