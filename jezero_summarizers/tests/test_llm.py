"""The llm summarizer against litellm's own mock_response: no network, no key. A recording
wrapper around litellm.completion shows what would have been sent."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import pytest
import summarizer_samples
from jezero.config import SummarizerConfig

from jezero_summarizers import llm
from jezero_summarizers.errors import SummarizerError
from jezero_summarizers.llm import LlmSummarizer, parse_answer
from jezero_summarizers.prompt import response_schema

pytestmark = pytest.mark.needs_plugins  # this distribution must be installed

GOOD = {
    "title": "Fix ty errors in test/test_cache.py",
    "summary": "`uv run ty check` reported two problems in test/test_cache.py; both were fixed.",
    "questions": ["How was error[call-non-callable] fixed?", "Why does ty flag pytest.skip()?", "What does uv run ty check report?"],
    "atoms": [
        {"type": "error", "text": "error[call-non-callable]: Object of type `_WithException[Unknown, <class 'Skipped'>]` is not callable"},
        {"type": "command", "text": "uv run ty check"},
        {"type": "file", "text": "test/test_cache.py"},
    ],
    "project": "claude-code-log",
    "language": "en",
}


@pytest.fixture
def calls(litellm_module, monkeypatch):
    """Every litellm.completion call's keyword arguments, in order (the call still happens)."""
    seen: list[dict] = []
    real = litellm_module.completion

    def recording(**kwargs):
        seen.append(kwargs)
        return real(**kwargs)

    monkeypatch.setattr(litellm_module, "completion", recording)
    return seen


@pytest.fixture(scope="module")
def segment(samples_dir):
    return summarizer_samples.segment(summarizer_samples.local_session(summarizer_samples.C2))


def test_a_valid_answer_is_the_summary_with_its_usage(segment, calls):
    summary, usage = LlmSummarizer("openai/gpt-4o-mini", mock_response=json.dumps(GOOD)).summarize(segment)
    assert summary.model_dump() == GOOD
    assert len(calls) == 1
    assert usage.input_tokens > 0 and usage.output_tokens > 0
    assert usage.cost_usd is not None and usage.cost_usd > 0  # gpt-4o-mini is in litellm's price list
    messages = calls[0]["messages"]
    assert messages[0]["role"] == "system" and messages[1]["role"] == "user"
    assert "uv run ty check" in messages[1]["content"]  # the transcript itself
    assert "working folder: /Users/dain/workspace/claude-code-log" in messages[1]["content"]


def test_an_answer_in_a_code_fence_with_words_around_it_is_read(segment, calls):
    answer = "Here is the entry:\n```json\n" + json.dumps(GOOD, indent=2) + "\n```"
    summary, _ = LlmSummarizer("openai/gpt-4o-mini", mock_response=answer).summarize(segment)
    assert summary.title == GOOD["title"] and len(calls) == 1


def test_a_malformed_answer_is_retried_once_with_the_reason(segment, calls):
    summarizer = LlmSummarizer("openai/gpt-4o-mini", mock_response=['{"title": "half an answer"', json.dumps(GOOD)])
    summary, usage = summarizer.summarize(segment)
    assert summary.title == GOOD["title"]
    assert len(calls) == 2
    retry = calls[1]["messages"]
    assert retry[:2] == calls[0]["messages"]
    assert retry[2] == {"role": "assistant", "content": '{"title": "half an answer"'}
    assert retry[3]["role"] == "user" and "not valid JSON" in retry[3]["content"]
    assert usage.input_tokens > 0 and usage.output_tokens > 0  # both calls counted
    single = LlmSummarizer("openai/gpt-4o-mini", mock_response=json.dumps(GOOD)).summarize(segment)[1]
    assert usage.output_tokens == 2 * single.output_tokens


def test_a_schema_violation_is_sent_back_with_what_is_wrong(segment, calls):
    bad = dict(GOOD, questions=["Only one?"])
    summary, _ = LlmSummarizer("openai/gpt-4o-mini", mock_response=[json.dumps(bad), json.dumps(GOOD)]).summarize(segment)
    assert summary.questions == GOOD["questions"]
    assert "questions" in calls[1]["messages"][3]["content"] and "at least 3" in calls[1]["messages"][3]["content"]


