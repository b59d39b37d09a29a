"""Stage 1 of search on PostgreSQL: the candidate pool, after the same filters, before the cut.
The query layer does the rest exactly as for SQLite (jezero.query.search: the recency re-rank,
the limit, the hit fields, `later` and its bars), so only what finds and scores the pool is here.

Matching is FTS5's trigram matching: a term matches an item whose five indexed fields, folded
(lowercase, no diacritics), contain it as a substring (`migrat` finds `migration`, `brulee` finds
`Crème brûlée`). How the rows are found depends on how PostgreSQL's parser reads the term:

- one token, or a compound it keeps whole (a word, a path, `sqlite-vec`): wherever an item holds
  the term, it is inside one of the item's lexemes, so the matches are the postings
  (schema._v3, kept by the writer's transaction) of the lexemes that contain it, looked up in
  `search_words` through a trigram index of the lexemes alone;
- split into several (`field_manager`, a phrase, a script the parser drops): through a pg_trgm
  GIN index of the folded text (`LIKE '%term%'`), each candidate row read and checked.

Either way the matches are the same rows; the first kind never reads an item's text.

Ranking is not bm25. PostgreSQL has no bm25; its ranking functions know no document frequency.
Each matched term scores

    idf(term) * (ts_rank_cd({0.25, 0.5, 0.75, 1.0}, fts, term, 1) + SUBSTRING_CREDIT)

summed over the query's terms: the IDF is FTS5's own (bm25.idf, the term's exact row count); the
field weights are FTS5's column weights, as the tsvector's classes A-D (store.WEIGHT_CLASSES);
ts_rank_cd counts the term's occurrences (as prefixes of words) by those weights, divided by
1 + log(the item's length), where bm25 saturates the count (k1) and normalises by each field's
length against the average (b). A term found only inside a word (`gration` in `migration`) has no
tsvector lexeme to rank and earns SUBSTRING_CREDIT alone, but counts in full. For a term of one
token the rank comes from the postings (Ranker._ranked says why it is the same number), for the
others from ts_rank_cd over the matching row.
benchmarks/retrieval/README.md measures the difference next to SQLite.

As on SQLite, a word in half the library or more (bm25 floors its IDF at 1e-6) is left out of
the ranked match; a query made only of such words takes the pool's newest matches. Work is
bounded by shape, not by a clock (PostgreSQL counts no steps a budget could read): a term one of
whose lexemes is in half the library is floored from its count in `search_words` without reading
a posting, any other term's rows are read at most up to half the library, and the scored rows are
those that match a term that is not that common. One statement counts and scores every term.
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
ONE, COMPOUND, TEXT = "one", "compound", "text"  # how the parser reads a term (Ranker.candidates)


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
    lanes = ("items", "messages")

    def __init__(self, conn):
        self.conn = conn
        if conn.execute("SELECT to_regclass('search_postings')").fetchone()[0] is None:
            from jezero.store import StoreError

            version = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            conn.close()  # the reader is refused: its connection goes with it
            raise StoreError(f"the PostgreSQL library is at schema version {version[0] if version else '?'}, before "
                             "the term counts searches read: run `jezero run` (or `jezero init`) once with this "
                             "version to migrate it")
        # One search is one backend's work: parallel workers would only compete with the other
        # servers' searches for the database's cores (and would add the per-term parts in
        # another order).
        conn.execute("SET max_parallel_workers_per_gather = 0")

    def candidates(self, terms, filters, pool: int) -> list[tuple[int, float, str]]:
        """(item id, relevance, occurred_at) of the `pool` best matches that pass `filters`
        (jezero.query.search._Filters), best first, newer id first on a tie."""
        conn = self.conn
        folded = list(dict.fromkeys(fold(t.text) for t in terms))
        folded = [f for f in folded if f.strip()]
        if not folded:
            return []
        row = conn.execute("SELECT rows FROM search_words WHERE word = ''").fetchone()
        rows = row[0] if row else 0
        if rows <= 0:
            return []
        half = (rows + 1) // 2  # 2n >= N: the IDF FTS5 floors
        # How the parser reads each term: one token (a word, a path: `to_tsvector` gives the term
        # itself), a compound it also keeps whole (`sqlite-vec`), or words only (`field_manager`,
        # a phrase, a script the parser drops). A term it keeps whole is, wherever an item holds
        # it, inside one of the item's lexemes, so its matches are those lexemes' postings; the
        # others are matched in the folded text through the trigram index.
        lexemes = dict(conn.execute("SELECT t, tsvector_to_array(to_tsvector('simple', t)) FROM unnest(?::text[]) AS t",
                                    (folded,)).fetchall())
        kinds = {f: ONE if lexemes.get(f) == [f] else COMPOUND if f in (lexemes.get(f) or ()) else TEXT
                 for f in folded}
        words = {f: self._words(f) for f in folded if kinds[f] != TEXT}
        counts: dict[str, int] = {}
        for f, held in words.items():
            if any(n >= half for n in held.values()):
                counts[f] = half  # floored: one lexeme alone is in half the library
            elif not held:
                counts[f] = 0
        found, counted = self._ranked(folded, kinds, words, counts, rows, half, filters, pool)
        counts.update(counted)
        floored = [f for f in folded if 2 * counts.get(f, 0) >= rows]
        if floored and len(found) < pool:
            # Only words in half the library or more, or too few rarer matches: the newest such
            # rows, scored the same way with the floored IDF (as search.py's _newest does).
            seen = [r[0] for r in found]
            found += self._newest(floored, [bm25.IDF_FLOOR] * len(floored), filters, pool - len(found), seen)
        return found

    def _words(self, term: str) -> dict[str, int]:
        """{lexeme holding `term`: the number of rows holding the lexeme} (search_words)."""
        return dict(self.conn.execute("SELECT word, rows FROM search_words WHERE word LIKE ? AND word <> ''",
                                      (like_pattern(term),)).fetchall())

    def _ranked(self, terms: list[str], kinds: dict, words: dict, counts: dict, rows: int, half: int, filters,
                count: int) -> tuple[list[tuple[int, float, str]], dict[str, int]]:
        """The best `count` rows holding a term that is in less than half the library, and each
        term's row count (n for its IDF, counted no further than `half`), in one statement: the
        rows that match a term are read once, to count it and to score it.

        Each matched term scores idf * (ts_rank_cd(weights, fts, term, 1) + SUBSTRING_CREDIT).
        For a term of one token the rank is read from the postings: ts_rank_cd of a one-lexeme
        query adds one cover per occurrence, so it is the weighted occurrences w of the lexemes
        the term begins (`term:*`; the lexeme itself for a path, as phraseto_tsquery ranks it),
        over the log of the item's length + 1 (schema._v3): the same number to the last bit (the
        weights are exact binary fractions; cast to real as ts_rank_cd returns it). A compound's
        rows come from the postings and are ranked by ts_rank_cd; a text term's rows come from the
        trigram index. The per-term parts are added in the query's order, as one expression over
        the terms would add them (one backend, no parallel workers)."""
        parts, args = [], []
        for k, text in enumerate(terms):
            held = words.get(text)
            if text in counts:
                continue  # nothing holds it, or one of its lexemes alone is in half the library
            if kinds[text] == ONE:
                ranks = "starts_with(word, ?)" if _WORD.match(text) else "word = ?"
                parts.append(f"(SELECT {k} AS k, id, (coalesce(sum(w) FILTER (WHERE {ranks}), 0) / ln(max(len) + 1))::real "
                             "AS r FROM search_postings WHERE word = ANY(?) GROUP BY id LIMIT ?)")
                args += [text, list(held), half]
            elif kinds[text] == COMPOUND:
                query_sql, query_arg = _tsquery(text)
                parts.append(f"(SELECT {k} AS k, s.id, ts_rank_cd('{RANK_WEIGHTS}', s.fts, {query_sql}, 1) AS r "
                             "FROM (SELECT DISTINCT id FROM search_postings WHERE word = ANY(?) LIMIT ?) AS p "
                             "JOIN items_search AS s ON s.id = p.id)")
                args += [query_arg, list(held), half]
            else:
                query_sql, query_arg = _tsquery(text)
                parts.append(f"(SELECT {k} AS k, id, ts_rank_cd('{RANK_WEIGHTS}', fts, {query_sql}, 1) AS r "
                             "FROM items_search WHERE folded LIKE ? LIMIT ?)")
                args += [query_arg, like_pattern(text), half]
        if not parts:
            return [], {}
        where, filter_args = filters.sql("i")
        ctes = [f"hits AS MATERIALIZED ({' UNION ALL '.join(parts)})",
                "n AS (SELECT k, count(*) AS n FROM hits GROUP BY k)",
                # idf as bm25.idf computes it (the same log of the same doubles), NULL when floored.
                "idf AS (SELECT k, CASE WHEN 2 * n >= ? THEN NULL "
                "ELSE greatest(ln((?::double precision - n + 0.5) / (n + 0.5)), ?) END AS idf FROM n)",
                f"scored AS (SELECT h.id, sum(idf.idf * (h.r + {SUBSTRING_CREDIT})) AS b FROM hits AS h "
                "JOIN idf ON idf.k = h.k WHERE idf.idf IS NOT NULL GROUP BY h.id)"]
        params = [*args, rows, rows, bm25.IDF_FLOOR]
        if where:
            # The rows the filters let through, hashed once (not one index probe per match).
            ctes.append(f"allowed AS MATERIALIZED (SELECT i.id, i.occurred_at FROM items AS i WHERE {where})")
            params += filter_args
            best = ("SELECT s.id, s.b, a.occurred_at, NULL, NULL FROM scored AS s JOIN allowed AS a ON a.id = s.id "
                    "ORDER BY s.b DESC, s.id DESC LIMIT ?")
        else:
            # The cut first, then the pool's dates.
            best = ("SELECT s.id, s.b, i.occurred_at, NULL, NULL FROM (SELECT * FROM scored ORDER BY b DESC, id DESC "
                    "LIMIT ?) AS s JOIN items AS i ON i.id = s.id ORDER BY s.b DESC, s.id DESC")
        sql = (f"WITH {', '.join(ctes)} "
               f"SELECT NULL::bigint, NULL::double precision, NULL::text, k, n FROM n UNION ALL ({best})")
        out = self.conn.execute(sql, [*params, count]).fetchall()
        counted = {text: 0 for text in terms if text not in counts}  # a term no row holds has no row in n
        counted.update({terms[r[3]]: r[4] for r in out if r[0] is None})
        return [(r[0], float(r[1]), r[2]) for r in out if r[0] is not None], counted

    def _newest(self, terms: list[str], idfs: list[float], filters, count: int, exclude) -> list[tuple[int, float, str]]:
        """The `count` newest rows holding a term (read newest first through the primary key:
        these terms are in half the library or more), scored as ts_rank_cd scores them."""
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
        sql = (f"SELECT s.id, ({' + '.join(parts)}) AS b, i.occurred_at FROM items_search AS s "
               f"JOIN items AS i ON i.id = s.id WHERE {' AND '.join(conditions)} ORDER BY s.id DESC LIMIT ?")
        rows = self.conn.execute(sql, [*score_args, *match_args, *args, *exclude, count]).fetchall()
        rows.sort(key=lambda r: (-r[1], -r[0]))
        return [(r[0], float(r[1]), r[2]) for r in rows]
