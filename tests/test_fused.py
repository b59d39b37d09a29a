"""search() over both layers (jezero/query/fused/): a session whose transcript holds the words
ranks even when its item missed them, an item that names the subject still leads, the lanes can be
chosen one by one, and the caller's sources bound the messages lane too."""

from __future__ import annotations

import importlib
from datetime import datetime, timedelta, timezone

import pytest

from jezero.query import QueryError, bm25, search
from jezero.query import messages as mq
from jezero.store import ItemRecord, Store, open_readonly
from jezero.store.messages import MessageRecord

fused = importlib.import_module("jezero.query.fused")
rules = importlib.import_module("jezero.query.fused.rules")
T0 = datetime(2026, 3, 1, 9, tzinfo=timezone.utc)
NOW = T0 + timedelta(days=30)


def item(sid, title, summary, texts, *, source="claude-local", project="infra", day=0):
    msgs = [MessageRecord(role, text, T0 + timedelta(days=day, minutes=i)) for i, (role, text) in enumerate(texts)]
    return ItemRecord(uid=f"{source}:{sid}:0", source=source, agent="claude-code", session_id=sid, segment_index=0,
                      occurred_at=T0 + timedelta(days=day), title=title, summary=summary, questions=[], atoms=[],
                      original="(messages)", content_hash=f"{source}{sid}", summarizer="x", summary_schema=1,
                      project=project, messages=msgs)


@pytest.fixture
def conn(tmp_path):
    path = tmp_path / "lib.sqlite3"
    with Store(path) as store:
        store.write([
            item("watch", "Raise the file watcher limit", "The dev server stopped reloading on Linux.",
                 [("user", "the dev server no longer reloads"),
                  ("tool", "Error: ENOSPC: System limit for number of file watchers reached"),
                  ("assistant", "set fs.inotify.max_user_watches=524288 in /etc/sysctl.d")]),
            item("title", "inotify max_user_watches for the dev server",
                 "Where the inotify max_user_watches limit is set and why.", [("user", "explain the limit")], day=1),
            item("other", "Checkout page copy", "Rewrote the checkout copy.", [("user", "new checkout copy")], day=2),
            item("hidden", "Secret ci things", "Nothing.", [("user", "max_user_watches on the ci runner")],
                 source="agent-ci", day=3),
        ])
    c = open_readonly(path)
    yield c
    c.close()


def sessions(hits):
    return [h["session_id"] for h in hits]


def test_a_session_found_only_in_its_transcript_ranks(conn):
    assert "watch" not in sessions(search(conn, "524288", lanes=("items",), now=NOW))
    assert sessions(search(conn, "524288", now=NOW)) == ["watch"]
    assert sessions(search(conn, "sysctl.d ENOSPC", now=NOW))[0] == "watch"


def test_an_item_that_names_the_subject_still_ranks_shown_by_its_item(conn):
    # "title" names the subject in its title and summary only (its transcript says "explain the
    # limit"): no message holds the words, so it keeps UNHELD_GATE of the items' say. "watch"
    # is found by both lanes and rises above it.
    hits = search(conn, "inotify max_user_watches", now=NOW, allowed=["claude-*"], explain=True)
    assert sessions(hits)[:2] == ["watch", "title"]
    title = hits[1]["explain"]["fusion"]
    assert title["ranks"] == {"items": 1} and title["rule"].startswith("reciprocal rank fusion")
    assert title["shares"]["items"] == pytest.approx(title["lanes"]["items"] * rules.UNHELD_GATE / (rules.RRF_K + 1))
    assert hits[1]["title"] == "inotify max_user_watches for the dev server"  # shown by its item
    assert hits[0]["title"] == "Raise the file watcher limit"  # found by both: shown by its item too


def test_one_hit_per_session_and_the_lanes_one_by_one(conn):
    both = search(conn, "dev server", now=NOW)
    assert len(sessions(both)) == len(set(sessions(both)))
    alone = search(conn, "524288", lanes=("messages",), now=NOW, explain=True)
    assert sessions(alone) == ["watch"] and alone[0]["explain"]["fusion"]["items_rank"] is None
    assert alone[0]["explain"]["fusion"]["matched_terms"] == ["524288"]
    assert search(conn, "524288", lanes=["messages", "items"], now=NOW) == search(conn, "524288", now=NOW)
    for bad in ((), ("summaries",), "both"):
        with pytest.raises(QueryError, match="lanes"):
            search(conn, "x", lanes=bad)


def test_the_callers_sources_bound_the_messages_lane(conn):
    assert "hidden" in sessions(search(conn, "runner max_user_watches", now=NOW))
    assert "hidden" not in sessions(search(conn, "runner max_user_watches", now=NOW, allowed=["claude-*"]))
    assert search(conn, "524288", now=NOW, source="agent-ci") == []
    assert search(conn, "524288", now=NOW, project="billing") == []


