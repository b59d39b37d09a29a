"""recall (jezero/query/recall.py): each placing rule, each filter, the checked boolean mode, the
lineage cap, merged windows, the routine tier and the explanation of every hit, on a real SQLite
file written through the store.

Every test runs against each search index engine (the `engine` fixture): with a derived engine
(tantivy), every hit must have been matched by its messages index, not by the FTS5 fallback
(a boolean expression is FTS5's language, and FTS5 answers it whatever the engine)."""

from __future__ import annotations

import importlib
from datetime import datetime, timedelta, timezone

import pytest

from jezero.config import SearchConfig
from jezero.query import QueryError
from jezero.query import recall as recall_of
from jezero.store import ItemRecord, Store, engines, open_readonly
from jezero.store.messages import MessageRecord

T0 = datetime(2026, 3, 1, 9, tzinfo=timezone.utc)
recall_module = importlib.import_module("jezero.query.recall")  # the package exports the function by that name


ENGINE = {"name": "fts5"}


@pytest.fixture(autouse=True, params=["fts5", "tantivy"])
def engine(request, store_backend):
    if request.param == "tantivy":
        if store_backend == "postgres":
            pytest.skip("the postgres backend ranks the messages in PostgreSQL, whatever [search] engine names")
        pytest.importorskip("jezero_index_tantivy", reason="jezero-index-tantivy is not installed")
    engines.forget()
    ENGINE["name"] = request.param
    ENGINE["answers"] = "postgres" if store_backend == "postgres" else request.param
    yield request.param
    ENGINE["name"] = ENGINE["answers"] = "fts5"
    engines.forget()


def recall(conn, query=None, **kw):
    """recall() with the engine under test (on PostgreSQL, the backend itself answers)."""
    found = recall_of(conn, query, options=SearchConfig(engine=ENGINE["name"]), **kw)
    if not kw.get("discover") and (kw.get("boolean") is None or ENGINE["answers"] == "postgres"):
        assert all(h["explain"]["engine"] == ENGINE["answers"] for h in found["hits"]), "answered by the fallback"
    return found


def session(sid, texts, *, source="claude-local", project="shop", parent=None, day=0, segment=0):
    """One item whose messages are `texts`: (role, text) pairs, a minute apart."""
    start = T0 + timedelta(days=day)
    msgs = [MessageRecord(role, text, start + timedelta(minutes=i), "Bash" if role == "tool" else None)
            for i, (role, text) in enumerate(texts)]
    return ItemRecord(uid=f"{source}:{sid}:{segment}", source=source, agent="claude-code", session_id=sid,
                      segment_index=segment, occurred_at=start + timedelta(minutes=len(texts)), title=f"session {sid}",
                      summary="nothing about it", questions=[], atoms=[], original="(see messages)",
                      content_hash=f"{source}{sid}{segment}", summarizer="x", summary_schema=1, project=project,
                      parent_session_id=parent, messages=msgs)


def library(tmp_path, records):
    path = tmp_path / "lib.sqlite3"
    with Store(path) as store:
        store.write(records)
    conn = open_readonly(path)
    return conn


def sessions_of(found):
    return [h["session_id"] for h in found["hits"]]


def test_coverage_comes_first_and_bm25_breaks_ties(tmp_path):
    conn = library(tmp_path, [
        session("a", [("user", "alpha alpha alpha alpha")]),  # best bm25 for alpha, one term
        session("b", [("user", "alpha beta gamma, and a lot of other words around them in a long message")]),
        session("c", [("user", "alpha beta")]),
        session("d", [("user", "alpha beta and some more words")]),
    ])
    found = recall(conn, "alpha beta gamma", window=0)
    assert sessions_of(found) == ["b", "c", "d", "a"]
    assert [h["explain"]["coverage"] for h in found["hits"]] == [3, 2, 2, 1]
    assert found["method"] == recall_module.COVERAGE
    # c and d hold the same terms: the shorter message has the better bm25
    assert found["hits"][1]["explain"]["bm25_rank"] < found["hits"][2]["explain"]["bm25_rank"]
    single = recall(conn, "alpha", window=0)
    assert single["method"] == recall_module.BM25_ONLY and sessions_of(single)[0] == "a"
    assert [h["explain"]["bm25_rank"] for h in single["hits"]] == [0, 1, 2, 3]


def test_newest_and_oldest_replace_relevance(tmp_path):
    conn = library(tmp_path, [
        session("old", [("user", "alpha beta gamma")], day=0),
        session("mid", [("user", "alpha")], day=1),
        session("new", [("user", "alpha beta")], day=2),
    ])
    newest = recall(conn, "alpha beta gamma", sort="newest", window=0)
    assert sessions_of(newest) == ["new", "mid", "old"]
    assert newest["method"] == recall_module.NEWEST
    assert all(h["explain"]["bm25_rank"] == -1 and h["explain"]["recency"] == 1 for h in newest["hits"])
    assert [h["explain"]["coverage"] for h in newest["hits"]] == [2, 1, 3]  # reported, not used
    assert sessions_of(recall(conn, "alpha beta gamma", sort="oldest", window=0)) == ["old", "mid", "new"]
    with pytest.raises(QueryError, match="sort must be one of"):
        recall(conn, "alpha", sort="best")


