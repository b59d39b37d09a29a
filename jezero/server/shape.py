"""Answers sized for an agent's context: compact fields, clipped text, a hard cap per answer.

Whatever the library holds, one tool call must not flood the agent that asked. Hits carry a
clipped summary (get_item has the whole one), an item's original transcript comes only on
request and clipped, and every answer is cut to MAX_ANSWER_CHARS of JSON, dropping whole
entries from the end of its list with a note that says so.
"""

from __future__ import annotations

import json
from typing import Any

# ~6k tokens: enough for 50 hits with clipped summaries, small next to any agent's context.
MAX_ANSWER_CHARS = 24_000
# A hit's summary is for choosing what to open: two or three sentences are enough.
HIT_SUMMARY_CHARS = 320
# Titles are one line by design; the cap only guards against a summarizer that ignored that.
HIT_TITLE_CHARS = 200
# The transcript behind an item can be 60,000 characters; the head is what an agent can use
# (get_item's summary, questions and atoms already condense the whole).
MAX_ORIGINAL_CHARS = 12_000

# Fields of a hit worth an agent's tokens, in this order (session ids and hashes are not).
HIT_FIELDS = ("id", "title", "summary", "project", "source", "agent", "occurred_at", "score", "explain")
# Bookkeeping fields of a stored item that mean nothing to an agent.
ITEM_HIDDEN = {"uid", "content_hash", "summary_schema", "project_guess", "device_project", "ingested_at",
               "updated_at"}


def dumps(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)


def shorten(text: str | None, limit: int) -> str | None:
    """At most `limit` characters, an ellipsis marking a cut (a hit's title and summary)."""
    if text is None or len(text) <= limit:
        return text
    return text[: limit - 1].rstrip() + "…"


def hit(h: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for key in HIT_FIELDS:
        if key not in h or h[key] is None:
            continue
        value = h[key]
        if key == "summary":
            value = shorten(value, HIT_SUMMARY_CHARS)
        elif key == "title":
            value = shorten(value, HIT_TITLE_CHARS)
        elif key == "score" and isinstance(value, float):
            value = round(value, 4)
        out[key] = value
    return out


def item(it: dict[str, Any]) -> dict[str, Any]:
    """A full item for get_item, without bookkeeping, with its original clipped if present."""
    out = {k: v for k, v in it.items() if k not in ITEM_HIDDEN and v is not None and v != ""}
    original = out.get("original")
    if isinstance(original, str) and len(original) > MAX_ORIGINAL_CHARS:
        out["original"] = original[:MAX_ORIGINAL_CHARS]
        out["original_note"] = (f"original clipped: the first {MAX_ORIGINAL_CHARS} of {len(original)} characters; "
                                "the summary, questions and atoms cover the whole session")
    return out


def fit(answer: dict[str, Any], list_key: str, what: str = "items") -> dict[str, Any]:
    """Drop entries from the end of answer[list_key] until the JSON is within MAX_ANSWER_CHARS,
    and say how many were left out."""
    return fitted(answer, list_key, what)[0]


def fitted(answer: dict[str, Any], list_key: str, what: str = "items") -> tuple[dict[str, Any], str]:
    """fit, and the answer's JSON text: measuring the answer already made it, and a tool result
    carries it (mcp_app.result), so it is not made twice."""
    text = dumps(answer)
    if len(text) <= MAX_ANSWER_CHARS:
        return answer, text
    answer = _cut(answer, list_key, what)
    return answer, dumps(answer)


def _cut(answer: dict[str, Any], list_key: str, what: str) -> dict[str, Any]:
    entries = answer.get(list_key)
    if not isinstance(entries, list):
        return answer
    total = len(entries)
    sizes = [len(dumps(e)) + 1 for e in entries]
    base = len(dumps({**answer, list_key: []})) + 200  # room for the note
    keep, used = 0, base
    while keep < total and used + sizes[keep] <= MAX_ANSWER_CHARS:
        used += sizes[keep]
        keep += 1
    answer = {**answer, list_key: entries[:keep]}
    answer["note"] = _join(answer.get("note"), (
        f"{total - keep} more {what} left out to keep this answer short; "
        "ask for fewer (limit), narrow the query, or add a filter"))
    return answer


def fit_item(answer: dict[str, Any]) -> dict[str, Any]:
    """get_item's answer within MAX_ANSWER_CHARS: shorten the original, then the atoms."""
    if len(dumps(answer)) <= MAX_ANSWER_CHARS:
        return answer
    answer = dict(answer)
    original = answer.get("original")
    if isinstance(original, str):
        over = len(dumps(answer)) - MAX_ANSWER_CHARS + 200
        keep = max(0, len(original) - over)
        answer["original"] = original[:keep]
        answer["original_note"] = (f"original clipped to {keep} characters to keep this answer short; "
                                   "the summary, questions and atoms cover the whole session")
    if len(dumps(answer)) > MAX_ANSWER_CHARS and isinstance(answer.get("atoms"), list):
        answer = fit(answer, "atoms", "atoms")
    if len(dumps(answer)) > MAX_ANSWER_CHARS and isinstance(answer.get("summary"), str):
        answer["summary"] = shorten(answer["summary"], MAX_ANSWER_CHARS // 2)
    return answer


def _join(a: str | None, b: str) -> str:
    return f"{a} {b}" if a else b


# recall: a window message is context, not the record; the whole message is in get_item's original.
WINDOW_TEXT_CHARS = 600


def recall(answer: dict[str, Any]) -> dict[str, Any]:
    """recall's answer for an agent: window messages clipped, then whole windows and hits dropped
    from the end until it fits."""
    out = dict(answer)
    out["windows"] = [{**w, "messages": [{**m, "text": shorten(m.get("text"), WINDOW_TEXT_CHARS)}
                                         for m in w.get("messages", [])]}
                      for w in answer.get("windows", [])]
    out = fit(out, "windows", "windows")
    if len(dumps(out)) > MAX_ANSWER_CHARS:
        out = fit(out, "hits", "hits")
    return out