def test_a_very_common_word_is_read_at_its_newest_messages(conn, monkeypatch):
    monkeypatch.setattr(rules, "LANE_MAX_ROWS", 1)
    # "limit" is in two messages: the lane reads the newest only ("title", day 1) and says so
    hits = search(conn, "limit", now=NOW, explain=True, lanes=("messages",))
    assert sessions(hits) == ["title"]
    assert hits[0]["explain"]["fusion"]["capped_in_messages"] == ["limit"]
    monkeypatch.setattr(rules, "LANE_MAX_ROWS", 1000)
    assert sorted(sessions(search(conn, "limit", now=NOW, lanes=("messages",)))) == ["title", "watch"]


def test_a_library_not_yet_migrated_is_searched_by_its_items(tmp_path):
    path = tmp_path / "old.sqlite3"
    with Store(path, migrate_to=4) as old:
        old.db.execute(
            "INSERT INTO items(uid, source, agent, session_id, segment_index, occurred_at, title, summary, questions,"
            " atoms, original, content_hash, summarizer, summary_schema, ingested_at, updated_at) VALUES"
            " ('u', 'src', 'a', 's', 0, '2026-01-01T00:00:00.000000Z', 'webhook retries', 'x', '[]', '[]', 'o', 'h',"
            " 'offline', 1, 'now', 'now')")
        old.db.execute("INSERT INTO items_fts(rowid, title, summary, questions, atoms, project) "
                       "VALUES(1, 'webhook retries', 'x', '', '', '')")
    c = open_readonly(path)
    assert sessions(search(c, "webhook", now=NOW)) == ["s"]


def test_a_phrase_of_common_words_and_short_words_are_left_to_the_items(conn, monkeypatch):
    monkeypatch.setattr(rules, "PHRASE_MAX_ROWS", 1)
    hits = search(conn, "sysctl.d 524288 on", now=NOW, explain=True, lanes=("messages",))
    assert sessions(hits) == ["watch"]
    why = hits[0]["explain"]["fusion"]
    # "sysctl.d" whole is a phrase left out; its part "sysctl" (terms.py) is a word the lane keeps
    assert why["left_out_of_messages"] == ["sysctl.d"] and why["matched_terms"] == ["524288", "sysctl"]


def test_a_lane_whose_best_hits_all_score_alike_gives_way(tmp_path):
    # Twelve small-talk sessions whose items all match "dinner" the same way (same words, same day):
    # the items lane ranks them, but its order says nothing. The place was said once, in the
    # transcript of a session whose item never mentions dinner: the messages lane finds it first,
    # and the fused search must follow it rather than the items' arbitrary first.
    path = tmp_path / "chat.sqlite3"
    records = [item(f"talk{i:02d}", f"Dinner talk {i:02d}", "They talked about dinner.",
                    [("user", "we talked about dinner again")], project="chat", day=5) for i in range(12)]
    records.append(item("plans", "Weekend plans", "Plans for the weekend.",
                        [("user", "what about dinner"), ("assistant", "the dinner was at Lucca in the old town")],
                        project="chat", day=5))
    with Store(path) as store:
        store.write(records)
    c = open_readonly(path)
    try:
        assert "plans" not in sessions(search(c, "dinner Lucca", lanes=("items",), now=NOW))
        hits = search(c, "dinner Lucca", now=NOW, explain=True)
        assert sessions(hits)[0] == "plans"
        why = hits[0]["explain"]["fusion"]
        # the items' scores all alike: no say; the messages lane separates its one clear hit
        assert why["lanes"]["items"] == 0.0
        assert why["lanes"]["messages"] == pytest.approx(rules.MESSAGES_WEIGHT, rel=1e-3)
    finally:
        c.close()


def test_separation_of_a_lanes_scores():
    assert fused.separation([]) == 0.0
    assert fused.separation([3.0]) == 1.0  # a single hit stands alone
    assert fused.separation([2.0, 2.0, 2.0]) == 0.0  # all alike: the order says nothing
    assert fused.separation([4.0, 0.0]) == 1.0  # nothing else scores
    assert fused.separation([4.0, 2.0]) == pytest.approx(0.5 ** rules.SEPARATION_POWER)
    deep = [10.0] + [9.0] * (rules.SEPARATION_DEPTH - 2) + [1.0, 0.5]
    assert fused.separation(deep) == pytest.approx(0.9 ** rules.SEPARATION_POWER)  # read at the depth, not the last


def lane_library(tmp_path, records):
    path = tmp_path / "lane.sqlite3"
    with Store(path) as store:
        store.write(records)
    return open_readonly(path)


