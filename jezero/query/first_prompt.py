"""The first-prompt rule (seed 000, "Context on the first prompt"), for the app's Agent view.

There is one copy of the rule: the client core that the agents' hooks run
(clients/core/jezero_client.py, shipped in the server package as jezero/client_core.py by
scripts/build_clients.py). The app imports it from here, so what the Agent view shows is exactly
what a hook injects. BM25 scores are not comparable across queries, so no threshold says
"related": a search result counts only when two of the prompt's own words appear as whole words
(accent-insensitive) in its title or summary.

The rule runs over the search's own first 8 results, and no cheaper server path gives the same
items: items that fail the two-word test still take places among those 8, and thousands of items
pass it for a prompt of common words. On the FTS5 engine at 100,000 items that search costs 126 /
318 ms CPU p50 / p95; the paths measured against it (a smaller work budget, a whole-word candidate
set) agreed on 2 to 13 prompts in 60 (benchmarks/hooks/README.md, "Looking for a cheaper first
prompt on FTS5"). The tantivy engine answers it in 8.5 / 13.3 ms.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from jezero.client_core import FIRST_PROMPT_LANES as SEARCH_LANES
from jezero.client_core import FIRST_PROMPT_SEARCH as SEARCH_LIMIT
from jezero.client_core import MAX_PROMPT_WORDS as MAX_WORDS
from jezero.client_core import MAX_RELATED as MAX_SHOWN
from jezero.client_core import (
    MIN_SHARED_WORDS,
    MIN_WORD_CHARS,
    STOP_WORDS,
    first_prompt_search,
    first_prompt_text,
    fold,
    prompt_words,
    related_items,
    shared_words,
)

__all__ = ["MAX_SHOWN", "MAX_WORDS", "MIN_SHARED_WORDS", "MIN_WORD_CHARS", "SEARCH_LANES", "SEARCH_LIMIT", "STOP_WORDS",
           "fold", "prompt_words", "related", "render", "search_arguments", "search_query", "shared_words"]


def related(prompt: str, hits: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The hits (search results for the prompt's words, best first) the rule keeps."""
    return related_items(prompt, list(hits))


def search_query(prompt: str) -> str | None:
    """The query the hook sends for this prompt, or None when the rule adds nothing."""
    words = prompt_words(prompt)
    return " ".join(words) if len(words) >= MIN_SHARED_WORDS else None


def search_arguments(prompt: str) -> dict[str, Any] | None:
    """The search tool's arguments for this prompt, exactly as the hook sends them (the items
    ranking alone, SEARCH_LIMIT results); None when the rule adds nothing."""
    return first_prompt_search(prompt)


def render(hits: Iterable[Mapping[str, Any]]) -> str:
    """The block the hook adds to the first prompt; "" when no hit is kept."""
    return first_prompt_text(list(hits))
