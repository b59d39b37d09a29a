"""Jezero summarizers: `offline` (no model; the default) and `llm` (litellm: any Anthropic or
OpenAI-compatible endpoint). Neither module imports litellm; `llm` does on its first call."""

from jezero.plugin import hookimpl

from jezero_summarizers import llm, offline
from jezero_summarizers.errors import SummarizerError

__all__ = ["SummarizerError", "register_summarizers"]


@hookimpl
def register_summarizers(register):
    register("offline", offline.build, description=offline.DESCRIPTION)
    register("llm", llm.build, description=llm.DESCRIPTION)