def test_a_session_scores_each_terms_best_message_summed_over_its_terms(tmp_path):
    # "both" holds the two words in two different messages; "often" says one word in five
    # messages; "short" says it once in a short message, "long" once in a long one.
    filler = " ".join(f"word{i}" for i in range(60))
    c = lane_library(tmp_path, [
        item("both", "a", "a", [("user", "we booked the dinner"), ("assistant", "table at Lucca at eight")], day=1),
        item("often", "b", "b", [("user", f"dinner again {i}") for i in range(5)], day=2),
        item("short", "c", "c", [("user", "a good dinner")], day=3),
        item("long", "d", "d", [("user", f"dinner {filler}")], day=4),
    ])
    try:
        hits = search(c, "dinner Lucca", now=NOW, explain=True, lanes=("messages",))
        assert sessions(hits)[0] == "both"  # two terms, from two messages, beat one term said often
        assert hits[0]["explain"]["fusion"]["matched_terms"] == ["Lucca", "dinner"]
        order = sessions(search(c, "dinner", now=NOW, lanes=("messages",)))
        assert order.index("short") < order.index("long")  # bm25's length: the short message first
        # repeating the word in more messages adds nothing: only the best message counts
        assert order.index("short") < order.index("often")
    finally:
        c.close()


def test_stop_words_are_left_out_of_ranking_but_a_quoted_phrase_is_searched(tmp_path):
    c = lane_library(tmp_path, [
        item("keys", "a", "a", [("user", "where did I leave the keys")], day=1),
        item("chatter", "b", "b", [("user", "where did you go, what did they say, where did it end")], day=2),
    ])
    try:
        hits = search(c, "where did the keys go", now=NOW, explain=True, lanes=("messages",))
        assert sessions(hits) == ["keys"]  # "where", "did", "the" say nothing: only "keys" (and "go") rank
        assert hits[0]["explain"]["fusion"]["matched_terms"] == ["keys"]
        assert search(c, "where did", now=NOW, lanes=("messages",)) == []  # nothing but stop words
        quoted = sessions(search(c, '"where did"', now=NOW, lanes=("messages",)))
        assert sorted(quoted) == ["chatter", "keys"] and quoted[0] == "chatter"  # said three times there
    finally:
        c.close()


def test_an_item_whose_transcript_barely_holds_the_words_gives_way(tmp_path, monkeypatch):
    # The items lane clearly prefers "tv" (its summary says greyhound; its transcript only the
    # everyday "plans"); the messages lane finds the fact, said once in "plans". The gate (the
    # share of the messages' best evidence each item's transcript holds) lets the fact lead, so
    # the fused search is not below the lane that found it.
    records = [item(f"talk{i:02d}", f"Talk {i:02d}", "They talked.", [("user", "we talked about dinner plans")],
                    project="chat", day=i % 3) for i in range(10)]
    records.append(item("tv", "Greyhound racing on TV", "Greyhound racing on TV, and dinner plans.",
                        [("user", "we talked about dinner plans again")], project="chat", day=2))
    records.append(item("plans", "Weekend", "The weekend.",
                        [("user", "what about the weekend"), ("assistant", "we adopted a greyhound, Biscuit")],
                        project="chat", day=1))
    c = lane_library(tmp_path, records)
    try:
        assert sessions(search(c, "greyhound plans", lanes=("items",), now=NOW))[0] == "tv"
        assert sessions(search(c, "greyhound plans", lanes=("messages",), now=NOW))[0] == "plans"
        hits = search(c, "greyhound plans", now=NOW, explain=True, limit=20)
        assert sessions(hits)[0] == "plans"
        tv = next(h for h in hits if h["session_id"] == "tv")["explain"]["fusion"]
        assert tv["ranks"]["items"] == 1 and tv["shares"]["items"] < 0.01 * tv["lanes"]["items"] / (rules.RRF_K + 1)
        monkeypatch.setattr(rules, "GATE_POWER", 0)  # without the gate the items' first would lead
        assert sessions(search(c, "greyhound plans", now=NOW))[0] == "tv"
    finally:
        c.close()


def test_fuse_takes_any_number_of_lanes(conn):
    items = search(conn, "dev server", lanes=("items",), now=NOW)
    by_session = {h["session_id"]: h for h in items}
    other = by_session["other"] if "other" in by_session else search(conn, "checkout", lanes=("items",), now=NOW)[0]
    first = fused.Ranked("items", 1.0, [(h["source"], h["session_id"]) for h in items], items)
    third = fused.Ranked("vectors", 2.0, [(other["source"], "other")], [other])
    out = fused.fuse(conn, [first, third], 10, explain=True)
    top = out[0]
    assert top["session_id"] == "other"  # 2.0 / 61 beats 1.0 / 61
    assert top["explain"]["fusion"]["shares"]["vectors"] == pytest.approx(2.0 / (rules.RRF_K + 1))
    gated = fused.Ranked("vectors", 2.0, [(other["source"], "other")], [other], gate={})
    assert fused.fuse(conn, [first, gated], 10)[0]["session_id"] != "other"  # a gate of 0 takes its say away


