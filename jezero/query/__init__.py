"""The query layer: plain functions over a read-only apsw connection (`jezero.store.open_readonly`).
It knows nothing of MCP, HTTP or the terminal; the server, the CLI and the app only call it and
format what it returns, so what a person sees is what an agent sees.

    search(conn, query, ...)       ranked items for free text (items and messages fused)
    recall(conn, query, ...)       the messages that hold the words, in their context
    later(conn, item_id, query)    newer items on the same subject (or, failing that, by date)
    timeline(conn, project|source) items by date, newest first
    get_item(conn, item_id)        one item in full, the original transcript on request
    catalog(conn) / overview(conn) what the caller may filter on / counts for a home screen

Every function takes `allowed`, the caller's source patterns (case-sensitive globs such as
`agent-*`, expanded against the library's source names). A source outside them is invisible:
searches return nothing from it and get_item reports its items as missing.

How search ranks
----------------
Terms are the query's words and "quoted phrases", each quoted (so nothing typed acts as an FTS5
operator), shorter ones than the tokenizer can look up dropped (3 characters for trigram),
deduplicated, OR-ed. A word loses the sentence punctuation around it (`watches?` is `watches`),
and a word joined by `.`, `=`, `/` or `:` adds its parts as terms (`max_user_watches=524288` also
matches `max_user_watches` and `524288` apart); a quoted phrase stays exactly as written
(terms.py). Stage 1 asks FTS5 for the `candidate_pool` rows (200) with the best
`bm25(items_fts, 2.0, 1.0, 1.5, 1.5, 0.5)` among the rows that pass the filters (allowed sources,
source, project, since). Stage 2 multiplies relevance (-bm25) by a recency factor

    score = relevance * ((1 - w) + w * 0.5 ** (age_days / half_life))     w = recency_weight

and returns the first `limit`. Recency reorders matches; it never makes a non-match relevant.
Last, the current decision first (current.py): when one of the first three hits has a newer hit
of its project on its subject (its title and atoms, and its distinctive words as later reads
them) further down, and leads it by at most 2x, the newer one is placed just before it. Nothing
is dropped; `current_first=False` turns it off.

How later decides "same subject"
--------------------------------
Without a query, the subject is the item's decision, fact and file atoms (its title when it has
none), kept to its distinctive words: those held by at most a quarter of the project's items that
match it best (current.distinctive_terms; stop words out). A newer hit of the item's project
counts when its relevance for those words reaches 0.2 of the item's own and 0.3 of the best other
hit; then the next revision's (the oldest kept) own distinctive subject is searched the same
way (a chain drifts: its third step names the second's choice). With a query, a hit must reach 0.15 of the
item's own relevance for the query and 0.3 of the best other hit, and be one of the hits found
without a query (the chain's next step then at 0.15: the query's bars apply too): the words
narrow the subject, they do not replace it. Departures from the seed's
rule (0.3 of the best hit, the item itself included, over the title): the item matched its own
title so well that the revising session rarely reached the bar; a title is often the person's
first sentence (a complaint, a chat's greeting); and words every item of a project holds (a
speaker's name, "shop") made every newer item look on the subject (benchmarks/retrieval/README.md
has the measurements, by half).

Both layers
-----------
By default search() also ranks the sessions' transcript messages (the messages index, word-level)
and fuses the two rankings per session by reciprocal rank fusion: one hit per session, shown by
its best item (query/fused/; `lanes=("items",)` is the items ranking below, alone). recall()
returns the messages themselves (query/recall.py). With the semantic lane on (`semantic=`, a
query.vectors.VectorLane), a third ranking joins the fusion: sessions by how near their item and
message-window vectors are to the query's (docs/semantic.md).

Making it fast without changing the answer
------------------------------------------
FTS5 scores every row that matches before LIMIT applies, and a trigram index finds a term by
walking the lists of all its trigrams. One word present in most items made a query cost as much
as scoring the whole library (170-220 ms at 100k items), and a path such as `src/order_cache.py`,
whose trigrams are in most items, cost 20-40 ms to find a few dozen rows. Three exact steps avoid
much of that work; benchmarks/search/README.md has their figures.

1. Words in half the library or more are left out of the ranked MATCH. FTS5 floors such a
   word's IDF at 1e-6: it adds nothing to a score worth the name. search() counts exactly which
   terms are floored (stats.py: a sample decides which terms are worth counting; counts are
   cached per index state). What that changes:
   - rows that also match a rarer term lose the floored terms' share of bm25, at most 1e-6 x 2.2
     per term, a relative change around 1e-6 of a real match's score: the same rows in the same
     order unless two scores were equal to six digits;
   - rows that match only floored terms score ~1e-6, below every real match, so they matter only
     when fewer than `limit` rows match a rarer term. The plain algorithm filled the list with
     the floored-only rows of best (near-zero) bm25; this one fills it with the most recently
     stored floored-only rows, scored by the same formula (jezero_bm25, given the floored IDF);
   - a query made only of such words has no relevance signal: it ranks the `candidate_pool`
     most recently stored matches (highest ids) by bm25 and recency, instead of the pool with
     the best near-zero bm25 among all the library's matches.
2. A term whose trigram lists are long but whose rows are few (an identifier, a path) is found
   through the AND of its three rarest trigrams, a small superset of its rows, and each
   candidate is checked and scored in Python exactly as FTS5 would (rare.py). No effect on
   ranking: the same rows, hits, n and bm25 (the tests compare them with FTS5's own).
3. When a rare term (a few hundred rows) sits next to a frequent one (thousands of rows, not
   floored), only the rows holding the rare term are scored, the frequent terms' part added
   through jezero_bm25 with their exact IDFs. A row holding only frequent terms cannot score
   more than (k1 + 1) x their IDFs; when the limit-th result beats that, those rows are not
   looked at, else FTS5 ranks them for the frequent terms alone and the two lists are merged
   (search._in_parts has the details). No effect on ranking.

Work budget
-----------
Each call installs a progress handler that counts SQLite's VM steps and interrupts any statement
still running once `search.time_budget_ms` worth of steps is spent (common.STEPS_PER_MS: a count
of work, not a clock, so a loaded machine gives the answer an idle one gives, only later).
search() never raises for that. An interrupted count keeps its term in the query; an
interrupted ranked query is retried, with a fresh allowance, on the most recently stored
matches only (explain: candidates = "newest_matches"); if that runs out too, the result is an
empty list. Either way the list search() returns (a `Hits`) has `cut` set, and the server and
the CLI say so. The connection's progress handler is cleared when the call ends, so use a
connection for one call at a time.

Limits
------
A query over terms.MAX_QUERY_CHARS (4,000) characters or MAX_QUERY_WORDS (400) words is refused
with a QueryError before any work; of the rest, the first MAX_TERMS (64) distinct terms are used.

What scores reveal
------------------
BM25's statistics (how many items hold a term, the average field lengths) are those of the
whole library, not of the sources the caller may read: a key limited to one source cannot read
another source's items, but the scores of its own hits move a little with what the others
hold, so a patient caller could estimate how common a word is elsewhere. That is a stated limit
of the model, not a leak of text; per-scope statistics would cost a count per term and source
on every query. Give a team that must not learn even word frequencies its own library.
"""

from __future__ import annotations

from jezero.query.errors import ItemNotFound, QueryError
from jezero.query.library import catalog, get_item, overview
from jezero.query.recall import recall
from jezero.query.search import later, search, timeline
from jezero.query.terms import build_match_query

__all__ = [
    "ItemNotFound",
    "QueryError",
    "build_match_query",
    "catalog",
    "get_item",
    "later",
    "overview",
    "recall",
    "search",
    "timeline",
]
