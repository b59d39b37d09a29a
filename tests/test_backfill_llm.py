"""A mocked backfill through the real `llm` summarizer (litellm's own mock response, 0.5 s of
simulated latency per call) and the real pipeline: parallel within the in-flight bound, and a
budget stop that leaves the store consistent."""

from __future__ import annotations

import json
import threading
import time
from datetime import datetime, timezone

import pytest

from fixture_plugins import Overlap, TestConnectorPlugin, write_session
from jezero import hookimpl
from jezero.config import Config
from jezero.ingest.runner import run_connectors
from jezero.store import Store
from jz_support import needs_plugin

pytestmark = needs_plugin("jezero-summarizers")
pytest.importorskip("litellm")

ANSWER = json.dumps({
    "title": "Fixed the webhook retry loop", "summary": "The Stripe webhook retried forever; capped at 5.",
    "questions": ["How was the webhook retry loop fixed?", "Why did Stripe retry?", "What is the retry cap?"],
    "atoms": [{"type": "fix", "text": "max_retries = 5 in webhooks/stripe.py"}], "project": "shop", "language": "en",
})
LATENCY = 0.5
IN_FLIGHT = 16
SEGMENTS = 200


class Counting:
    """Wraps litellm.completion: sleeps like a provider and records how many calls overlap. With
    `overlap` set, the first calls wait until that many are in flight at once, so parallelism is
    shown by a count, not by how fast a busy machine finishes."""

    def __init__(self, real):
        self.real, self.now, self.most, self.calls = real, 0, 0, 0
        self.lock = threading.Lock()
        self.overlap: Overlap | None = None

    def __call__(self, **kwargs):
        with self.lock:
            self.now += 1
            self.calls += 1
            self.most = max(self.most, self.now)
        try:
            if self.overlap is not None:
                with self.overlap:
                    pass
            time.sleep(LATENCY)
            return self.real(**kwargs)
        finally:
            with self.lock:
                self.now -= 1


@pytest.fixture
def backfill(tmp_path, register_plugin, monkeypatch):
    from jezero_summarizers.llm import LlmSummarizer, _litellm

    litellm = _litellm()
    counting = Counting(litellm.completion)
    monkeypatch.setattr(litellm, "completion", counting)
    summarizer = LlmSummarizer("openai/gpt-4o-mini", api_key="sk-test", max_in_flight=IN_FLIGHT,
                               mock_response=ANSWER)

    class Plugin:
        @hookimpl
        def register_summarizers(self, register):
            register("llm-mock", lambda config: summarizer)

    register_plugin(TestConnectorPlugin(), "test-connector")
    register_plugin(Plugin(), "llm-mock")
    sessions = tmp_path / "sessions"
    for i in range(SEGMENTS):
        write_session(sessions, f"s{i:03}", [{"role": "user", "text": f"fix webhook retries, take {i}",
                                              "time": "2026-01-01T09:00:00Z"}])

    def config(**summarizer_options):
        return Config.model_validate({
            "storage": {"path": str(tmp_path / "lib.sqlite3")},
            "summarizer": {"name": "llm-mock", **summarizer_options},
            "connectors": [{"name": "local", "type": "testdir", "options": {"path": str(sessions)}}],
        })

    return config, counting, tmp_path / "lib.sqlite3"


@pytest.mark.slow
def test_backfill_runs_in_parallel_within_the_bound(backfill):
    config, counting, library = backfill
    counting.overlap = Overlap(IN_FLIGHT)
    [report] = run_connectors(config(), now=datetime(2026, 3, 1, tzinfo=timezone.utc))
    assert report.items_written == SEGMENTS and report.segments_failed == 0
    assert counting.most == IN_FLIGHT  # all of the bound used (the calls met), never more
    assert report.input_tokens > 0 and report.output_tokens > 0
    with Store(library) as store:
        calls = store.db.execute("SELECT count(*), sum(input_tokens) FROM summarizer_calls WHERE ok=1").fetchone()
    assert calls[0] == SEGMENTS and calls[1] == report.input_tokens


def one_call_tokens() -> int:
    """What one mocked call counts, so the budget below means about 30 calls."""
    from jezero.ingest.segments import segment_session
    from jezero.models import Block, Session
    from jezero_summarizers.llm import LlmSummarizer

    session = Session(id="probe", agent="test-agent", cursor_key="", cursor_value=None,
                      blocks=[Block("user", "text", "fix webhook retries, take 0")])
    [segment] = segment_session(session, "local", 60_000)
    _, usage = LlmSummarizer("openai/gpt-4o-mini", api_key="sk-test", mock_response=ANSWER).summarize(segment)
    return usage.input_tokens + usage.output_tokens


@pytest.mark.slow
def test_budget_stop_leaves_the_store_consistent(backfill):
    config, counting, library = backfill
    per_call = one_call_tokens()
    [report] = run_connectors(config(budget_tokens=30 * per_call), now=datetime(2026, 3, 1, tzinfo=timezone.utc))
    assert report.budget_reached
    assert 0 < report.items_written < SEGMENTS
    with Store(library) as store:
        counts = store.counts()
        assert counts["items"] == counts["fts"] == len(store.cursor("local")) == report.items_written
        assert store.integrity_check() == "ok"
    [rest] = run_connectors(config(), now=datetime(2026, 3, 1, tzinfo=timezone.utc))
    assert rest.items_written == SEGMENTS - report.items_written
