"""The ingest pipeline with a test connector and a test summarizer, on a real SQLite file."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from fixture_plugins import EchoSummarizer, Overlap, SummarizerPlugin, TestConnectorPlugin, write_session
from jezero import hookimpl
from jezero.config import Config
from jezero.ingest.runner import RunLocked, lock_for, resummarize, retag, run_connectors
from jezero.store import Store, open_readonly

NOW = datetime(2026, 3, 1, tzinfo=timezone.utc)


@pytest.fixture
def setup(tmp_path, register_plugin):
    summarizer = EchoSummarizer()
    register_plugin(TestConnectorPlugin(), "test-connector")
    register_plugin(SummarizerPlugin(summarizer), "test-summarizer")
    sessions = tmp_path / "sessions"
    sessions.mkdir()

    def make_config(**over):
        data = {
            "storage": {"path": str(tmp_path / "lib.sqlite3")},
            "summarizer": {"name": "echo"},
            "ingest": {"settle_minutes": 30, "max_input_chars": 2000},
            "connectors": [{"name": "local", "type": "testdir", "options": {"path": str(sessions)}}],
        }
        for key, value in over.items():
            if isinstance(value, dict) and isinstance(data.get(key), dict):
                data[key] = {**data[key], **value}
            else:
                data[key] = value
        return Config.model_validate(data)

    return make_config, sessions, summarizer, tmp_path


def blocks(n, start="2026-01-01T09:00:00Z", size=100, prefix="step"):
    t0 = datetime.fromisoformat(start.replace("Z", "+00:00"))
    out = []
    for i in range(n):
        role = "user" if i % 2 == 0 else "assistant"
        out.append({"role": role, "text": f"{prefix} {i} " + "x" * size, "time": (t0 + timedelta(minutes=i)).isoformat()})
    return out


def items(tmp_path):
    conn = open_readonly(tmp_path / "lib.sqlite3")
    cur = conn.execute("SELECT * FROM items ORDER BY session_id, segment_index")
    cols = [d[0] for d in cur.getdescription()]
    return [dict(zip(cols, r)) for r in cur]


def test_second_run_adds_nothing(setup):
    make_config, sessions, summarizer, tmp = setup
    write_session(sessions, "s1", blocks(4, prefix="deploy the shop"), cwd="/home/me/src/shop")
    write_session(sessions, "s2", blocks(2, prefix="fix ENOSPC"), cwd="/home/me/src/infra")
    [report] = run_connectors(make_config(), now=NOW)
    assert report.sessions_written == 2 and report.items_written == 2 and report.error is None
    first = items(tmp)
    assert {i["project"] for i in first} == {"shop", "infra"}  # common root "src"
    assert summarizer.calls == 2
    [again] = run_connectors(make_config(), now=NOW)
    assert again.sessions_seen == 0 and again.items_written == 0
    assert summarizer.calls == 2
    assert items(tmp) == first


def test_active_session_is_deferred_until_quiet(setup):
    make_config, sessions, summarizer, tmp = setup
    write_session(sessions, "busy", blocks(2), ended_at=(NOW - timedelta(minutes=5)).isoformat())
    [report] = run_connectors(make_config(), now=NOW)
    assert report.sessions_deferred == 1 and report.items_written == 0
    with Store(tmp / "lib.sqlite3") as store:
        assert store.cursor("local") == {}
    [later] = run_connectors(make_config(), now=NOW + timedelta(minutes=31))
    assert later.items_written == 1


def test_growing_session_changes_only_its_last_segment(setup):
    make_config, sessions, summarizer, tmp = setup
    write_session(sessions, "long", blocks(40, size=200))
    run_connectors(make_config(), now=NOW)
    before = items(tmp)
    assert len(before) > 3
    assert all(len(i["original"]) <= 2000 for i in before)
    calls = summarizer.calls
    write_session(sessions, "long", blocks(41, size=200))
    [report] = run_connectors(make_config(), now=NOW)
    after = items(tmp)
    assert summarizer.calls - calls == 1  # only the last segment went to the summarizer
    assert report.segments_unchanged == len(before) - 1
    assert [i["uid"] for i in after] == [i["uid"] for i in before]
    assert [i["content_hash"] for i in after[:-1]] == [i["content_hash"] for i in before[:-1]]
    assert [i["id"] for i in after] == [i["id"] for i in before]  # ids agents cite stay stable
    assert after[-1]["content_hash"] != before[-1]["content_hash"]


def test_redactors_run_before_anything_is_stored(setup, register_plugin):
    make_config, sessions, summarizer, tmp = setup

    class Scrub:
        @hookimpl
        def register_redactors(self, register):
            register("test-scrub", lambda text: text.replace("hunter2", "[REDACTED]"))

    register_plugin(Scrub(), "scrub")
    write_session(sessions, "s", [{"role": "user", "text": "my password is hunter2", "time": "2026-01-01T09:00:00Z"}])
    run_connectors(make_config(), now=NOW)
    [item] = items(tmp)
    assert "hunter2" not in json.dumps(item)
    assert "[REDACTED]" in item["original"]


def test_warnings_are_kept_once_and_the_cursor_moves(setup):
    # Reading the same bytes again would only repeat the warning (issue 10): the session is
    # written, its cursor moves, and the warning is kept until acknowledged (test_warnings.py).
    make_config, sessions, summarizer, tmp = setup
    write_session(sessions, "odd", blocks(2), warnings=["odd.json:3: unknown record type 'hologram'"])
    [report] = run_connectors(make_config(), now=NOW)
    assert report.items_written == 1 and report.sessions_held == 0
    with Store(tmp / "lib.sqlite3") as store:
        assert store.cursor("local") != {}
        state = store.connector_state("local")
        [kept] = store.unacknowledged_warnings("local")
    assert state["last_error"] is None and state["last_success_at"] is not None
    assert "hologram" in kept["message"] and "hologram" in state["warnings"][0]
    [again] = run_connectors(make_config(), now=NOW)  # not read again
    assert again.sessions_seen == 0 and summarizer.calls == 1


def test_failed_segment_keeps_the_rest_and_is_retried(setup):
    make_config, sessions, summarizer, tmp = setup
    summarizer.fail_on = "poison"
    write_session(sessions, "a", blocks(2, prefix="fine"))
    write_session(sessions, "b", blocks(2, prefix="poison"))
    [report] = run_connectors(make_config(), now=NOW)
    assert report.segments_failed == 1 and report.items_written == 1
    assert "poison" in report.warnings[0]
    with Store(tmp / "lib.sqlite3") as store:
        assert list(store.cursor("local")) == ["a.json"]
        failed = store.db.execute("SELECT count(*) FROM summarizer_calls WHERE ok=0").fetchone()[0]
    assert failed == 1
    summarizer.fail_on = None
    [retry] = run_connectors(make_config(), now=NOW)
    assert retry.sessions_seen == 1 and retry.items_written == 1


def test_failing_connector_does_not_stop_the_others(setup):
    make_config, sessions, summarizer, tmp = setup
    write_session(sessions, "s", blocks(2))
    cfg = make_config(connectors=[
        {"name": "broken", "type": "testdir", "options": {}},  # no path: build raises
        {"name": "local", "type": "testdir", "options": {"path": str(sessions)}},
    ])
    broken, local = run_connectors(cfg, now=NOW)
    assert broken.error and "path" in broken.error
    assert local.items_written == 1 and local.error is None
    with Store(tmp / "lib.sqlite3") as store:
        assert store.connector_state("broken")["last_error"]


def test_due_runs_only_connectors_whose_interval_elapsed(setup):
    make_config, sessions, summarizer, tmp = setup
    write_session(sessions, "s", blocks(2))
    cfg = make_config()
    run_connectors(cfg, now=NOW)
    assert run_connectors(cfg, due=True) == []  # just ran
    later = datetime.now(timezone.utc) + timedelta(minutes=16)
    assert [r.connector for r in run_connectors(cfg, due=True, now=later)] == ["local"]


def test_one_run_at_a_time(setup):
    make_config, sessions, summarizer, tmp = setup
    cfg = make_config()
    with lock_for(cfg):
        with pytest.raises(RunLocked):
            run_connectors(cfg, now=NOW)


def test_dry_run_counts_and_writes_nothing(setup):
    make_config, sessions, summarizer, tmp = setup
    write_session(sessions, "long", blocks(40, size=200))
    [report] = run_connectors(make_config(), dry_run=True, now=NOW)
    assert report.segments_planned > 3 and report.estimated_tokens > 1000
    assert summarizer.calls == 0
    with Store(tmp / "lib.sqlite3") as store:
        assert store.counts()["items"] == 0 and store.cursor("local") == {}


def test_parallel_backfill_respects_the_in_flight_bound(setup):
    make_config, sessions, summarizer, tmp = setup
    # Counted, not timed: the calls meet (Overlap: a serial pipeline never lets two in at once),
    # and the latency keeps them in flight long enough to press on the bound.
    summarizer.max_in_flight, summarizer.latency, summarizer.overlap = 8, 0.05, Overlap(4)
    for i in range(40):
        write_session(sessions, f"s{i:03}", blocks(2, prefix=f"task {i}"))
    [report] = run_connectors(make_config(), now=NOW)
    assert report.items_written == 40 and report.segments_failed == 0
    assert 4 <= summarizer.max_seen <= 8


def test_budget_stops_cleanly(setup):
    make_config, sessions, summarizer, tmp = setup
    summarizer.cost = 0.01
    for i in range(10):
        write_session(sessions, f"s{i}", blocks(2, prefix=f"task {i}"))
    [report] = run_connectors(make_config(summarizer={"name": "echo", "budget_usd": 0.03}), now=NOW)
    assert report.budget_reached
    with Store(tmp / "lib.sqlite3") as store:
        n_items = store.counts()
        assert n_items["items"] == n_items["fts"] == len(store.cursor("local")) == 3
        assert store.integrity_check() == "ok"
    # the next run (a new budget) picks up the rest
    summarizer.cost = None
    [rest] = run_connectors(make_config(), now=NOW)
    assert rest.items_written == 7


def test_path_rules_beat_everything_and_retag_reapplies_them(setup):
    make_config, sessions, summarizer, tmp = setup
    write_session(sessions, "s", blocks(2), cwd="/home/me/src/shop/api")
    run_connectors(make_config(), now=NOW)
    assert items(tmp)[0]["project"] == "shop"
    cfg = make_config(projects={"rules": [{"path": "/home/me/src/shop*", "project": "storefront"}]})
    report = retag(cfg)
    assert (report.items, report.changed) == (1, 1)
    assert items(tmp)[0]["project"] == "storefront"
    conn = open_readonly(tmp / "lib.sqlite3")
    assert conn.execute("SELECT project FROM items_fts").fetchone()[0] == "storefront"


def test_resummarize_rewrites_from_the_stored_original(setup):
    make_config, sessions, summarizer, tmp = setup
    write_session(sessions, "s", blocks(4, prefix="migrate the db"))
    run_connectors(make_config(), now=NOW)
    summarizer.model = "echo-2"
    report = resummarize(make_config(), source="local")
    assert (report.matched, report.summarized, report.failed) == (1, 1, 0)
    [item] = items(tmp)
    assert item["summarizer_model"] == "echo-2"
    assert item["title"].startswith("migrate the db 0")
    summarizer.model = "echo-1"


def stored_messages(library):
    conn = open_readonly(library)
    try:
        return conn.execute("SELECT m.id, m.item_id, m.seq, m.role, m.tool, m.at, m.prompt_hash, t.text FROM messages m "
                            "JOIN message_texts t ON t.id = m.id ORDER BY m.id").fetchall()
    finally:
        conn.close()


def test_resummarize_changes_what_an_item_says_and_nothing_else(setup):
    # The stored original holds no times: rebuilding the messages from it gave every message
    # the item's time, so recall's windows and timelines lost the order of a session.
    make_config, sessions, summarizer, tmp = setup
    write_session(sessions, "s", blocks(6, prefix="migrate the db"))
    run_connectors(make_config(), now=NOW)
    [before] = items(tmp)
    messages = stored_messages(tmp / "lib.sqlite3")
    assert len({m[5] for m in messages}) == 6  # one time per message, as the transcript had them
    summarizer.model = "echo-2"
    try:
        resummarize(make_config(), source="local")
    finally:
        summarizer.model = "echo-1"
    [after] = items(tmp)
    assert stored_messages(tmp / "lib.sqlite3") == messages
    assert after["summarizer_model"] == "echo-2"
    unchanged = {k: v for k, v in before.items() if k not in ("summarizer_model", "updated_at")}
    assert {k: after[k] for k in unchanged} == unchanged
    with Store(tmp / "lib.sqlite3") as store:
        assert store.db.execute("SELECT count(*) FROM summarizer_calls WHERE run_id='resummarize' AND ok=1").fetchone() == (1,)


def test_a_summarizer_call_is_recorded_with_its_items_or_not_at_all(setup, monkeypatch):
    # A crash between the model's answer and the items' write must not leave a paid call in the
    # log with no items (issue 10): the next run pays for it again, and counts it once.
    make_config, sessions, summarizer, tmp = setup
    write_session(sessions, "s1", blocks(2, prefix="webhook retries"))
    real = Store._upsert

    def crash(self, it, now):
        raise OSError("simulated crash while writing")

    monkeypatch.setattr(Store, "_upsert", crash)
    [failed] = run_connectors(make_config(), now=NOW)
    assert failed.error and summarizer.calls == 1
    with Store(tmp / "lib.sqlite3") as store:
        assert store.db.execute("SELECT count(*) FROM summarizer_calls").fetchone()[0] == 0
        assert store.db.execute("SELECT count(*) FROM items").fetchone()[0] == 0
    monkeypatch.setattr(Store, "_upsert", real)
    [ok] = run_connectors(make_config(), now=NOW)
    assert ok.items_written == 1
    with Store(tmp / "lib.sqlite3") as store:
        rows = store.db.execute("SELECT uid, ok FROM summarizer_calls").fetchall()
        uids = [r[0] for r in store.db.execute("SELECT uid FROM items")]
    assert [r[0] for r in rows] == uids and all(r[1] == 1 for r in rows)
