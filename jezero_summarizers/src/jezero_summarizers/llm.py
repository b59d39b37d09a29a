"""The `llm` summarizer: one call per segment through litellm, to any Anthropic or
OpenAI-compatible endpoint (or anything else litellm speaks to).

litellm is imported on the first call, never when this module is imported: it takes seconds and
about 200 MB, and every `jezero` command and the MCP server import the plugins. The answer must
be the JSON of a `Summary`; an invalid one is sent back once with the reason, and a second
invalid one fails the segment with a `SummarizerError` saying why. Provider errors (timeouts,
rate limits, bad keys) propagate as litellm raised them, after litellm's own `max_retries`.
See README.md for the prompt's design and the costs."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import threading
import warnings
from collections.abc import Sequence
from typing import Any

from jezero.plugin import (ATOM_TYPES, MAX_ATOMS, SUMMARY_MAX_CHARS, TITLE_MAX_CHARS, Segment, Summary,
                           SummarizerConfig, Usage, lookup_env, slug)
from pydantic import ValidationError

from jezero_summarizers import prompt
from jezero_summarizers.errors import SummarizerError
from jezero_summarizers.extract import cut_at_word

DESCRIPTION = "one LLM call per segment through litellm (Anthropic, OpenAI or any compatible endpoint)"

# The cheapest widely available model that takes a JSON schema: about $0.003 for a segment of
# 60,000 characters (~15k tokens in, ~1k out at $0.15 / $0.60 per million). See README.md.
DEFAULT_MODEL = "openai/gpt-4o-mini"
# A full answer (120 + 800 characters, six questions, twelve atoms of up to 400) stays well under
# 3,000 tokens; the cap bounds what a runaway answer can cost.
MAX_OUTPUT_TOKENS = 4096
ANSWERS = 2  # the first answer, and one more after telling the model what was wrong with it

# The variable each provider reads its key from when summarizer.api_key_env is not set.
PROVIDER_KEYS = {
    "anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY", "gemini": "GEMINI_API_KEY",
    "mistral": "MISTRAL_API_KEY", "groq": "GROQ_API_KEY", "deepseek": "DEEPSEEK_API_KEY",
    "openrouter": "OPENROUTER_API_KEY", "xai": "XAI_API_KEY", "together_ai": "TOGETHERAI_API_KEY",
}
# The OpenAI client refuses to send a request without a key; local OpenAI-compatible servers
# (llama.cpp, vLLM, Ollama, LM Studio) ignore it.
LOCAL_SERVER_KEY = "no-key"

_init_lock = threading.Lock()
_initialised = False


def _litellm():
    """litellm, imported on first use, with its cost map read from the installed package instead
    of fetched from GitHub at import."""
    global _initialised
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    if not _initialised:
        # litellm's typed dicts make pydantic warn at import and on first use of some providers:
        # noise in every `jezero run`, nothing a user can act on.
        warnings.filterwarnings("ignore", message=r".*`ReadOnly` qualifier", category=UserWarning)
    import litellm

    if not _initialised:
        with _init_lock:
            litellm.suppress_debug_info = True  # no "Give Feedback / Get Help" banner in our logs
            _initialised = True
    return litellm


class InvalidAnswer(ValueError):
    """The model answered, but not with a usable summary."""


class LlmSummarizer:
    name = "llm"

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        output_language: str | None = None,
        max_in_flight: int = 4,
        timeout_seconds: float = 60.0,
        max_retries: int = 2,
        mock_response: Any = None,
    ):
        """`mock_response` is for tests, never from the config: litellm's own mock (a string
        answer or an exception to raise), or a sequence of them used one per call in order
        (the last one repeats), so a test can answer badly once and then well."""
        self.model = model
        self.base_url = base_url
        self.output_language = output_language
        self.max_in_flight = max_in_flight
        self.timeout_seconds = timeout_seconds
        self.max_retries = max_retries
        self._api_key = api_key
        self._format: dict | bool | None = None  # decided on the first call
        self._mocks = list(mock_response) if _is_sequence(mock_response) else None
        self._mock = None if self._mocks is not None else mock_response
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"LlmSummarizer(model={self.model!r}, base_url={self.base_url!r})"  # never the key

    def summarize(self, segment: Segment) -> tuple[Summary, Usage]:
        litellm = _litellm()
        messages = [
            {"role": "system", "content": prompt.system_prompt(self.output_language)},
            {"role": "user", "content": prompt.user_prompt(segment)},
        ]
        usage = Usage(input_tokens=0, output_tokens=0, cost_usd=0.0)
        reason = "no answer"
        for _ in range(ANSWERS):
            response = self._complete(litellm, messages)
            _count(usage, litellm, response)
            content = _content(response)
            try:
                return parse_answer(content, self.output_language), usage
            except InvalidAnswer as e:
                reason = str(e)
            messages = messages + [
                {"role": "assistant", "content": content.strip() if content and content.strip() else "(empty)"},
                {"role": "user", "content": prompt.RETRY.format(reason=reason)},
            ]
        raise SummarizerError(
            f"{self.model} gave no valid summary for segment {segment.uid} in {ANSWERS} answers; last problem: {reason}",
            usage=usage,
        )

    # -- the call -----------------------------------------------------------------------------------

    def _complete(self, litellm, messages: list[dict]):
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "timeout": self.timeout_seconds,
            # Extra requests on a transport error or 429/5xx, done by the provider's client. Not
            # `num_retries`: that one multiplies requests and needs tenacity (dependencies.md §3).
            "max_retries": self.max_retries,
            "max_tokens": MAX_OUTPUT_TOKENS,
            "drop_params": True,  # a provider that lacks an option gets the call without it, not an error
        }
        response_format = self._response_format(litellm)
        if response_format:
            kwargs["response_format"] = response_format
        if self.base_url:
            kwargs["api_base"] = self.base_url
        if self._api_key:
            kwargs["api_key"] = self._api_key
        mock = self._next_mock()
        if mock is not None:
            kwargs["mock_response"] = mock
        return litellm.completion(**kwargs)

    def _response_format(self, litellm) -> dict | None:
        """The JSON schema where litellm knows the model takes one; else plain JSON mode where the
        provider has it; else nothing but the instructions."""
        if self._format is None:
            try:
                structured = bool(litellm.supports_response_schema(model=self.model))
            except Exception:  # an unknown model: litellm raises instead of answering False
                structured = False
            if structured:
                self._format = prompt.response_format(True)
            else:
                try:
                    params = litellm.get_supported_openai_params(model=self.model) or []
                except Exception:
                    params = []
                self._format = prompt.response_format(False) if "response_format" in params else False
        return self._format or None

    def _next_mock(self):
        if self._mocks is None:
            return self._mock
        with self._lock:  # summarize() runs in a thread pool
            return self._mocks.pop(0) if len(self._mocks) > 1 else (self._mocks[0] if self._mocks else None)


def build(config: SummarizerConfig) -> LlmSummarizer:
    """The summarizer for `config`, or a SummarizerError that says what is missing: litellm, or
    the API key (named by summarizer.api_key_env, else the provider's usual variable). The model
    defaults to DEFAULT_MODEL."""
    if importlib.util.find_spec("litellm") is None:
        raise SummarizerError(
            "the llm summarizer needs litellm, which is not installed: pip install 'jezero-summarizers[llm]'"
        )
    model = (config.model or DEFAULT_MODEL).strip()
    return LlmSummarizer(
        model,
        base_url=config.base_url,
        api_key=_api_key(config, model),
        output_language=config.output_language,
        max_in_flight=config.max_in_flight,
        timeout_seconds=config.timeout_seconds,
        max_retries=config.max_retries,
    )


def provider_of(model: str) -> str:
    """litellm's provider prefix (`anthropic/claude-haiku-4-5`), or a guess from a bare name."""
    if "/" in model:
        return model.split("/", 1)[0].lower()
    name = model.lower()
    if name.startswith("claude"):
        return "anthropic"
    if name.startswith(("gpt-", "o1", "o3", "o4", "chatgpt")):
        return "openai"
    if name.startswith("gemini"):
        return "gemini"
    return ""


def _api_key(config: SummarizerConfig, model: str) -> str | None:
    if config.api_key_env:
        key = config.api_key()
        if not key:
            raise SummarizerError(
                f"summarizer.api_key_env names {config.api_key_env}, which is not set "
                "(neither in the environment nor in the .env beside the config)"
            )
        return key
    provider = provider_of(model)
    variable = PROVIDER_KEYS.get(provider)
    if variable is None:
        return None  # ollama, bedrock, vertex...: they authenticate their own way, litellm says what is missing
    key = lookup_env(variable)  # the .env beside the config counts too, which litellm cannot see
    if key:
        return key
    if config.base_url:
        return LOCAL_SERVER_KEY if provider == "openai" else None
    raise SummarizerError(
        f"the llm summarizer's model {model} needs an API key: set {variable}, or name the variable "
        "that holds it in summarizer.api_key_env"
    )


# -- the answer -------------------------------------------------------------------------------------

_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.I)