def decided(rec, *texts):
    import dataclasses
    return dataclasses.replace(rec, atoms=[{"type": "decision", "text": t} for t in texts])


def chain_library(tmp_path, extra=()):
    """A decision and its revision (the revision names the old choice), plus other work (and
    `extra` records)."""
    records = [
        decided(item("orch1", "Nightly load in Airflow", "The nightly tripdata load runs as an Airflow DAG.",
                     [("user", "move the nightly tripdata load to airflow"),
                      ("tool", "$ airflow dags test tripdata_nightly\nDAG run succeeded"),
                      ("assistant", "the nightly tripdata load now runs in airflow, tested with airflow dags test")],
                     project="data", day=1),
                "Nightly tripdata load runs in Airflow"),
        decided(item("orch2", "Airflow is too heavy: Dagster", "Replaced Airflow with Dagster for the nightly load.",
                     [("user", "airflow uses 2.5 GB of RAM for one nightly tripdata dag"),
                      ("tool", "$ airflow dags list\ntripdata 1 dag"),
                      ("assistant", "the nightly tripdata load now runs in dagster, airflow is gone")],
                     project="data", day=20),
                "Nightly tripdata load moved from Airflow to Dagster"),
        *(item(f"other{i}", f"Other work {i}", "Unrelated.", [("user", f"unrelated chore number {i}")],
               project="data", day=i) for i in range(6)),
        *extra,
    ]
    return lane_library(tmp_path, records)


def test_the_revision_comes_first_for_the_decisions_words(tmp_path):
    c = chain_library(tmp_path)
    try:
        assert sessions(search(c, "nightly tripdata load orchestrator", now=NOW))[:2] == ["orch2", "orch1"]
    finally:
        c.close()


def test_a_newer_session_lacking_a_name_of_the_query_is_not_moved_first(tmp_path, monkeypatch):
    # The query names the command the old session ran (`tripdata_nightly`: a name, not a plain
    # word); the revision's transcript never holds it. Looking for where a command ran is not
    # asking for the current decision: the old session stays first.
    c = chain_library(tmp_path)
    try:
        query = "airflow dags test tripdata_nightly"
        assert sessions(search(c, query, now=NOW))[0] == "orch1"
        monkeypatch.setattr(rules, "NAMES_RULE", False)
        monkeypatch.setattr(rules, "CURRENT_COVERAGE", 0)
        assert sessions(search(c, query, now=NOW))[0] == "orch2"  # without the rules it moved
    finally:
        c.close()


def test_names_are_terms_with_digits_or_punctuation_or_quotes():
    from jezero.query.terms import parse_terms
    query = 'airflow --clean tripdata_nightly app/services/pdf.py 2019-2024 "two words" Lucía'
    names = [t.text for t in parse_terms(query)
             if fused._is_name(t) and t.part_of is None]
    assert names == ["--clean", "tripdata_nightly", "app/services/pdf.py", "2019-2024", "two words"]


def test_the_messages_lane_weighs_a_word_by_the_sessions_that_hold_it(tmp_path):
    # "backfill" fills one long session's messages (a word it repeats is its subject, not a common
    # word); "total" and "trips" are said once in many sessions. Over messages, "backfill" would
    # read as the most common word; over sessions it is the rarest.
    records = [item("backfill", "Backfill", "Backfill.",
                    [("user", f"backfill part {i} done, trips loaded") for i in range(30)], project="data", day=1)]
    records += [item(f"s{i}", f"S{i}", "S.", [("user", f"the total trips today {i}")], project="data", day=2 + i)
                for i in range(8)]
    c = lane_library(tmp_path, records)
    try:
        assert sessions(search(c, "backfill total trips", lanes=("messages",), now=NOW))[0] == "backfill"
        monkeypatch = pytest.MonkeyPatch()
        monkeypatch.setattr(rules, "SESSION_IDF", False)
        try:
            assert sessions(search(c, "backfill total trips", lanes=("messages",), now=NOW))[0] != "backfill"
        finally:
            monkeypatch.undo()
    finally:
        c.close()


