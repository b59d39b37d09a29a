"""The term counts and postings a PostgreSQL search reads (schema._v3): kept by the writer's
transaction through every kind of write, filled the same way for a library that predates them,
and giving the same pool, to the last bit, as ts_rank_cd over each matching row's tsvector with
counts taken from the folded text (what the ranker computed before they existed)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from jezero.query import bm25
from jezero.query.search import _Filters
from jezero.query.terms import parse_terms
from jezero.store import ItemRecord

NOW = datetime(2026, 5, 1, tzinfo=timezone.utc)
TOKENIZER = "trigram remove_diacritics 1"

TEXTS = [
    ("Migrate the orders table", "The migration of orders to sqlite-vec failed twice; the migrations ran again.",
     ["How did the migration end?"], "src/db/migrate_orders.py", "shop"),
    ("Crème brûlée recipe", "Caramelise the sugar; the custard sets in the fridge. Migration of nothing.",
     ["How long does the crème set?"], "notes/desserts.md", None),
    ("Fix token_record parsing", "token_record broke when the record had no token; see api/field_manager.rs.",
     ["Why did token_record break?"], "api/field_manager.rs", "shop"),
    ("Sqlite-vec kNN", "Bit vectors in sqlite-vec, exact rescoring of the candidates, 3.5x faster.",
     ["How fast is the kNN with sqlite-vec?"], "src/vectors.py", "jezero"),
    ("Deploy with docker compose", "docker compose up; the migration container ran first, E5006 on retry.",
     ["Which error did the deploy show?"], "compose.yaml", "infra"),
    ("Token rotation", "Rotating the API token every 24 hours; tokens live in vault. mytoken_record stays.",
     ["Where do the tokens live?"], "ops/rotate.sh", "infra"),
]


def _item(n: int, variant: int = 0) -> ItemRecord:
    title, summary, questions, path, project = TEXTS[n % len(TEXTS)]
    summary = f"{summary} Variant {variant} of note {n}." + (" migration migration migration" if n % 4 == 0 else "")
    return ItemRecord(
        uid=f"claude-local:s{n}:0", source="claude-local" if n % 3 else "codex-ci", agent="claude",
        session_id=f"s{n}", segment_index=0, occurred_at=NOW - timedelta(hours=n), title=title, summary=summary,
        questions=questions, atoms=[{"type": "file", "text": path}], original=f"USER: note {n}\nASSISTANT: ok",
        content_hash=f"h{n}-{variant}", summarizer="offline", summary_schema=1, project=project,
    )


def _recount(db) -> tuple[dict, list]:
    """The counts and postings recomputed from items_search alone."""
    words = dict(db.execute("SELECT l, count(*) FROM items_search, unnest(tsvector_to_array(fts)) AS l GROUP BY l"))
    words[""] = db.execute("SELECT count(*) FROM items_search").fetchone()[0]
    postings = db.execute(
        "SELECT u.lexeme, s.id, (SELECT sum(CASE x WHEN 'A' THEN 1.0 WHEN 'B' THEN 0.75 WHEN 'C' THEN 0.5 ELSE 0.25 END) "
        "FROM unnest(u.weights) AS x)::double precision, "
        "(SELECT sum(greatest(cardinality(v.positions), 1))::integer FROM unnest(s.fts) AS v) "
        "FROM items_search AS s, unnest(s.fts) AS u ORDER BY 1, 2").fetchall()
    return words, [tuple(p) for p in postings]


def _kept(db) -> tuple[dict, list]:
    words = dict(db.execute("SELECT word, rows FROM search_words"))
    postings = db.execute("SELECT word, id, w, len FROM search_postings ORDER BY 1, 2").fetchall()
    return words, [tuple(p) for p in postings]


def test_counts_and_postings_follow_every_write(pg_url):
    from jezero_store_postgres.store import PostgresStore

    with PostgresStore(pg_url, TOKENIZER) as store:
        store.write([_item(n) for n in range(12)])
        assert _kept(store.db) == _recount(store.db)
        assert store.db.execute("SELECT rows FROM search_words WHERE word = ''").fetchone()[0] == 12
        store.write([_item(n, variant=1) for n in range(3)])  # same uids, new text: an update
        store.write([_item(30), _item(30, variant=2)])  # one uid twice in a batch: its last version
        store.write((), delete_uids=["claude-local:s4:0", "claude-local:s5:0"])  # cascades from items
        store.set_project(store.db.execute("SELECT id FROM items WHERE uid = 'claude-local:s6:0'").fetchone()[0],
                          "elsewhere")
        kept = _kept(store.db)
        assert kept == _recount(store.db)
        assert kept[0][""] == 11 and "variant" in kept[0] and all(n > 0 for n in kept[0].values())
        # A failed write changes nothing, counts included.
        try:
            with store.db:
                store._upsert(_item(40), "2026-05-01T00:00:00.000000Z")
                raise RuntimeError("connector failed mid-batch")
        except RuntimeError:
            pass
        assert _kept(store.db) == kept


def test_a_library_from_before_the_counts_gets_them(pg_url):
    """A library from just before _v3 (no counts, no postings) is filled by the migration with
    exactly what the trigger would have kept."""
    from jezero_store_postgres import schema
    from jezero_store_postgres.store import PostgresStore

    before = schema.MIGRATIONS.index(schema._v3)  # the version _v3 starts from
    with PostgresStore(pg_url, TOKENIZER) as store:
        store.write([_item(n) for n in range(9)])
        expected = _kept(store.db)
        latest = store.schema_version()
        store.db.execute("DROP FUNCTION jezero_search_terms() CASCADE; DROP TABLE search_words, search_postings; "
                         f"UPDATE meta SET value = '{before}' WHERE key = 'schema_version'")
    with PostgresStore(pg_url, TOKENIZER) as store:
        assert store.schema_version() == latest
        assert _kept(store.db) == expected
        store.write([_item(20)])  # and the trigger keeps them from there
        assert _kept(store.db) == _recount(store.db)


def test_a_reader_of_a_library_not_yet_migrated_is_told_what_to_do(pg_url):
    import pytest

    from jezero.store import StoreError
    from jezero_store_postgres import connect_reader, schema
    from jezero_store_postgres.store import PostgresStore

    with PostgresStore(pg_url, TOKENIZER) as store:
        store.write([_item(1)])
        store.db.execute("DROP FUNCTION jezero_search_terms() CASCADE; DROP TABLE search_words, search_postings; "
                         f"UPDATE meta SET value = '{schema.MIGRATIONS.index(schema._v3)}' WHERE key = 'schema_version'")
    with pytest.raises(StoreError, match="jezero run"):
        connect_reader(pg_url)


def _reference(db, terms: list[str], filters: _Filters, pool: int) -> list[tuple]:
    """The pool as the ranker computed it before the counts existed: each term's n counted in
    the folded text, ts_rank_cd over every matching row (terms in half the library left out)."""
    from jezero_store_postgres.search import RANK_WEIGHTS, SUBSTRING_CREDIT, _tsquery, like_pattern

    rows = db.execute("SELECT count(*) FROM items_search").fetchone()[0]
    kept, idfs = [], []
    for t in terms:
        n = db.execute("SELECT count(*) FROM items_search WHERE folded LIKE ?", (like_pattern(t),)).fetchone()[0]
        if 2 * n < rows:
            kept.append(t)
            idfs.append(bm25.idf(rows, n))
    if not kept:
        return []
    parts, args = [], []
    for t, idf in zip(kept, idfs):
        query_sql, query_arg = _tsquery(t)
        parts.append(f"CASE WHEN s.folded LIKE ? THEN {idf!r} * (ts_rank_cd('{RANK_WEIGHTS}', s.fts, {query_sql}, 1) "
                     f"+ {SUBSTRING_CREDIT}) ELSE 0 END")
        args += [like_pattern(t), query_arg]
    where, filter_args = filters.sql("i")
    match = " OR ".join("s.folded LIKE ?" for _ in kept)
    sql = (f"SELECT s.id, ({' + '.join(parts)}) AS b, i.occurred_at FROM items_search AS s JOIN items AS i "
           f"ON i.id = s.id WHERE ({match}) {'AND ' + where if where else ''} ORDER BY b DESC, s.id DESC LIMIT ?")
    found = db.execute(sql, [*args, *[like_pattern(t) for t in kept], *filter_args, pool]).fetchall()
    return [(r[0], float(r[1]), r[2]) for r in found]


def test_the_pool_is_the_one_ts_rank_cd_gives(pg_url):
    """Words, prefixes, substrings inside words, paths, compounds the parser keeps whole,
    `a_b` text it splits, other scripts and phrases: the same ids, in the same order, with the
    same scores as ts_rank_cd over each row, with and without filters."""
    from jezero_store_postgres import connect_reader
    from jezero_store_postgres.search import fold
    from jezero_store_postgres.store import PostgresStore

    with PostgresStore(pg_url, TOKENIZER) as store:
        store.write([_item(n, variant=n % 2) for n in range(60)])
    conn = connect_reader(pg_url)
    queries = ["migration", "migrat", "gration", "api/field_manager.rs", "field_manager", "token_record",
               "sqlite-vec", "creme brulee", "crème", "3.5x", "E5006 docker", '"docker compose"', "token",
               "tokens vault rotation", "the", "the migration", "variant 1", "nothing-here", "knn rescoring"]
    everything = _Filters(sources=None, source=None, project=None, since=None)
    shop = _Filters(sources=None, source=None, project="shop", since=None)
    local = _Filters(sources=["claude-local"], source=None, project=None, since=None)
    compared = 0
    for q in queries:
        terms = parse_terms(q, TOKENIZER)
        folded = list(dict.fromkeys(f for f in (fold(t.text) for t in terms) if f.strip()))
        for filters in (everything, shop, local):
            for pool in (200, 3):
                got = conn.ranker.candidates(terms, filters, pool)
                want = _reference(conn, folded, filters, pool)
                if q in ("the",):  # only floored words: the newest matches
                    where, args = filters.sql("i")
                    newest = [r[0] for r in conn.execute(f"SELECT id FROM items AS i {'WHERE ' + where if where else ''} "
                                                         "ORDER BY id DESC LIMIT ?", [*args, pool])]
                    assert sorted(r[0] for r in got) == sorted(newest)
                    continue
                assert got[:len(want)] == want, (q, filters, pool)
                compared += len(want)
    assert compared > 300
    conn.close()
