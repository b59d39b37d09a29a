"""The vector lane of search (the semantic lane, `[semantic] enabled = true`): sessions ranked by
how near their vectors are to the query's, so that a query in other words than the session's
still finds it.

The query is embedded once (`query=True`) by the configured embedder. Its nearest neighbours are
read from both vector tables (jezero/store/vectors.py): the items' vectors (title, summary,
questions, atoms) and the message windows' (stretches of the transcript), `k` from each, with
the filters (the caller's sources, source, project, since) inside the scan, so the cut to `k`
is made among what the caller may read: a source outside the key never takes a place, however
near its vectors are. Each source is a partition of the tables: a key limited to some sources
scans theirs one by one and keeps the k nearest of all. A session ranks by its best vector, item or window
(for an embedder of several models side by side, `part_slices` and `rank_k`: by each model's own
such ranking, fused by reciprocal rank; VectorLane._ranks_fused). What the vectors say
of an item is checked against the item itself afterwards (a project retagged while the lane was
off), and an item deleted since is left out.

The lane answers only when the library's vectors come from the configured embedder's model; else
it is off and says why (`VectorHits.off`), and search answers with the keyword lanes alone.

Imported only when the lane is on: it brings numpy, sqlite-vec and the plugin host.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import threading
from dataclasses import dataclass

import apsw

from jezero.config import SemanticConfig
from jezero.models import EmbedderNotReady
from jezero.query import bm25
from jezero.query.common import Hits, scope_conditions, time_conditions
from jezero.store import vectors as stored

VECTORS = "vectors"  # the lane's name in the fusion (fused.VECTORS)

# Sessions the lane hands to the fusion, as many as the messages lane (fused.LANE_SESSIONS).
LANE_SESSIONS = 50


@dataclass
class VectorHit:
    """A session as the vector lane found it: the item of its best vector."""

    item_id: int
    source: str
    session_id: str
    rank: int  # from 1
    similarity: float  # cosine, -1..1
    window_id: int | None  # the message window nearest, None when it is the item's own vector


class VectorHits(Hits):
    off: str | None = None  # why the lane did not answer; None when it did
    weight: float = 0.0  # its weight in the fusion

    count_sessions = None  # counts the sessions within the search's filters, up to n (set by the lane)
    flat_k: int | None = None  # the lane's curve where the keyword evidence is flat ([semantic] flat_k)

    def curve(self, messages) -> int:
        """The reciprocal-rank constant of this lane's shares for this query (see flat_curve())."""
        return flat_curve(messages, self.count_sessions, self.flat_k)

    def literal_guard(self, messages):
        """The fusion's rearrangement for this lane (fused.fuse's `arrange`), or None: see
        keep_literal_matches(). `messages` is the messages lane's answer (its terms per session)."""
        if self.count_sessions is None:
            return None
        return literal_guard(messages, self.count_sessions)