def test_two_malformed_answers_fail_with_the_reason(segment, calls):
    summarizer = LlmSummarizer("openai/gpt-4o-mini", mock_response=["Sorry, I cannot help with that.", "still no JSON"])
    with pytest.raises(SummarizerError) as raised:
        summarizer.summarize(segment)
    message = str(raised.value)
    assert "openai/gpt-4o-mini" in message and segment.uid in message
    assert "2 answers" in message and "no JSON object" in message
    assert isinstance(raised.value, RuntimeError)  # the pipeline needs nothing from this package to catch it
    assert raised.value.usage.input_tokens > 0  # what the failure cost, for budgets
    assert len(calls) == 2


def test_a_provider_error_propagates_without_a_second_answer(segment, calls, litellm_module):
    rate_limited = litellm_module.RateLimitError(message="429 slow down", llm_provider="openai", model="gpt-4o-mini")
    with pytest.raises(litellm_module.RateLimitError):
        LlmSummarizer("openai/gpt-4o-mini", mock_response=rate_limited).summarize(segment)
    assert len(calls) == 1
    with pytest.raises(Exception) as raised:
        LlmSummarizer("openai/gpt-4o-mini", mock_response=ConnectionError("endpoint down")).summarize(segment)
    assert not isinstance(raised.value, SummarizerError)
    assert "endpoint down" in str(raised.value)


def test_output_language_is_in_the_prompt(segment, calls):
    spanish = dict(GOOD, language="es")
    summary, _ = LlmSummarizer("openai/gpt-4o-mini", output_language="es", mock_response=json.dumps(spanish)).summarize(segment)
    system = calls[0]["messages"][0]["content"]
    assert "in Spanish (es), whatever the language of the transcript" in system
    assert "do not translate them" in system
    assert summary.language == "es"
    LlmSummarizer("openai/gpt-4o-mini", mock_response=json.dumps(GOOD)).summarize(segment)
    assert "Spanish" not in calls[1]["messages"][0]["content"]
    assert "language the person in the transcript writes in" in calls[1]["messages"][0]["content"]


@pytest.mark.parametrize(("model", "expected"), [
    ("openai/gpt-4o-mini", "json_schema"),
    ("anthropic/claude-haiku-4-5", "json_schema"),
    ("ollama/llama3", "json_object"),  # no schema support known: plain JSON mode
])
def test_the_json_schema_is_sent_where_the_model_takes_one(segment, calls, model, expected):
    LlmSummarizer(model, mock_response=json.dumps(GOOD)).summarize(segment)
    sent = calls[0]["response_format"]
    assert sent["type"] == expected
    if expected == "json_schema":
        assert sent["json_schema"]["strict"] is True
        assert sent["json_schema"]["schema"] == response_schema()


def test_call_settings_come_from_the_config(segment, calls, monkeypatch):
    monkeypatch.setenv("JEZERO_TEST_LLM_KEY", "sk-test-123")
    config = SummarizerConfig(name="llm", model="openai/gpt-4o-mini", base_url="http://127.0.0.1:9/v1",
                              api_key_env="JEZERO_TEST_LLM_KEY", timeout_seconds=12.5, max_retries=3, max_in_flight=7)
    summarizer = llm.build(config)
    assert summarizer.name == "llm" and summarizer.model == "openai/gpt-4o-mini" and summarizer.max_in_flight == 7
    assert "sk-test-123" not in repr(summarizer)
    summarizer._mock = json.dumps(GOOD)  # the mock is a test-only constructor argument, not config
    summarizer.summarize(segment)
    sent = calls[0]
    assert sent["timeout"] == 12.5 and sent["max_retries"] == 3 and "num_retries" not in sent
    assert sent["api_base"] == "http://127.0.0.1:9/v1" and sent["api_key"] == "sk-test-123"
    assert sent["max_tokens"] == llm.MAX_OUTPUT_TOKENS