def test_a_session_holding_the_rarer_words_too_comes_first(tmp_path, monkeypatch):
    # "all" holds the three words, each in a long message; "two" holds the two commoner ones in
    # short messages, so its per-word bm25 sum is higher. The share of the query's words (weighed
    # by their IDF over sessions) a session holds puts "all" first.
    filler = " ".join(f"word{i}" for i in range(300))
    records = [
        item("all", "a", "a", [("user", f"k3s {filler}"), ("user", f"cluster {filler}"), ("user", f"upgrade {filler}")],
             day=1),
        item("two", "b", "b", [("user", "cluster upgrade"), ("user", "the upgrade of the cluster")], day=2),
        *(item(f"k{i}", "k", "k", [("user", f"k3s notes {i} {filler}")], day=3 + i) for i in range(3)),
        *(item(f"c{i}", "c", "c", [("user", f"cluster and upgrade notes {i} {filler}")], day=6 + i) for i in range(3)),
        *(item(f"o{i}", "o", "o", [("user", f"other notes {i}")], day=9 + i) for i in range(6)),
    ]
    monkeypatch.setattr(rules, "NEAR_TIE", 0)  # "two" is newer and near: this test pins coverage alone
    c = lane_library(tmp_path, records)
    try:
        assert sessions(search(c, "k3s cluster upgrade", lanes=("messages",), now=NOW))[0] == "all"
        monkeypatch.setattr(rules, "COVERAGE_POWER", 0)
        assert sessions(search(c, "k3s cluster upgrade", lanes=("messages",), now=NOW))[0] == "two"
    finally:
        c.close()


def test_on_a_near_tie_the_messages_lane_puts_the_newer_session_first(tmp_path, monkeypatch):
    # Both sessions say "daughter" once; the older in a message one word shorter, so it scores a
    # little more. Within NEAR_TIE the newer goes first; a clear lead (a much longer message) is kept.
    def library(folder, newer_text):
        folder.mkdir()
        return lane_library(folder, [
            item("old", "a", "a", [("user", "my daughter goes to Oakfield")], project="home", day=1),
            item("new", "b", "b", [("user", newer_text)], project="home", day=20),
            *(item(f"o{i}", "o", "o", [("user", f"other notes {i}")], project="home", day=2 + i) for i in range(6)),
        ])

    query = "which school does my daughter go to now"
    c = library(tmp_path / "near", "we moved my daughter to Riverside")
    try:
        hits = search(c, query, lanes=("messages",), now=NOW, explain=True)
        assert sessions(hits)[:2] == ["new", "old"]
        assert [h["explain"]["fusion"]["newer_on_near_tie"] for h in hits[:2]] == [True, False]
        # the items' gate is a share of the lane's best evidence, not of its first (moved) session's
        lane = fused.message_lane(c, query, sources=None, source=None, project=None, since=None,
                                  time_budget_ms=250)
        assert lane[0].near_tie
        gate = fused.items_ranked(hits, lane).gate  # the lane's hits stand in for item hits
        assert gate and max(gate.values()) == pytest.approx(1.0)
        monkeypatch.setattr(rules, "NEAR_TIE", 0)
        assert sessions(search(c, query, lanes=("messages",), now=NOW))[:2] == ["old", "new"]
    finally:
        c.close()
    monkeypatch.setattr(rules, "NEAR_TIE", 0.1)
    c = library(tmp_path / "far", "after half term and a long talk with the head we moved my daughter to Riverside "
                                  "Academy in the next town over, she is much happier there")
    try:
        assert sessions(search(c, query, lanes=("messages",), now=NOW))[:2] == ["old", "new"]
    finally:
        c.close()


def test_the_lead_a_revision_may_overcome_is_read_in_the_lane_that_ranks_it_best(tmp_path, monkeypatch):
    # The first session says the query's words again and again in its summary; the revision's item
    # names the new choice in other words, so the items lane leads with the old one by more than
    # current.MAX_LEAD (3.3x here) and would keep it first. The revision's transcript holds every
    # word of the query (0.67 of the old one's evidence): read in the lane that ranks it best, the
    # lead is within MAX_LEAD and the current decision comes first (LEAD_BY_EITHER_LANE).
    records = [
        decided(item("rl1", "Rate limit per API key", "A rate limit per API key: 100 requests per minute per API key, "
                     "counted per API key in the middleware.",
                     [("user", "add a rate limit per api key"),
                      ("assistant", "done: the rate limit is 100 requests a minute for each api key")],
                     project="billing", day=1),
                "Rate limit of 100 requests per minute per API key"),
        decided(item("rl2", "Partners hit the ceiling", "Moved to a token bucket in Redis at 600 a minute.",
                     [("user", "partners keep hitting the rate limit on their api key, the fixed window is too coarse"),
                      ("assistant", "the rate limit per api key is now a Redis token bucket, 600 requests a minute")],
                     project="billing", day=20),
                "Rate limit moved from 100 per minute to a Redis token bucket at 600 per minute"),
        *(item(f"other{i}", f"Other work {i}", "Unrelated.", [("user", f"unrelated chore number {i}")],
               project="billing", day=i) for i in range(6)),
    ]
    c = lane_library(tmp_path, records)
    try:
        query = "rate limit per api key"
        items = search(c, query, lanes=("items",), now=NOW)
        assert sessions(items)[:2] == ["rl1", "rl2"] and items[0]["score"] > 2 * items[1]["score"]
        hits = search(c, query, now=NOW, explain=True)
        assert sessions(hits)[:2] == ["rl2", "rl1"]
        assert hits[0]["explain"]["placed"]["rule"] == "current_first"
        monkeypatch.setattr(rules, "LEAD_BY_EITHER_LANE", False)  # the items' lead alone: the old one stays
        assert sessions(search(c, query, now=NOW))[:2] == ["rl1", "rl2"]
    finally:
        c.close()