class VectorLane:
    """The lane for one process: the `[semantic]` config and its embedder, built on first use."""

    def __init__(self, config: SemanticConfig):
        self.config = config
        self._lock = threading.Lock()
        self._embedder = None
        self._error: str | None = None

    def embedder(self):
        """The embedder, or None with `self._error` saying why (not installed, not ready)."""
        with self._lock:
            if self._embedder is None and self._error is None:
                try:
                    self._embedder = stored.build_embedder(self.config)
                except (LookupError, EmbedderNotReady) as e:
                    self._error = str(e)
            return self._embedder

    def off_reason(self, conn: apsw.Connection) -> str | None:
        """Why the lane cannot answer on this library now, or None when it can."""
        embedder = self.embedder()
        if embedder is None:
            return f"the semantic lane is off: {self._error}"
        stored.load_extension(conn)
        found = stored.recorded(conn)
        if found is None or not stored.has_tables(conn):
            return "the semantic lane is off: the library has no vectors yet (run `jezero embed`)"
        wanted = stored.model_of(self.config.embedder, embedder, self.config.window_chars)
        if found != dataclasses.replace(wanted, embedder=found.embedder):  # the model, layout and windows
            return "the semantic lane is off: " + stored.mismatch(found, wanted)
        return None

    def sessions(self, conn: apsw.Connection, query: str, *, sources, source, project, since,
                 limit: int = LANE_SESSIONS) -> VectorHits:
        """The sessions nearest the query, best first (at most `limit`)."""
        out = VectorHits()
        out.off = self.off_reason(conn)
        if out.off is not None:
            return out
        embedder = self.embedder()
        vector = stored.unit_rows(embedder, [query], query=True)[0]
        if not vector.any():
            return out  # nothing in the query to embed
        filters = {"sources": sources, "source": source, "project": project, "since": since}
        parts, rank_k = getattr(embedder, "part_slices", None), getattr(embedder, "rank_k", None)
        if parts and rank_k is not None:
            best = self._ranks_fused(conn, vector, parts, rank_k, filters)
        else:
            best = self._best(conn, self.nearest(conn, vector, **filters), filters)
        for (src, session_id), (distance, item_id, window_id) in list(best.items())[:limit]:
            out.append(VectorHit(item_id, src, session_id, len(out) + 1, 1.0 - distance * distance / 2.0, window_id))
        out.weight = lane_weight(self.config.weight, [h.similarity for h in out])
        out.flat_k = self.config.flat_k
        # cached: the literal guard and, with flat_k, the lane's curve both ask for the same count
        out.count_sessions = functools.cache(
            lambda up_to: _count_sessions(conn, up_to, sources=sources, source=source, project=project, since=since))
        return out


    def _best(self, conn: apsw.Connection, near: list[tuple], filters: dict) -> dict:
        """Each session's nearest vector, nearest first: {(source, session id): (distance, item
        id, window id)}, the items checked against the filters."""
        items = _items(conn, {i for _, i, _ in near})
        best: dict[tuple[str, str], tuple[float, int, int | None]] = {}
        for distance, item_id, window_id in sorted(near, key=lambda n: (n[0], -n[1])):
            row = items.get(item_id)
            if row is None or not _passes(row, **filters):
                continue  # deleted, or its vectors' filter columns are older than the item
            key = (row[0], row[1])
            if key not in best:
                best[key] = (distance, item_id, window_id)
        return best

    def _ranks_fused(self, conn: apsw.Connection, vector, parts, rank_k: int, filters: dict) -> dict:
        """For an embedder of several models side by side (its `part_slices`, each a model's
        dimensions, and `rank_k`): each model's own ranking of the sessions (the query's other
        dimensions set to zero: the dot product is that model's cosine alone, times its share),
        fused by reciprocal rank, 1 / (rank_k + rank) summed over the models. Where one model
        ranks the right session low and the other high, it stays near the top. Each session
        keeps its nearest vector by the whole query, for the similarity the fusion reads."""
        import numpy as np

        best = self._best(conn, self.nearest(conn, vector, **filters), filters)
        scores: dict[tuple[str, str], float] = {}
        for start, stop in parts:
            masked = np.zeros_like(vector)
            masked[start:stop] = vector[start:stop]
            share = float(masked @ masked)
            if share <= 0.0:
                continue  # this model gave the query nothing (a text of no token of its own)
            for rank, (key, (distance, item_id, window_id)) in enumerate(
                    self._best(conn, self.nearest(conn, masked, **filters), filters).items(), start=1):
                scores[key] = scores.get(key, 0.0) + 1.0 / (rank_k + rank)
                if key not in best:  # found by this model alone: its vector at this model's cosine
                    cosine = (1.0 + share - distance * distance) / 2.0 / share
                    best[key] = (math.sqrt(max(0.0, 2.0 - 2.0 * cosine)), item_id, window_id)
        return {key: best[key] for key in sorted(scores, key=lambda key: (-scores[key], best[key][0], key))}

    def nearest(self, conn: apsw.Connection, vector, *, sources, source, project, since) -> list[tuple]:
        """The k nearest vectors of each table as (distance, item id, window id or None): the
        bits scanned with the filters for CANDIDATES * k candidates, those ranked by their exact
        distance. One read transaction: the centre and the bits are of one state of the file."""
        k = self.config.k
        wanted = CANDIDATES * k
        with conn:
            if stored.vector_count(conn) <= EXACT_UP_TO:
                return _exact_scan(conn, vector, k, sources=sources, source=source, project=project, since=since)
            qbits = stored.bits(vector, stored.read_centre(conn, len(vector)))
            found = {stored.ITEM_BITS: [], stored.WINDOW_BITS: []}
            for part in _partitions(sources, source):
                where, args = _filters(part, project, since)
                found[stored.ITEM_BITS] += [(d, i, None) for i, d in conn.execute(
                    f"SELECT item_id, distance FROM {stored.ITEM_BITS} WHERE embedding MATCH vec_bit(?) AND k = ?{where}",
                    [qbits, wanted, *args])]
                found[stored.WINDOW_BITS] += [(d, i, w) for w, d, i in conn.execute(
                    f"SELECT window_id, distance, item_id FROM {stored.WINDOW_BITS} "
                    f"WHERE embedding MATCH vec_bit(?) AND k = ?{where}", [qbits, wanted, *args])]
            near = []
            for table, floats, key in ((stored.ITEM_BITS, stored.ITEM_VECTORS, "item_id"),
                                       (stored.WINDOW_BITS, stored.WINDOW_VECTORS, "window_id")):
                # Each table's candidates over all the partitions scanned, as one scan of them would give.
                candidates = _nearest(found[table], wanted)
                exact = _exact(conn, floats, key, [c[2] if c[2] is not None else c[1] for c in candidates], vector)
                rescored = [(exact[c[2] if c[2] is not None else c[1]], c[1], c[2]) for c in candidates
                            if (c[2] if c[2] is not None else c[1]) in exact]
                near += _nearest(rescored, k)
        return near


