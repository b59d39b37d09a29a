"""Stage 1 of search on PostgreSQL: the candidate pool, after the same filters, before the cut.
The query layer does the rest exactly as for SQLite (jezero.query.search: the recency re-rank,
the limit, the hit fields, `later` and its bars), so only what finds and scores the pool is here.

Matching is FTS5's trigram matching: a term matches an item whose five indexed fields, folded
(lowercase, no diacritics), contain it as a substring (`migrat` finds `migration`, `brulee` finds
`Crème brûlée`), found through a pg_trgm GIN index (`LIKE '%term%'`).

Ranking is not bm25. PostgreSQL has no bm25; its ranking functions know no document frequency.
Each matched term scores

    idf(term) * (ts_rank_cd({0.25, 0.5, 0.75, 1.0}, fts, term, 1) + SUBSTRING_CREDIT)

summed over the query's terms: the IDF is FTS5's own (bm25.idf, the term's exact row count); the
field weights are FTS5's column weights, as the tsvector's classes A-D (store.WEIGHT_CLASSES);
ts_rank_cd counts the term's occurrences (as prefixes of words) by those weights, divided by
1 + log(the item's length), where bm25 saturates the count (k1) and normalises by each field's
length against the average (b). A term found only inside a word (`gration` in `migration`) has no
tsvector lexeme to rank and earns SUBSTRING_CREDIT alone: the trigram index counts it in full.
benchmarks/retrieval/README.md measures the difference next to SQLite.

As on SQLite, a word in half the library or more (bm25 floors its IDF at 1e-6) is left out of
the ranked match; a query made only of such words takes the pool's newest matches. Work is
bounded by shape, not by a clock (PostgreSQL counts no steps a budget could read): each term's
count stops at half the library, and the scored rows are those that match a term that is not
that common.
"""

from __future__ import annotations

import re

from jezero.query import bm25

from jezero_store_postgres.messages import MessageRanking
from jezero_store_postgres.store import RANK_WEIGHTS, fold
from jezero_store_postgres.subjects import SubjectTexts

# What a term found only as a substring of a word adds, next to ts_rank_cd's scale (one
# occurrence in a summary of 100 words ranks about 0.18, in a title about 0.36).
SUBSTRING_CREDIT = 0.1
_WORD = re.compile(r"^[0-9a-z]+$")


def like_pattern(text: str) -> str:
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def _tsquery(folded: str) -> tuple[str, str]:
    """(SQL, argument) of the tsquery that ranks a term: a prefix for one word, else its words in
    order (phraseto_tsquery)."""
    if _WORD.match(folded):
        return "to_tsquery('simple', ?)", folded + ":*"
    return "phraseto_tsquery('simple', ?)", folded


class Ranker(MessageRanking, SubjectTexts):
    """The postgres reader's engine: jezero.query.search calls candidates() instead of FTS5; the
    messages lane and recall call MessageRanking's methods (messages.py), current-first and
    later's subject SubjectTexts' (subjects.py)."""

    name = "postgres"
    lanes = ("items", "messages")  # a library older than schema 2 has only "items" (connect_reader)

    def __init__(self, conn):
        self.conn = conn

    def candidates(self, terms, filters, pool: int) -> list[tuple[int, float, str]]:
        """(item id, relevance, occurred_at) of the `pool` best matches that pass `filters`
        (jezero.query.search._Filters), best first, newer id first on a tie."""
        conn = self.conn
        folded = list(dict.fromkeys(fold(t.text) for t in terms))
        folded = [f for f in folded if f.strip()]
        if not folded:
            return []
        rows = conn.execute("SELECT count(*) FROM items_search").fetchone()[0]
        if rows == 0:
            return []
        half = (rows + 1) // 2  # 2n >= N: the IDF FTS5 floors
        counts = {f: conn.execute("SELECT count(*) FROM (SELECT 1 FROM items_search WHERE folded LIKE ? LIMIT ?) AS m",
                                  (like_pattern(f), half)).fetchone()[0] for f in folded}
        kept = [f for f in folded if 2 * counts[f] < rows]
        floored = [f for f in folded if f not in kept]
        found: list[tuple[int, float, str]] = []
        if kept:
            found = self._ranked(kept, [bm25.idf(rows, counts[f]) for f in kept], filters, pool)
        if floored and len(found) < pool:
            # Only words in half the library or more, or too few rarer matches: the newest such
            # rows, scored the same way with the floored IDF (as search.py's _newest does).
            seen = [r[0] for r in found]
            found += self._ranked(floored, [bm25.IDF_FLOOR] * len(floored), filters, pool - len(found),
                                  newest=True, exclude=seen)
        return found

    def _ranked(self, terms: list[str], idfs: list[float], filters, count: int, *, newest: bool = False,
                exclude=()) -> list[tuple[int, float, str]]:
        parts, score_args, match_args = [], [], []
        for text, idf in zip(terms, idfs):
            query_sql, query_arg = _tsquery(text)
            parts.append(f"CASE WHEN s.folded LIKE ? THEN {float(idf)!r} * "
                         f"(ts_rank_cd('{RANK_WEIGHTS}', s.fts, {query_sql}, 1) + {SUBSTRING_CREDIT}) ELSE 0 END")
            score_args += [like_pattern(text), query_arg]
            match_args.append(like_pattern(text))
        match = " OR ".join("s.folded LIKE ?" for _ in terms)
        where, args = filters.sql("i")
        conditions = [f"({match})"] + ([where] if where else [])
        if exclude:
            conditions.append(f"s.id NOT IN ({','.join('?' * len(exclude))})")
        order = "s.id DESC" if newest else "b DESC, s.id DESC"
        sql = (f"SELECT s.id, ({' + '.join(parts)}) AS b, i.occurred_at FROM items_search AS s "
               f"JOIN items AS i ON i.id = s.id WHERE {' AND '.join(conditions)} ORDER BY {order} LIMIT ?")
        rows = self.conn.execute(sql, [*score_args, *match_args, *args, *exclude, count]).fetchall()
        if newest:
            rows.sort(key=lambda r: (-r[1], -r[0]))
        return [(r[0], float(r[1]), r[2]) for r in rows]