def test_a_revision_naming_the_old_choice_moves_though_its_transcript_says_it_in_other_words(tmp_path, monkeypatch):
    # The first session states the subject in the query's words; the revision's transcript holds
    # one of them (`backend`: under CURRENT_COVERAGE of the anchor's terms, and little evidence),
    # but its decision names the first one's choice as what it replaced (current.NAMED_REVISION).
    import dataclasses
    records = [
        dataclasses.replace(item("cg1", "Native backend: lower the typed IR to machine code",
                                 "Native code generation goes through LLVM via inkwell.",
                                 [("user", "time for a native backend: native code generation for the typed IR"),
                                  ("assistant", "native code generation goes through llvm via inkwell, the backend "
                                                "emits an object file; native code generation works")],
                                 project="plume", day=1),
                            atoms=[{"type": "file", "text": "plume-codegen/src/llvm.rs"}]),
        decided(item("cg2", "Can't build the plume backend anymore: CI needs 20 minutes to install LLVM",
                     "The backend is now Cranelift, pure Rust: the generation of code needs no LLVM.",
                     [("user", "the llvm dependency is killing me, switch to cranelift"),
                      ("assistant", "backend switched to cranelift, no system llvm needed")],
                     project="plume", day=20),
                "Backend switched from LLVM/inkwell to Cranelift"),
        *(item(f"other{i}", f"Other work {i}", "Unrelated.", [("user", f"unrelated chore number {i}")],
               project="plume", day=i) for i in range(6)),
    ]
    c = lane_library(tmp_path, records)
    try:
        query = "native code generation backend"
        hits = search(c, query, now=NOW, explain=True)
        assert sessions(hits)[:2] == ["cg2", "cg1"]
        assert hits[0]["explain"]["placed"]["names_it_replaced"] is True
        ours, theirs = (h["explain"]["fusion"]["matched_terms"] for h in hits[:2])
        assert len(ours) < rules.CURRENT_COVERAGE * len(theirs)  # the transcript test alone would refuse it
        monkeypatch.setattr(importlib.import_module("jezero.query.current"), "NAMED_REVISION", False)
        assert sessions(search(c, query, now=NOW))[:2] == ["cg1", "cg2"]
    finally:
        c.close()


def test_an_item_whose_transcript_the_lane_never_read_keeps_its_say(tmp_path, monkeypatch):
    # `invoices/render.py` and its parts are in more messages than the lane reads (LANE_MAX_ROWS
    # 3): it reads the newest three of each, so it never looks at "render", the old session whose
    # item is about that file and whose transcript holds it. "named" is as old, its summary names
    # the file too, but its transcript does not: it must stay without a say.
    monkeypatch.setattr(rules, "LANE_MAX_ROWS", 3)
    c = render_library(tmp_path)
    try:
        query = "invoices/render.py"
        assert "render" not in sessions(search(c, query, lanes=("messages",), now=NOW))
        hits = search(c, query, now=NOW, explain=True)
        order = sessions(hits)
        render = hits[order.index("render")]["explain"]["fusion"]
        named = hits[order.index("named")]["explain"]["fusion"]
        # its own messages hold the file, as the lane's best sessions do: its whole say (gate 1)
        whole_say = render["lanes"]["items"] / (rules.RRF_K + render["ranks"]["items"])
        assert render["shares"]["items"] == pytest.approx(whole_say)
        assert named["shares"]["items"] == 0  # a title match alone still has no say
        assert order.index("render") < order.index("named")
        monkeypatch.setattr(rules, "READ_UNREAD", False)  # "not read" read as "not held"
        hits = search(c, query, now=NOW, explain=True)
        render = next(h for h in hits if h["session_id"] == "render")["explain"]["fusion"]
        assert render["shares"]["items"] == 0
        monkeypatch.setattr(rules, "READ_UNREAD", True)
        # everyday words are not read again (READ_NAMES): "render" said plainly stays unread
        hits = search(c, "render invoices", now=NOW, explain=True)
        render = next(h for h in hits if h["session_id"] == "render")["explain"]["fusion"]
        assert "messages" not in render["ranks"] and render["shares"]["items"] == 0
    finally:
        c.close()