def parse_answer(content: str | None, output_language: str | None = None) -> Summary:
    """A Summary from the model's answer, or InvalidAnswer saying what is wrong with it.

    Before validation the answer is tidied where that cannot change its meaning: whitespace, a
    title on several lines, text over a length limit (cut at a word), more questions or atoms
    than allowed (the first are kept), atoms of an unknown type or without text (dropped), a
    project name that is not a slug, a language like "en-US", unknown keys. Missing or wrongly
    typed fields, and fewer than three questions, are sent back to the model."""
    text = (content or "").strip()
    if not text:
        raise InvalidAnswer("the answer was empty")
    text = _FENCE.sub("", text).strip()
    if not text.startswith("{"):
        start, end = text.find("{"), text.rfind("}")
        if start < 0 or end < start:
            raise InvalidAnswer("the answer holds no JSON object")
        text = text[start: end + 1]
    try:
        data = json.loads(text)
    except ValueError as e:
        where = f" (line {e.lineno}, column {e.colno})" if hasattr(e, "lineno") else ""
        raise InvalidAnswer(f"the answer is not valid JSON: {getattr(e, 'msg', e)}{where}") from None
    if not isinstance(data, dict):
        raise InvalidAnswer(f"the answer is JSON but not an object (got {type(data).__name__})")
    try:
        return Summary.model_validate(_tidy(data, output_language))
    except ValidationError as e:
        problems = [f"{'.'.join(str(p) for p in err['loc']) or 'answer'}: {err['msg']}" for err in e.errors()[:6]]
        raise InvalidAnswer("; ".join(problems)) from None