def test_boolean_mode_is_opt_in_and_checked(tmp_path):
    conn = library(tmp_path, [
        session("a", [("user", "deploy then rollback")]),
        session("b", [("user", "deploy then revert")]),
        session("c", [("user", "deploy only")]),
    ])
    found = recall(conn, boolean="deploy AND (rollback OR revert)", window=0)
    assert sorted(sessions_of(found)) == ["a", "b"] and found["method"] == recall_module.BOOLEAN
    assert sessions_of(recall(conn, boolean="deploy NOT rollback NOT revert", window=0)) == ["c"]
    for bad in ("deploy AND (", "AND deploy", "deploy NOT", '"unclosed', ""):
        with pytest.raises(QueryError, match="boolean query"):
            recall(conn, boolean=bad)
    with pytest.raises(QueryError, match="not both"):
        recall(conn, "deploy", boolean="deploy")
    # without the opt-in, operators are words: nothing typed is FTS5 syntax
    plain = recall(conn, "deploy AND (rollback", window=0)
    # (the bracket is sentence punctuation around a word, dropped as in search: terms.py)
    assert plain["terms"] == ["deploy", "AND", "rollback"] and sessions_of(plain)[0] == "a"


def test_filters(tmp_path):
    conn = library(tmp_path, [
        session("u", [("user", "kappa from a person"), ("assistant", "kappa from the agent"),
                      ("tool", "kappa in tool output")], day=0),
        session("sub", [("user", "kappa in a subagent")], parent="u", day=1),
        session("bill", [("user", "kappa for billing")], project="billing", day=2),
        session("ci", [("user", "kappa on ci")], source="agent-ci", project=None, day=3),
        session("long", [("user", "kappa"), ("assistant", "one"), ("user", "two"), ("assistant", "three")], day=4),
    ])

    def hits(**kw):
        return sorted((h["session_id"], h["role"]) for h in recall(conn, "kappa", window=0, **kw)["hits"])

    default = hits()
    assert ("u", "tool") not in default and all(s != "sub" for s, _ in default)  # tools and subagents off
    assert ("u", "tool") in hits(include_tools=True)
    assert hits(role="tool") == [("u", "tool")]  # naming the role is asking for it
    assert {r for _, r in hits(role="assistant")} == {"assistant"}
    assert ("sub", "user") in hits(include_subagents=True)
    assert hits(projects=["billing"]) == [("bill", "user")]
    assert hits(source="agent-ci") == [("ci", "user")]
    assert hits(since="2026-03-03") == [("bill", "user"), ("ci", "user"), ("long", "user")]
    assert hits(before="2026-03-03") == [("bill", "user"), ("u", "assistant"), ("u", "user")]  # that day included
    assert hits(min_messages=4) == [("long", "user")]
    assert hits(allowed=["agent-*"]) == [("ci", "user")]
    assert hits(allowed=["nothing-*"]) == []
    with pytest.raises(QueryError, match="role must be one of"):
        recall(conn, "kappa", role="robot")


def test_lineage_root_walk_is_capped(tmp_path):
    chain = [session("s0", [("user", "root words")])]
    chain += [session(f"s{i}", [("user", f"child {i} omega")], parent=f"s{i - 1}") for i in range(1, 71)]
    chain += [session("x", [("user", "loop omega")], parent="y"), session("y", [("user", "loop")], parent="x")]
    conn = library(tmp_path, chain)
    root, hops, capped = recall_module.lineage_root(conn, "claude-local", "s3")
    assert (root, hops, capped) == ("s0", 3, False)
    root, hops, capped = recall_module.lineage_root(conn, "claude-local", "s70")
    assert hops == recall_module.MAX_LINEAGE_HOPS == 64 and root == "s6" and capped
    assert recall_module.lineage_root(conn, "claude-local", "x")[0] in {"x", "y"}  # a loop ends
    found = recall(conn, "child 5", include_subagents=True, window=0)
    assert found["hits"][0]["root_session_id"] == "s0" and found["hits"][0]["lineage_hops"] == 5


def test_bookend_windows_merge_when_they_overlap(tmp_path):
    texts = [("user" if i % 2 == 0 else "assistant", f"message {i}" + (" needle" if i in (3, 5, 15) else ""))
             for i in range(20)]
    conn = library(tmp_path, [session("s", texts)])
    found = recall(conn, "needle", window=2)
    assert len(found["hits"]) == 3
    windows = found["windows"]
    assert len(windows) == 2
    merged = next(w for w in windows if len(w["anchors"]) == 2)
    assert [m["text"].split()[1] for m in merged["messages"]] == ["1", "2", "3", "4", "5", "6", "7"]
    alone = next(w for w in windows if len(w["anchors"]) == 1)
    assert [m["text"].split()[1] for m in alone["messages"]] == ["13", "14", "15", "16", "17"]
    assert recall(conn, "needle", window=0)["windows"] == []
    # windows cross segment boundaries, in session order
    (tmp_path / "two").mkdir()
    conn2 = library(tmp_path / "two", [session("s", texts[:10], segment=0), session("s", texts[10:], segment=1)])
    w = recall(conn2, "needle", window=3)["windows"]
    late = next(x for x in w if any("15" in m["text"] for m in x["messages"]))
    assert [m["text"].split()[1] for m in late["messages"]] == ["12", "13", "14", "15", "16", "17", "18"]