def coverage_library(tmp_path):
    """`push` is about push notifications, its transcript holds both words; four standups say
    them too, in long messages (5 of 13 sessions: under half, so they weigh something); `rare`
    holds `provider` only, said in no other session; `weak`'s item says push, its transcript
    only `notifications`, once, in a long message."""
    filler = " ".join(f"word{i}" for i in range(80))
    records = [
        item("push", "Push notifications through Expo", "Push notifications moved to Expo.",
             [("user", "the push notifications fail on android"),
              ("assistant", "push notifications now go through expo")], project="mobile", day=1),
        item("rare", "Terraform state", "Pinned the Terraform state bucket.",
             [("user", "pin the provider version")], project="mobile", day=2),
        item("weak", "Release day", "Pushed the release branch and wrote the weekly notes.",
             [("user", f"notifications {filler}")], project="mobile", day=3),
        *(item(f"standup{i}", f"Standup {i}", "Standup notes.", [("user", f"push notifications chatter {filler}")],
               project="mobile", day=4 + i) for i in range(4)),
        *(item(f"other{i}", f"Other work {i}", "Unrelated.", [("user", f"unrelated chore number {i}")],
               project="mobile", day=i) for i in range(6)),
    ]
    return lane_library(tmp_path, records)


def test_an_items_gate_compares_it_with_the_sessions_holding_as_many_of_the_words(tmp_path, monkeypatch):
    # The lane's best is `rare`: one word, but the rarest. `push` holds two of the three words;
    # against `rare` its evidence is a few percent and the gate (** GATE_POWER) took its say away,
    # though the items lane put it first. Compared with the sessions holding two words or more
    # (COVERAGE_GATE), it keeps its whole say; `weak`, holding one word, is still compared with
    # `rare` and has none.
    c = coverage_library(tmp_path)
    try:
        query = "push notifications provider"
        assert sessions(search(c, query, lanes=("items",), now=NOW))[0] == "push"
        assert sessions(search(c, query, lanes=("messages",), now=NOW))[0] == "rare"
        hits = search(c, query, now=NOW, explain=True)
        assert sessions(hits)[0] == "push"
        by = {h["session_id"]: h["explain"] for h in hits}
        gate = by["push"]["gate"]
        assert gate["gate"] == 1.0 and gate["compared_with"] == pytest.approx(gate["evidence"])
        assert gate["compared_with"] < gate["lane_best"] and gate["held_terms"] == ["notifications", "push"]
        assert gate["evidence_from"] == "messages_lane"
        whole_say = by["push"]["fusion"]["lanes"]["items"] / (rules.RRF_K + by["push"]["fusion"]["ranks"]["items"])
        assert by["push"]["fusion"]["shares"]["items"] == pytest.approx(whole_say)
        weak = by["weak"]["gate"]
        assert weak["compared_with"] == pytest.approx(weak["lane_best"]) and weak["gate"] < 0.01
        monkeypatch.setattr(rules, "COVERAGE_GATE", False)  # every session compared with the lane's best
        hits = search(c, query, now=NOW, explain=True)
        assert sessions(hits)[0] == "rare"
        push = next(h for h in hits if h["session_id"] == "push")["explain"]["gate"]
        assert push["gate"] < 0.01 and push["compared_with"] == pytest.approx(push["lane_best"])
    finally:
        c.close()


def test_a_word_held_by_half_the_sessions_or_more_does_not_count_for_the_gate():
    # bm25's IDF floor: such a word says nothing, so it does not lift a session to a tier of its own
    evidence = {("s", "best"): 10.0, ("s", "common"): 1.0}
    held = {("s", "best"): {"provider"}, ("s", "common"): {"push", "app"}}
    bar = fused.coverage_bars(evidence, held, {"provider": 2.0, "push": 0.3, "app": bm25.IDF_FLOOR})
    assert bar(("s", "common")) == 10.0  # one word that counts, as `best`: compared with it
    bar = fused.coverage_bars(evidence, held, {"provider": 2.0, "push": 0.3, "app": 0.3})
    assert bar(("s", "common")) == 1.0  # two words that count: the best of those holding two


def render_library(tmp_path):
    """`invoices/render.py` in more messages than the lane reads (with LANE_MAX_ROWS 3), all newer
    than "render", the old session about that file: the lane never reads "render"."""
    records = [
        item("named", "Billing roadmap", "The roadmap, and later invoices/render.py.",
             [("user", "let us talk about the billing roadmap")], project="billing"),
        item("render", "Fix invoices/render.py", "invoices/render.py draws the invoice PDF.",
             [("user", "the totals in invoices/render.py are off"), ("assistant", "fixed invoices/render.py")],
             project="billing"),
    ]
    for i in range(6):
        said = "touched invoices/render.py again" if i < 4 else "the render of invoices came up"
        records.append(item(f"newer{i}", f"Standup {i}", "Standup notes.", [("user", said)], project="billing",
                            day=i + 1))
    return lane_library(tmp_path, records)


