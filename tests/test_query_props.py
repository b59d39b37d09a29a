"""Whatever text reaches search, it answers (a list, maybe empty) and writes nothing."""

from __future__ import annotations

import hashlib
import re
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jezero.query import build_match_query, later, search
from jezero.store import ItemRecord, Store, open_readonly

NOW = datetime(2025, 6, 1, tzinfo=timezone.utc)
WORDS = ["the", "analytics", "shop", "consent banner", "Crème brûlée", "migrations", "NEAR", "AND", "title:x",
         '"quoted"', "stripe", "webhook", "ENOSPC", "(paren)", "*star", "^caret", "ünïcödé", "日本語テキスト"]


def _items():
    out = []
    for i in range(40):
        words = [WORDS[(i * 7 + k) % len(WORDS)] for k in range(5)]
        out.append(ItemRecord(
            uid=f"src-{i % 3}:s{i}:0", source=f"src-{i % 3}", agent="a", session_id=f"s{i}", segment_index=0,
            occurred_at=NOW - timedelta(days=i), title=" ".join(words[:3]), summary=" ".join(words),
            questions=[f"what about {words[0]}?"], atoms=[{"type": "fact", "text": words[4]}], original="o",
            content_hash=f"h{i}", summarizer="t", summary_schema=1, project=f"p{i % 4}" if i % 5 else None,
        ))
    return out


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    path = tmp_path_factory.mktemp("props") / "lib.sqlite3"
    with Store(path) as store:
        store.write(_items())
        store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return path


def _digest(path) -> str:
    h = hashlib.sha256()
    for suffix in ("", "-wal"):
        p = path.parent / (path.name + suffix)
        if p.exists():
            h.update(p.read_bytes())
    return h.hexdigest()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text())
def test_any_text_is_answered_and_nothing_is_written(library, text):
    before = _digest(library)
    conn = open_readonly(library)
    try:
        version = conn.execute("PRAGMA data_version").fetchone()[0]
        changes = conn.total_changes()
        hits = search(conn, text, now=NOW)
        assert isinstance(hits, list)
        assert all(isinstance(h["id"], int) for h in hits)
        search(conn, text, now=NOW, explain=True, allowed=["src-1", "src-2"], project="p1")
        assert isinstance(later(conn, 1, text, now=NOW), dict)
        expr = build_match_query(text)
        if expr is not None:
            conn.execute("SELECT count(*) FROM items_fts WHERE items_fts MATCH ?", (expr,)).fetchone()
        assert conn.execute("PRAGMA data_version").fetchone()[0] == version
        assert conn.total_changes() == changes
    finally:
        conn.close()
    assert _digest(library) == before


@settings(max_examples=200, deadline=None)
@given(words=st.lists(st.text(min_size=1, max_size=12), max_size=8))
def test_the_expression_is_always_quoted_terms_or_ed(words):
    expr = build_match_query(" ".join(words))
    if expr is None:
        return
    assert re.fullmatch(r'"(?:[^"]|"")+"(?: OR "(?:[^"]|"")+")*', expr), expr


@settings(max_examples=200, deadline=None)
@given(rows=st.lists(st.tuples(st.floats(0.0, 50.0), st.integers(0, 4000)), max_size=60),
       limit=st.integers(1, 12), weight=st.sampled_from([0.0, 0.3, 1.0]))
def test_stage_two_stops_early_without_changing_the_answer(rows, limit, weight):
    from importlib import import_module

    search_mod = import_module("jezero.query.search")
    cands = [search_mod._Candidate(i + 1, -rel, (NOW - timedelta(days=age)).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
                                   "best_bm25", []) for i, (rel, age) in enumerate(rows)]
    got = search_mod._rank(cands, NOW, 90.0, weight, limit)
    every = []
    for c in cands:
        age = max((NOW - datetime.fromisoformat(c.occurred_at)).total_seconds() / 86400, 0.0)
        every.append((c.id, -c.bm25 * ((1 - weight) + weight * 0.5 ** (age / 90.0))))
    every.sort(key=lambda x: (-x[1], -x[0]))
    assert [(c.id, s) for c, s, _, _ in got] == every[:limit]