def test_merge_windows_joins_chains():
    def w(anchor, ids):
        return {"source": "s", "session_id": "a", "project": None, "anchors": [anchor],
                "messages": [{"id": i, "position": [0, i]} for i in ids]}

    merged = recall_module.merge_windows([w(1, [1, 2, 3]), w(9, [8, 9, 10]), w(5, [3, 4, 5, 6, 7, 8])])
    assert len(merged) == 1 and merged[0]["anchors"] == [1, 5, 9]
    assert [m["id"] for m in merged[0]["messages"]] == list(range(1, 11))


def test_routine_sessions_are_a_lower_tier(tmp_path):
    prompt = "run the nightly audit of zeta dependencies"
    conn = library(tmp_path, [
        *[session(f"cron{i}", [("user", prompt), ("assistant", "zeta zeta zeta all fine")], day=i) for i in range(3)],
        session("work", [("user", "why did zeta break the checkout flow yesterday after the upgrade"),
                         ("assistant", "the zeta upgrade changed the API")], day=1),
    ])
    found = recall(conn, "zeta", window=0)
    tiers = [(h["session_id"], h["explain"]["tier"]) for h in found["hits"]]
    assert tiers[0][0] == "work" and tiers[0][1] == "normal"
    assert {s for s, t in tiers if t == "routine"} == {"cron0", "cron1", "cron2"}
    assert all(t == "routine" for _, t in tiers[2:])
    assert "routine" in found["hits"][-1]["explain"]["rule"]


def test_every_hit_explains_its_place(tmp_path):
    conn = library(tmp_path, [session("a", [("user", "lambda mu")]), session("b", [("user", "lambda")])])
    found = recall(conn, "lambda mu", window=0)
    for final, h in enumerate(found["hits"]):
        e = h["explain"]
        assert set(e) >= {"method", "rule", "bm25_rank", "coverage", "matched_terms", "terms", "tier", "final",
                          "recency"}
        assert e["final"] == final and e["terms"] == ["lambda", "mu"] and e["method"] == recall_module.COVERAGE
    assert found["hits"][0]["explain"]["matched_terms"] == ["lambda", "mu"]
    assert found["hits"][0]["snippet"] == "[lambda] [mu]"


def test_cross_project_discovery_lists_each_projects_newest_hit(tmp_path):
    conn = library(tmp_path, [
        session("s1", [("user", "sigma one")], project="shop", day=0),
        session("s2", [("user", "sigma two")], project="shop", day=5),
        session("b1", [("user", "sigma three")], project="billing", day=3),
        session("n1", [("user", "nothing here")], project="infra", day=9),
    ])
    found = recall(conn, "sigma", discover=True)
    assert found["method"] == recall_module.DISCOVERY
    assert [(p["project"], p["session_id"], p["hits"]) for p in found["projects"]] == [("shop", "s2", 2),
                                                                                        ("billing", "b1", 1)]


def test_a_library_without_the_messages_layer_says_so(tmp_path):
    path = tmp_path / "old.sqlite3"
    Store(path, migrate_to=4).close()
    found = recall(open_readonly(path), "anything")
    assert found["hits"] == [] and "no messages index" in found["note"]


def test_a_common_term_is_ranked_among_its_newest_matches_and_rare_ones_in_full(tmp_path, monkeypatch, engine):
    if engine != "fts5":
        pytest.skip("FTS5's cap (bm25 scores every match); a derived index finds the exact top matches")
    # (the postgres backend keeps FTS5's cap: its bm25 too scores every match it ranks)
    messages_module = importlib.import_module("jezero.query.messages")
    conn = library(tmp_path, [
        session("old", [("user", "the omicron fix")], day=0),  # the only omicron, older than every 'the'
        *[session(f"n{i}", [("user", f"the note {i}")], day=1 + i) for i in range(6)],
    ])
    monkeypatch.setattr(messages_module, "RANK_CAP", 3)
    found = recall(conn, "the omicron", window=0)
    assert found["hits"][0]["session_id"] == "old" and found["hits"][0]["explain"]["coverage"] == 2
    assert "of the, the 3 most recent matches" in found["hits"][0]["explain"]["candidates"]
    assert {h["session_id"] for h in found["hits"][1:]} == {"n5", "n4", "n3"}
    monkeypatch.setattr(messages_module, "RANK_CAP", 5000)
    assert recall(conn, "the omicron", window=0)["hits"][0]["explain"]["candidates"] == "every match"