# Up to this many vectors (items and windows) the float vectors are all read and ranked exactly:
# about 5 MB, a few ms, and no approximation where a library is small.
EXACT_UP_TO = 5000


def _exact_scan(conn: apsw.Connection, vector, k: int, *, sources, source, project, since) -> list[tuple]:
    """The exact k nearest of each table, the filters applied to the items themselves."""
    import numpy as np

    clause, args = _item_filters("i", sources, source, project, since)
    near = []
    for table, key in ((stored.ITEM_VECTORS, None), (stored.WINDOW_VECTORS, "window_id")):
        column = f"f.{key}" if key else "NULL"
        rows = conn.execute(f"SELECT f.item_id, {column}, f.embedding FROM {table} AS f "
                            f"JOIN items AS i ON i.id = f.item_id{clause}", args).fetchall()
        if not rows:
            continue
        matrix = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32).reshape(len(rows), -1)
        distances = np.sqrt(np.maximum(2.0 - 2.0 * (matrix @ vector), 0.0))
        near += _nearest([(float(d), r[0], r[1]) for r, d in zip(rows, distances)], k)
    return near


# Candidates read from the bits of each table per nearest neighbour kept (k): the bits order
# vectors roughly, the float vectors of the candidates exactly. Chosen by the recall of the exact
# k nearest against its cost (benchmarks/semantic/README.md).
CANDIDATES = 2


def _exact(conn: apsw.Connection, table: str, key: str, ids: list[int], vector) -> dict[int, float]:
    """The exact L2 distances from `vector` of the rows `ids` of a float table (those still there)."""
    import numpy as np

    if not ids:
        return {}
    ordered = sorted(set(ids))
    rows = conn.execute(f"SELECT {key}, embedding FROM {table} WHERE {key} IN ({','.join('?' * len(ordered))})",
                        ordered).fetchall()
    if not rows:
        return {}
    matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)
    distances = np.sqrt(np.maximum(2.0 - 2.0 * (matrix @ vector), 0.0))
    return {r[0]: float(d) for r, d in zip(rows, distances)}


