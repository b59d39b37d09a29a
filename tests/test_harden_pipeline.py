"""The pipeline when a connector fails part way through its sessions, with a summarizer that
keeps several calls in flight (an LLM's pool), through the real pipeline and a real library."""

from __future__ import annotations

import pytest

from fixture_plugins import EchoSummarizer, SummarizerPlugin, TestConnectorPlugin, write_session
from jezero.config import Config
from jezero.ingest.runner import run_connectors
from jezero.store import open_readonly
from test_pipeline import NOW, blocks


@pytest.mark.parametrize("in_flight", [1, 4])
def test_sessions_read_before_a_connector_fails_are_written(tmp_path, register_plugin, in_flight):
    """Before: with calls in flight, the sessions already read and being summarised when the
    connector raised were dropped with their summaries: summarised (and paid for) again on every
    run, and never written while the connector failed at the same file (3 of 3 lost with 4 in
    flight; with 1 in flight each was written as it finished)."""
    summarizer = EchoSummarizer(max_in_flight=in_flight, latency=0.2)
    register_plugin(TestConnectorPlugin(), "test-connector")
    register_plugin(SummarizerPlugin(summarizer), "test-summarizer")
    sessions = tmp_path / "sessions"
    for name in ("a", "b", "c"):
        write_session(sessions, name, blocks(4, prefix=f"session {name}"))
    (sessions / "zz.json").write_text("{ not json")  # the connector raises on it, after a, b, c
    config = Config.model_validate({
        "storage": {"path": str(tmp_path / "lib.sqlite3")}, "summarizer": {"name": "echo"},
        "ingest": {"settle_minutes": 30}, "connectors": [{"name": "local", "type": "testdir",
                                                          "options": {"path": str(sessions)}}]})
    for run in range(2):
        (report,) = run_connectors(config, now=NOW)
        assert report.error and "JSONDecodeError" in report.error
        conn = open_readonly(tmp_path / "lib.sqlite3")
        stored = sorted(r[0] for r in conn.execute("SELECT session_id FROM items"))
        calls = conn.execute("SELECT count(*) FROM summarizer_calls").fetchone()[0]
        conn.close()
        assert stored == ["a", "b", "c"] and calls == 3  # the second run summarises nothing again
    assert summarizer.calls == 3
