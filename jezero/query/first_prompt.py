"""The first-prompt rule: whether past work is related to the first message of a session.

A hook searches with the prompt's distinctive words and keeps a hit only when two of those words
appear as whole words in its title or summary. BM25 scores are not comparable from one query to
the next, so no fixed score threshold can say "related"; two whole-word matches in the most
condensed fields are evidence a person can check, and stricter than search itself (search
matches fragments: "migration" finds "migrations", the rule does not). The point is to stay
quiet unless the overlap is plain: an unrelated item in every session teaches agents to skip the
block.

Pure functions, no I/O: the app's Agent view and the agent plugins' hooks share them.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any, Iterable, Mapping

# Few enough to read at a glance; the words people put in any request, in English and Spanish.
STOP_WORDS = frozenset("""
the and for are but not you your with this that these those from have has had was were will would
can could should what when where which who why how into onto over under about after before again
then than there here them they their our ours out off all any some more most other such only own
same very just also now too its it's let lets use using make made want need please help fix fixed
thanks thank hello could would get got see look check try new add added like able does did doing
done yes way one two
para por que con los las una unos unas del como pero mas más este esta estos estas ese esa eso
quiero queremos puedes podemos hacer hace haz favor gracias hola ayuda ayudame arreglar arregla
sobre entre cuando donde porque también tambien muy sin ser son fue hay todo toda todos todas
""".split())

MIN_WORD_CHARS = 3
MAX_WORDS = 20
# Enough candidates that a plainly related item is among them; few enough to check in a hook.
SEARCH_LIMIT = 8
MIN_SHARED_WORDS = 2
MAX_SHOWN = 3

_WORD = re.compile(r"\w+")


def fold(text: str) -> str:
    """Lowercase without accents: "Migración" -> "migracion"."""
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def prompt_words(prompt: str) -> list[str]:
    """The prompt's distinctive words, folded, unique, in order, at most MAX_WORDS."""
    words: list[str] = []
    for word in _WORD.findall(fold(prompt)):
        if len(word) >= MIN_WORD_CHARS and word not in STOP_WORDS and word not in words:
            words.append(word)
            if len(words) == MAX_WORDS:
                break
    return words


def shared_words(words: Iterable[str], hit: Mapping[str, Any]) -> list[str]:
    """Which of `words` appear as whole words in the hit's title or summary (accent-insensitive)."""
    present = set(_WORD.findall(fold(f"{hit.get('title') or ''} {hit.get('summary') or ''}")))
    return [w for w in words if w in present]


def related(prompt: str, hits: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The hits (search results for the prompt's words, best first) the rule keeps, at most
    MAX_SHOWN. Nothing when the prompt has fewer than MIN_SHARED_WORDS distinctive words."""
    words = prompt_words(prompt)
    if len(words) < MIN_SHARED_WORDS:
        return []
    kept = [h for h in list(hits)[:SEARCH_LIMIT] if len(shared_words(words, h)) >= MIN_SHARED_WORDS]
    return kept[:MAX_SHOWN]


def search_query(prompt: str) -> str | None:
    """The query a hook sends to search for this prompt, or None when the rule adds nothing."""
    words = prompt_words(prompt)
    return " ".join(words) if len(words) >= MIN_SHARED_WORDS else None


def render(hits: Iterable[Mapping[str, Any]]) -> str:
    """The block added to the first prompt: [id] date title lines and a note; "" when none."""
    lines = [f"[{h.get('id')}] {str(h.get('occurred_at') or '')[:10]} {h.get('title') or ''}".rstrip() for h in hits]
    if not lines:
        return ""
    return ("Possibly related past work from Jezero (check with get_item before relying on it):\n"
            + "\n".join(lines))