# Literal matches keep their place (keep_literal_matches): a session the keyword lanes rank above
# another, whose transcript holds a literal term of the query that the other's lacks, stays above
# it whatever the vectors say. A literal term is a name (quoted, or holding digits or punctuation:
# `--clean`, `app/services/pdf.py`, `E0502`; fused._is_name) or a word few of the sessions searched
# hold: its IDF over the sessions within the search's filters, bm25.idf(sessions, holding), at least
# LITERAL_IDF (1.0: about a quarter of them at most, 10 of 40 sessions; 8 of 40 is 1.34).
# The vector lane ranks sessions about the query's subject, and a session about the same subject
# that lacks the error code, the command, the file name or the rare word the query and a keyword
# hit share is the "about the same topic" neighbour that must not displace it. Chosen on half A of
# benchmarks/retrieval (semantic.py; README's semantic section): IDF 0.001 (any word fewer than half
# hold), 0.5 and 1.0 score alike on A (no kind below keyword at R@5; R@5 2.275, MRR@10 2.123 summed
# over the three sets), 1.5 loses MRR (2.112), 2.0 and above lose long_update at R@5, no guard loses
# long_fact and long_update; 1.0, the largest of the ties, guards the fewest words.
LITERAL_GUARD = True
LITERAL_IDF = 1.0
# Only the keyword lanes' first LITERAL_DEPTH sessions guard (None: every one holding a literal
# term). The guard keeps the keyword lanes' top, the exact matches a keyword search shows first, from
# being displaced; a session holding a literal word but ranked below that by the keyword lanes
# themselves is no better evidence than the vectors. Measured at scale (semantic.py --pad: each
# judged set with 2,000 and 10,000 distractor sessions added; benchmarks/retrieval/README.md,
# "the literal guard at scale"): with every session guarding, a word only a few of 10,000 sessions
# hold kept a session only the vectors found below keyword hits ranked 6th to 20th, so paraphrase
# R@5 fell back to keyword's (2,000: 0.542; unguarded 0.833). Chosen on half A of the three sets at
# 0, 2,000 and 10,000 distractors (off, 1, 3, 5): 5 ties off on kinds below keyword (4, all padded)
# with R@5 6.349 vs 6.331 and MRR@10 5.885 vs 5.868 summed over the nine; 1 and 3 put the unpadded
# long_update below keyword. Unpadded results unchanged at R@5.
LITERAL_DEPTH: int | None = 5
# Measured and not kept: a bound on the sessions holding a literal word (None: none). 5, 10, 20,
# 50 on the same half A: 10 to 50 change no R@5 (the words that held paraphrases back are held by
# few sessions), 5 loses coding+10000's file kind. Left for a judged set of that size to settle.
LITERAL_MAX_SESSIONS: int | None = None


def literal_guard(messages, count_sessions):
    """The `arrange` of fused.fuse for a query the messages lane answered (`messages`: its terms per
    session, `held`; the query's names; the terms it read at their newest messages only, which
    are common), or None when no session holds a literal term of the query (then the fused order
    stands). `count_sessions(n)` counts the sessions within the search's filters, up to n."""
    if not LITERAL_GUARD or not messages:
        return None
    held, literals = literal_terms(messages, count_sessions)
    if not literals:
        return None

    def arrange(order: list[dict], lanes: list[str], limit: int) -> list[dict]:
        return keep_literal_matches(order, lanes, limit, held, literals)

    return arrange


def literal_terms(messages, count_sessions) -> tuple[dict, dict]:
    """(each session's terms of the query, as the messages lane found them; each session's literal
    terms of the query, for the sessions holding any): a literal term is a name of the query or a
    word of IDF at least LITERAL_IDF over the sessions within the search's filters."""
    if not messages:
        return {}, {}
    held = getattr(messages, "held", None) or {}
    names = set(getattr(messages, "names", ()))
    capped = set(messages[0].capped)
    holding: dict[str, int] = {}
    for terms in held.values():
        for t in terms:
            holding[t] = holding.get(t, 0) + 1
    rare = {t: n for t, n in holding.items() if t not in capped and t not in names
            and (LITERAL_MAX_SESSIONS is None or n <= LITERAL_MAX_SESSIONS)}
    literal = {t for t in names if t in holding}
    if rare:
        # the sessions searched, counted only as far as the rarity of the commonest word needs
        needed = math.ceil(math.exp(LITERAL_IDF) * (max(rare.values()) + 0.5) + max(rare.values()))
        sessions = count_sessions(needed)
        literal |= {t for t, n in rare.items() if bm25.idf(sessions, min(n, sessions)) >= LITERAL_IDF}
    literals = {key: frozenset(literal.intersection(terms)) for key, terms in held.items()}
    return held, {key: terms for key, terms in literals.items() if terms}


