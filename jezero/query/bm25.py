"""BM25 as FTS5 computes it, and the same number taken apart for `explain`.

FTS5's built-in bm25() (SQLite's fts5_aux.c) scores a row, for the phrases i of the query, as

    f_i   = sum over columns c of  weight_c * (hits of phrase i in column c)
    K     = k1 * (1 - b + b * D / avgdl)          D = tokens in the row, avgdl = tokens / N
    bm25  = - sum_i  IDF_i * f_i * (k1 + 1) / (f_i + K)
    IDF_i = log((N - n_i + 0.5) / (n_i + 0.5)), floored at 1e-6 when n_i >= N/2

with k1 = 1.2 and b = 0.75. The column weights add up *before* the saturation f/(f+K), so bm25
is not a sum of per-column bm25 values: scoring one column at a time and adding the results does
not give the row's score. `explain` therefore splits each phrase's term IDF_i * f_i (k1+1)/(f_i+K)
between the columns in proportion to weight_c * hits_c / f_i, that is, by each column's share of
the weighted hits that produced it. The shares add up to the row's relevance (-bm25) exactly, up
to floating-point rounding, and every input is the one the ranking used (the tests check the
recomputed total against SQLite's own bm25 for the same row).
"""

from __future__ import annotations

import math
import threading
import weakref

import apsw

from jezero.store import FTS_COLUMNS

# Column weights, in FTS_COLUMNS order. The title is the most condensed statement of an item;
# questions and atoms are written by the summarizer to be found later; the project name is the
# same word for every item of a project (filter on it instead), so it weighs little.
WEIGHTS = (2.0, 1.0, 1.5, 1.5, 0.5)
BM25_SQL = "bm25(items_fts, " + ", ".join(str(w) for w in WEIGHTS) + ")"
K1 = 1.2
B = 0.75
IDF_FLOOR = 1e-6
AUX_NAME = "jezero_bm25"


def idf(rows: int, n: int) -> float:
    value = math.log((rows - n + 0.5) / (n + 0.5))
    return value if value > 0.0 else IDF_FLOOR


def _aux_bm25(api: apsw.FTS5ExtensionApi, *idfs) -> float:
    """bm25() with the IDF of each phrase given as an argument, so no phrase has to be counted
    over the whole index per query. Same formula and order of operations as fts5_aux.c."""
    rows = api.row_count
    avgdl = api.column_total_size(-1) / rows if rows else 0.0
    size = api.column_size(-1)
    k = K1 * (1 - B + B * size / avgdl) if avgdl else K1
    score = 0.0
    for i in range(api.phrase_count):
        f = 0.0
        for col, offsets in enumerate(api.phrase_locations(i)):
            if offsets:
                f += WEIGHTS[col] * len(offsets)
        score += idfs[i] * ((f * (K1 + 1.0)) / (f + k))
    return -score


_registered: "weakref.WeakSet[apsw.Connection]" = weakref.WeakSet()
_registered_lock = threading.Lock()


def register(conn: apsw.Connection) -> None:
    """Make jezero_bm25(items_fts, idf...) available on this connection (once per connection)."""
    with _registered_lock:
        if conn in _registered:
            return
        conn.register_fts5_function(AUX_NAME, _aux_bm25)
        _registered.add(conn)


def aux_sql(idfs: list[float]) -> str:
    return f"{AUX_NAME}(items_fts, {', '.join(repr(float(x)) for x in idfs)})"


def explain_row(columns: list[str], phrases: list[tuple], idfs: list[float], rows: int, total_tokens: int,
                tokenize_doc) -> dict:
    """Recompute one row's bm25 from its indexed text and split it by column.

    `phrases` are the query's phrases as token tuples (how FTS5 reads them), `idfs` their IDF,
    `tokenize_doc` the library's tokenizer in document mode. Returns the relevance (-bm25), the
    per-column contributions (adding up to it) and which phrases occur in the row.
    """
    col_tokens = [tokenize_doc(text or "") for text in columns]
    size = sum(len(t) for t in col_tokens)
    avgdl = total_tokens / rows if rows else 0.0
    k = K1 * (1 - B + B * size / avgdl) if avgdl else K1
    fields = dict.fromkeys(FTS_COLUMNS, 0.0)
    matched = []
    relevance = 0.0
    for i, phrase in enumerate(phrases):
        hits = [_occurrences(tokens, phrase) for tokens in col_tokens]
        f = sum(WEIGHTS[c] * h for c, h in enumerate(hits))
        if not f:
            continue
        matched.append(i)
        part = idfs[i] * ((f * (K1 + 1.0)) / (f + k))
        relevance += part
        for c, h in enumerate(hits):
            if h:
                fields[FTS_COLUMNS[c]] += part * (WEIGHTS[c] * h / f)
    return {"relevance": relevance, "fields": fields, "matched": matched}


def _occurrences(tokens: list[str], phrase: tuple) -> int:
    """How many times the phrase's tokens appear consecutively: FTS5's phrase match."""
    m = len(phrase)
    if not m or len(tokens) < m:
        return 0
    first = phrase[0]
    count = 0
    for i, tok in enumerate(tokens):
        if tok == first and tuple(tokens[i:i + m]) == phrase:
            count += 1
    return count