def _tidy(data: dict, output_language: str | None) -> dict:
    out = {k: data[k] for k in ("title", "summary", "questions", "atoms", "project", "language") if k in data}
    if isinstance(out.get("title"), str):
        lines = [line.strip() for line in out["title"].strip().splitlines() if line.strip()]
        out["title"] = cut_at_word(lines[0] if lines else "", TITLE_MAX_CHARS)
    if isinstance(out.get("summary"), str):
        out["summary"] = cut_at_word(out["summary"].strip(), SUMMARY_MAX_CHARS)
    if isinstance(out.get("questions"), list):
        questions: list = []
        for q in out["questions"]:
            q = q.strip() if isinstance(q, str) else q
            if q and q not in questions:
                questions.append(q)
        out["questions"] = questions[:6]
    if isinstance(out.get("atoms"), list):
        atoms = []
        for a in out["atoms"]:
            if not isinstance(a, dict):
                continue
            kind = str(a.get("type", "")).strip().lower()
            body = a.get("text")
            if kind in ATOM_TYPES and isinstance(body, str) and body.strip():
                atoms.append({"type": kind, "text": cut_at_word(body.strip(), 400)})
        out["atoms"] = atoms[:MAX_ATOMS]
    if "atoms" not in out:
        out["atoms"] = []
    project = out.get("project")
    if isinstance(project, str):
        out["project"] = slug(project)
    elif project is not None:
        out["project"] = None
    language = out.get("language")
    if isinstance(language, str) and language.strip():
        out["language"] = re.split(r"[-_]", language.strip().lower())[0]
    else:
        out["language"] = output_language.lower() if output_language else None
    return out


def _content(response) -> str | None:
    """The answer's text; with some providers a schema answer comes back as a tool call."""
    try:
        message = response.choices[0].message
    except (AttributeError, IndexError, TypeError):
        return None
    content = getattr(message, "content", None)
    if isinstance(content, str) and content.strip():
        return content
    for call in getattr(message, "tool_calls", None) or []:
        arguments = getattr(getattr(call, "function", None), "arguments", None)
        if isinstance(arguments, str) and arguments.strip():
            return arguments
    return content


def _count(usage: Usage, litellm, response) -> None:
    """Add one response's tokens and cost to `usage`. A cost litellm cannot price (a local or
    unknown model) makes the total unknown (None), not zero."""
    u = getattr(response, "usage", None)
    usage.input_tokens += int(getattr(u, "prompt_tokens", 0) or 0)
    usage.output_tokens += int(getattr(u, "completion_tokens", 0) or 0)
    try:
        cost = litellm.completion_cost(completion_response=response)
    except Exception:  # unknown model or provider: litellm raises rather than answering None
        cost = None
    if cost is None or usage.cost_usd is None:
        usage.cost_usd = None
    else:
        usage.cost_usd += float(cost)


def _is_sequence(value: Any) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, (str, bytes))
