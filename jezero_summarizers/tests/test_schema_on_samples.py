"""Both summarizers give a valid Summary for every real sample: the same checks for each. The
llm summarizer runs on litellm's mock (no network, no key); its mock answer is the offline
summary of the same segment, so the whole path (prompt from the real transcript, schema,
parsing, validation) is exercised."""

from __future__ import annotations

import re

import pytest
import summarizer_samples
from jezero.models import ATOM_TYPES, Segment, Summary, Usage

from jezero_summarizers.llm import LlmSummarizer
from jezero_summarizers.offline import OfflineSummarizer

pytestmark = pytest.mark.needs_plugins  # this distribution must be installed

SLUG = re.compile(r"^[a-z0-9][a-z0-9._-]{0,62}$")
SAMPLE_NAMES = list(summarizer_samples.ALL)


def assert_valid(summary: Summary, usage: Usage, segment: Segment) -> None:
    assert isinstance(summary, Summary)
    # Round-trips through the schema: what the store will load back.
    assert Summary.model_validate(summary.model_dump()) == summary
    assert summary.title.strip() and "\n" not in summary.title and len(summary.title) <= 120
    assert summary.summary.strip() and len(summary.summary) <= 800
    assert 3 <= len(summary.questions) <= 6
    assert len({q.lower() for q in summary.questions}) == len(summary.questions), "questions repeat"
    assert all(q.strip() for q in summary.questions)
    assert len(summary.atoms) <= 12
    assert len({(a.type, a.text) for a in summary.atoms}) == len(summary.atoms), "atoms repeat"
    for atom in summary.atoms:
        assert atom.type in ATOM_TYPES
        assert atom.text.strip() and len(atom.text) <= 400
    assert summary.project is None or SLUG.match(summary.project)
    assert summary.language in ("en", "es")
    # Compact: the transcript is never stuffed into the fields.
    written = len(summary.title) + len(summary.summary) + sum(map(len, summary.questions)) + sum(len(a.text) for a in summary.atoms)
    assert written <= 800 + 120 + 6 * 200 + 12 * 400
    assert isinstance(usage, Usage) and usage.input_tokens >= 0 and usage.output_tokens >= 0


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_offline_summary_is_valid(local_segments, name):
    segment = local_segments[name]
    summary, usage = OfflineSummarizer().summarize(segment)
    assert_valid(summary, usage, segment)
    assert usage == Usage(0, 0, 0.0)


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_llm_summary_is_valid(local_segments, litellm_module, name):
    segment = local_segments[name]
    expected, _ = OfflineSummarizer().summarize(segment)
    summarizer = LlmSummarizer("openai/gpt-4o-mini", mock_response=expected.model_dump_json())
    summary, usage = summarizer.summarize(segment)
    assert_valid(summary, usage, segment)
    assert summary == expected
    assert usage.input_tokens > 0 and usage.output_tokens > 0


@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_both_on_sessions_from_the_connectors(samples_dir, litellm_module, agent):
    """The same checks on sessions as the real connectors read them, cut into segments as the
    pipeline cuts them (skipped while a connector type is not built)."""
    sessions = summarizer_samples.connector_sessions(agent)
    if isinstance(sessions, str):
        pytest.skip(sessions)
    assert sessions, f"the {agent} connector read no session from the samples"
    segments = [seg for session in sessions for seg in summarizer_samples.pipeline_segments(session, agent)]
    for segment in segments:
        summary, usage = OfflineSummarizer().summarize(segment)
        assert_valid(summary, usage, segment)
        llm_summary, llm_usage = LlmSummarizer("openai/gpt-4o-mini", mock_response=summary.model_dump_json()).summarize(segment)
        assert_valid(llm_summary, llm_usage, segment)