def test_the_words_read_in_an_unread_session_are_held_for_the_current_first(tmp_path, monkeypatch):
    # READ_UNREAD finds the file in "render"'s own messages. With READ_HELD the fused current-first
    # (its names rule and CURRENT_COVERAGE read what each transcript holds) sees "render" holding
    # it, so a newer hit lacking the file may not move before it; read as holding nothing, any
    # newer hit could. `explain` says the gate came from that read, and which words it found.
    monkeypatch.setattr(rules, "LANE_MAX_ROWS", 3)
    seen = {}
    real = fused.current_first

    def spy(hits, item_hits, lane, reorder, **kw):
        seen["held"] = dict(lane.held)
        return real(hits, item_hits, lane, reorder, **kw)

    monkeypatch.setattr(fused, "current_first", spy)
    c = render_library(tmp_path)
    try:
        query = "invoices/render.py"
        hits = search(c, query, now=NOW, explain=True)
        render = next(h for h in hits if h["session_id"] == "render")["explain"]
        assert "messages" not in render["fusion"]["ranks"]  # the lane never read it
        assert render["gate"]["evidence_from"] == "read_unread" and render["gate"]["gate"] == 1.0
        assert "invoices/render.py" in render["gate"]["read_terms"]
        assert "invoices/render.py" in seen["held"][("claude-local", "render")]
        named = next(h for h in hits if h["session_id"] == "named")["explain"]["gate"]
        assert named["evidence_from"] == "none" and named["gate"] == 0
        monkeypatch.setattr(rules, "READ_HELD", False)
        search(c, query, now=NOW)
        assert ("claude-local", "render") not in seen["held"]
    finally:
        c.close()


def test_jezero_search_explain_prints_each_items_gate(tmp_path, store_backend, monkeypatch):
    # the real CLI in a subprocess, on the coverage library: the items' gate and what it compared
    import os
    import subprocess
    import sys

    import pg_support
    c = coverage_library(tmp_path)
    c.close()
    config = tmp_path / "config.toml"
    config.write_text(pg_support.storage_section(tmp_path / "lane.sqlite3", store_backend, monkeypatch))
    env = {k: v for k, v in os.environ.items()
           if k == pg_support.URL_ENV or not k.startswith(("JEZERO_", "XDG_"))}
    env.update({"JEZERO_CONFIG": str(config), "HOME": str(tmp_path / "home"), "COLUMNS": "200", "NO_COLOR": "1",
                "XDG_CONFIG_HOME": str(tmp_path / "xdg"), "XDG_DATA_HOME": str(tmp_path / "xdg-data"),
                "XDG_STATE_HOME": str(tmp_path / "xdg-state"), "XDG_CACHE_HOME": str(tmp_path / "xdg-cache")})
    proc = subprocess.run([sys.executable, "-m", "jezero.cli", "search", "push notifications provider", "--explain"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    first = proc.stdout.split("\n[")[0]
    assert "Push notifications through Expo" in first and "items gate 1: evidence" in first
def test_a_common_words_expression_for_unread_sessions_is_its_held_forms(tmp_path, monkeypatch, store_backend):
    # `render` is read at its newest three messages (common): the read of the sessions the lane
    # never reached (unread_evidence) searches it as the forms some message holds ("render",
    # "rendered"), which match the same messages as all five forms, looked up once, on first use.
    if store_backend == "postgres":
        pytest.skip("unread_evidence reads FTS5 (messages_fts), which a PostgreSQL library has not")
    monkeypatch.setattr(rules, "LANE_MAX_ROWS", 3)
    records = [item(f"s{i}", f"Standup {i}", "Notes.", [("user", "the render is slow"), ("assistant", "noted")],
                    day=i) for i in range(5)]
    records.append(item("old", "Old", "Notes.", [("user", "it rendered twice")], day=0))
    c = lane_library(tmp_path, records)
    statements = []
    try:
        lane = fused.message_lane(c, "render", sources=None, source=None, project=None, since=None,
                                  time_budget_ms=1000)
        word = lane.common["render"]
        whole = tuple(word)[1]  # unpacked: the expression as made, every form
        term = mq.terms_for(c, "render")[0]
        assert whole == mq.lane_expression(term) and whole.count(" OR ") == 4
        c.exec_trace = lambda cursor, sql, bindings: statements.append(sql) or True
        assert (word[0], word[2], word[3]) == tuple(word)[:1] + tuple(word)[2:] and not statements
        assert word[1] == '"render" OR "rendered"'
        assert len(statements) == 4  # one lookup per other form
        assert word[1] == '"render" OR "rendered"' and len(statements) == 4  # once
        c.exec_trace = None

        def matched(expr):
            return [r[0] for r in c.execute("SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?", (expr,))]

        assert matched(word[1]) == matched(whole) and len(matched(whole)) == 6
    finally:
        c.close()