def test_summarize_is_safe_from_a_thread_pool(litellm_module, samples_dir):
    segments = [summarizer_samples.segment(summarizer_samples.local_session(rel)) for rel in summarizer_samples.ALL.values()]
    summarizer = LlmSummarizer("openai/gpt-4o-mini", mock_response=json.dumps(GOOD), max_in_flight=4)
    with ThreadPoolExecutor(max_workers=summarizer.max_in_flight) as pool:
        results = list(pool.map(summarizer.summarize, segments * 2))
    assert len(results) == 12 and all(s.title == GOOD["title"] for s, _ in results)


# -- build(config) --------------------------------------------------------------------------------


def test_build_defaults_to_a_cheap_model_and_needs_its_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(SummarizerError, match="needs an API key: set OPENAI_API_KEY, or name the variable"):
        llm.build(SummarizerConfig(name="llm"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    built = llm.build(SummarizerConfig(name="llm"))
    assert built.model == llm.DEFAULT_MODEL == "openai/gpt-4o-mini"
    assert built._api_key == "sk-env"


def test_build_reports_an_unset_api_key_env(monkeypatch):
    monkeypatch.delenv("JEZERO_NO_SUCH_KEY", raising=False)
    with pytest.raises(SummarizerError, match="api_key_env names JEZERO_NO_SUCH_KEY, which is not set"):
        llm.build(SummarizerConfig(name="llm", model="anthropic/claude-haiku-4-5", api_key_env="JEZERO_NO_SUCH_KEY"))


def test_build_for_a_local_or_keyless_endpoint(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    local = llm.build(SummarizerConfig(name="llm", model="openai/qwen2.5-coder", base_url="http://127.0.0.1:8080/v1"))
    assert local._api_key == llm.LOCAL_SERVER_KEY  # the OpenAI client wants some key; the server ignores it
    ollama = llm.build(SummarizerConfig(name="llm", model="ollama/llama3"))
    assert ollama._api_key is None  # litellm knows how ollama authenticates


@pytest.mark.parametrize(("model", "provider"), [
    ("anthropic/claude-haiku-4-5", "anthropic"), ("claude-haiku-4-5", "anthropic"), ("gpt-4o-mini", "openai"),
    ("openai/gpt-4o-mini", "openai"), ("ollama/llama3", "ollama"), ("mystery-model", ""),
])
def test_provider_of(model, provider):
    assert llm.provider_of(model) == provider


# -- parsing --------------------------------------------------------------------------------------


def test_parse_answer_tidies_what_cannot_change_the_meaning():
    messy = dict(
        GOOD,
        title="  Fix ty errors\nin test_cache.py  ",
        summary="x " * 600,
        questions=[f"Question {i}?" for i in range(9)] + ["Question 1?"],
        atoms=[{"type": "Command", "text": f"cmd {i}"} for i in range(15)] + [{"type": "opinion", "text": "nice"}],
        project="Claude Code Log",
        language="en-US",
        confidence=0.9,
    )
    s = parse_answer(json.dumps(messy))
    assert s.title == "Fix ty errors" and len(s.summary) <= 800
    assert s.questions == [f"Question {i}?" for i in range(6)]
    assert len(s.atoms) == 12 and all(a.type == "command" for a in s.atoms)
    assert s.project == "claude-code-log" and s.language == "en"
    assert parse_answer(json.dumps(dict(GOOD, language=None)), "es").language == "es"


@pytest.mark.parametrize(("answer", "reason"), [
    ("", "empty"),
    ("no json here", "no JSON object"),
    ("[1, 2]", "no JSON object"),
    ('{"title": }', "not valid JSON"),
    (json.dumps({k: v for k, v in GOOD.items() if k != "summary"}), "summary: Field required"),
    (json.dumps(dict(GOOD, questions=["a?", "b?"])), "questions"),
    (json.dumps(dict(GOOD, title=42)), "title"),
])
def test_parse_answer_says_what_is_wrong(answer, reason):
    with pytest.raises(llm.InvalidAnswer, match=reason):
        parse_answer(answer)