def keep_literal_matches(order: list[dict], lanes: list[str], limit: int, held: dict, literals: dict) -> list[dict]:
    """The fused order (fused.fuse's entries, best first) under the literal guard (LITERAL_IDF):
    the first `limit` places are filled one by one, each with the first session of the fused order
    that no session still unplaced guards against; the rest follow in their order. A session A
    guards against B when the keyword lanes alone (every lane but this one, by their fused shares)
    rank A above B and A's transcript holds a literal term of the query that B's does not
    (`literals`: each session's literal terms; `held`: each session's terms), and A is among the
    keyword lanes' first LITERAL_DEPTH. The keyword lanes'
    first among the sessions left is never guarded against, so each place is filled. A session
    held back records which session and terms kept it below (`kept_below`, for explain)."""
    keyword = [name for name in lanes if name != VECTORS]
    unranked = len(order) + 1

    def keyword_key(e: dict):
        return (-(e["score"] - e["shares"].get(VECTORS, 0.0)), *(e["ranks"].get(n, unranked) for n in keyword))

    position = {id(e): i for i, e in enumerate(sorted(order, key=keyword_key))}
    guards = sorted((e for e in order if e["key"] in literals
                     and (LITERAL_DEPTH is None or position[id(e)] < LITERAL_DEPTH)), key=lambda e: position[id(e)])
    left, placed = list(order), []
    while left and len(placed) < limit:
        for i, e in enumerate(left):
            mine = held.get(e["key"], _NONE)
            by = next((g for g in guards if position[id(g)] < position[id(e)] and not literals[g["key"]] <= mine),
                      None)
            if by is None:
                break
            e.setdefault("kept_below", {"session": by["key"][1], "literal": sorted(literals[by["key"]] - set(mine))})
        placed.append(left.pop(i))
        guards = [g for g in guards if g is not placed[-1]]
    return placed + left


_NONE = frozenset()


# Where the keyword lanes cannot tell sessions apart, the vectors decide (flat_curve()). The lane's
# share of a session at rank r is weight / (K + r) in the fusion; at the fusion's own K (RRF_K, 60)
# the curve is nearly flat over a conversation's 30 sessions (1/61 against 1/72 for ranks 1 and
# 12), so the vectors' first place counted little against the keyword lanes' accidental order of
# sessions that all hold the speakers' names (`what is the name of the dog Lucía took in`: vectors
# 1st, hybrid 9th). A query none of whose terms is literal in any session's transcript (no name of
# the query, no word of IDF LITERAL_IDF or more among the sessions searched: what the literal guard
# reads) has keyword evidence that cannot tell sessions apart, and there the vector lane's share is
# weight / (flat_k + rank). A query with a literal term keeps the fusion's curve, so the keyword
# order stands where the keyword lanes can tell: the sessions that hold the term, and the second
# session of a two-session question, which holds the same words (a sharper curve for every query
# put the vectors' next neighbours before it: chat_multi R@5 0.875 -> 0.625-0.750).
# The constant is `[semantic] flat_k` (config.py; None, the default: off). Measured on half A of
# benchmarks/retrieval (semantic.py --flat-k; README, 2026-12-02, branch hybridflat): with minilm at
# 400-character windows and weight 0.5, 2 takes the chats' R@10 from 0.570 to 0.836 (half B 0.578
# -> 0.859) with no kind of the three sets below keyword alone beyond one question (1, 2, 3 tie on
# A; 5 ties on R@10, 10 and 20 lower); at 1,200-character windows 0.617 -> 0.742. With
# minilm-static it puts long_fact (R@10 1.000 -> 0.929-0.943) and chat_time below keyword alone:
# the static table's vectors are not good enough to decide, so the default stays off. Tried and
# dropped: a switch on the messages lane's separation (its best against its 10th) instead of, or
# with, the literal terms (no better on A for minilm, one more constant; for minilm-static it kept
# "what breed is my dog" but still lost long_fact at R@10).


def flat_curve(messages, count_sessions=None, flat_k: int | None = None) -> int:
    """The vector lane's reciprocal-rank constant for a query: `flat_k` when it is set and no
    session's transcript holds a literal term of the query (literal_terms(): the messages lane's
    answer, `messages`, and the sessions within the search's filters, counted by
    `count_sessions`), else the fusion's RRF_K. Without the messages lane (`messages` None: a search
    of chosen lanes without it) nothing says the keyword evidence is flat: RRF_K."""
    from jezero.query.fused.rules import RRF_K

    if flat_k is None or messages is None:
        return RRF_K
    if messages and count_sessions is not None and literal_terms(messages, count_sessions)[1]:
        return RRF_K
    return flat_k


def lane_weight(weight: float, similarities: list[float]) -> float:
    """The lane's say in the fusion for this query."""
    return weight


def _partitions(sources, source) -> list[str | None]:
    """The sources to scan one by one (the tables' partition key); [None]: one scan of all."""
    if source is not None:
        return [source] if sources is None or source in sources else []
    return [None] if sources is None else list(sources)


def _nearest(near: list[tuple], k: int) -> list[tuple]:
    return sorted(near, key=lambda n: (n[0], -n[1]))[:k]


def _filters(source, project, since) -> tuple[str, list]:
    """The vec0 constraints (partition, then metadata): evaluated inside the nearest-neighbour scan."""
    where, args = [], []
    if source is not None:
        where.append("source_key = ?")
        args.append(stored.name_key(source))
    if project is not None:
        where.append("project_key = ?")
        args.append(stored.name_key(project))
    if since is not None:
        where.append("at >= ?")
        args.append(stored.seconds(since))  # rounded down: _passes compares the exact times
    return "".join(" AND " + w for w in where), args


def _item_filters(table: str, sources, source, project, since) -> tuple[str, list]:
    """The WHERE clause (empty, or with its keyword) and arguments of search's filters over the
    items table, named `table` in the statement."""
    where, args = scope_conditions(table, None if sources is None else list(sources), source)
    if project is not None:
        where.append(f"{table}.project = ?")
        args.append(project)
    more, more_args = time_conditions(f"{table}.occurred_at", since, None)
    return (" WHERE " + " AND ".join(where + more)) if where or more else "", args + more_args


def _count_sessions(conn: apsw.Connection, up_to: int, *, sources, source, project, since) -> int:
    """The sessions whose items pass the filters, counted up to `up_to` (bounded work). A `since`
    without a project is read source by source through items(source, occurred_at), the sources
    found by skipping through that index: a plain scan for the few items of the last days read
    every older row first (45 ms CPU at 100k items; this way under 1 ms)."""
    table = "items"
    if since is not None and project is None:
        if source is not None:
            listed = [source] if sources is None or source in sources else []
        elif sources is not None:
            listed = list(sources)
        else:
            listed = [r[0] for r in conn.execute(_SOURCES)]
        if not listed:
            return 0
        table = "items INDEXED BY items_source_time"
        clause, args = _item_filters("items", listed, None, None, since)
    else:
        clause, args = _item_filters("items", sources, source, project, since)
    return conn.execute(f"SELECT count(*) FROM (SELECT DISTINCT source, session_id FROM {table}{clause} LIMIT ?)",
                        [*args, up_to]).fetchone()[0]


# The library's sources, one index step each (a loose scan of items_source_time).
_SOURCES = ("WITH RECURSIVE s(src) AS (SELECT min(source) FROM items UNION ALL "
            "SELECT (SELECT min(source) FROM items WHERE source > s.src) FROM s WHERE s.src IS NOT NULL) "
            "SELECT src FROM s WHERE src IS NOT NULL")


def _items(conn: apsw.Connection, ids: set[int]) -> dict[int, tuple]:
    if not ids:
        return {}
    ordered = sorted(ids)
    rows = conn.execute(f"SELECT id, source, session_id, project, occurred_at FROM items "
                        f"WHERE id IN ({','.join('?' * len(ordered))})", ordered)
    return {r[0]: r[1:] for r in rows}


def _passes(row: tuple, sources, source, project, since) -> bool:
    """The filters again, on the item itself (the scan applied them to the vectors' copies)."""
    return ((sources is None or row[0] in sources) and (source is None or row[0] == source)
            and (project is None or row[2] == project) and (since is None or row[3] >= since))


def describe(conn: apsw.Connection | None, config: SemanticConfig) -> dict:
    """What `jezero status` and `jezero up` say about the lane: on or off, which embedder and
    model, the library's model, how many items are behind. Builds the embedder (no download)."""
    info = {"enabled": config.enabled, "embedder": config.embedder, "model_id": None, "library_model_id": None,
            "items": None, "behind": None, "off": None}
    if not config.enabled:
        info["off"] = "off ([semantic] enabled = false)"
        return info
    lane = VectorLane(config)
    embedder = lane.embedder()
    if embedder is not None:
        info["model_id"] = embedder.model_id
    if conn is not None:
        found = stored.recorded(conn)
        info["library_model_id"] = found.model_id if found else None
        info["items"] = conn.execute("SELECT count(*) FROM items").fetchone()[0]
        info["behind"] = stored.behind_count(conn)
        info["off"] = lane.off_reason(conn)
    elif embedder is None:
        info["off"] = f"the semantic lane is off: {lane._error}"
    return info
