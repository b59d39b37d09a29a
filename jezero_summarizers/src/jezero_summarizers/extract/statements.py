"""Statements in prose: decisions, fixes, settings, numbers, todos, and the items of a plan."""

from __future__ import annotations

import json
import re

from .candidates import Candidates
from .text import _INTERJECTION, FENCE, is_specific, sentences, strip_markdown


# A stated choice. Strong markers say so outright; weak ones ("instead of", "rather than") are as
# common in explanations as in choices, so they count only from the person or the final answer.
_DECISION = re.compile(
    r"\blet'?s (?:use|go with|switch|stick with|keep|drop|move to|adopt|replace|not)\b"
    r"|\bwe(?:'ll| will| should| are going to|'re going to) (?:use|go with|switch|keep|stick|adopt|move|drop)\b"
    r"|\b(?:decided|decide to)\b|\bthe decision (?:is|was)\b|\bdecision:"
    r"|\b(?:won'?t|will not|don'?t|do not) use\b"
    r"|\bvamos a (?:usar|utilizar|ir con|quedarnos|cambiar|dejar)\b|\bvamos con\b|\bdecid(?:imos|í|ido|ió|ieron)\b"
    r"|\busaremos\b|\bmejor (?:usar|utilizar)\b|\bnos quedamos con\b|\bopt(?:amos|é) por\b"
    r"|\bla decisión (?:es|fue)\b|\bno (?:usar|vamos a usar)\b",
)
_WEAK_DECISION = re.compile(
    r"\bgo(?:ing)? with\b|\binstead of\b|\brather than\b|\bswitch(?:ed|ing)? (?:to|from)\b|\bopt(?:ed|ing)? for\b"
    r"|\b(?:chose|chosen)\b|\ben (?:lugar|vez) de\b",
)
# A sentence that opens with "Fixed" reports a fix, whatever else it says ("Fixed: X now uses Y instead of Z").
_FIX_OPENS = re.compile(r"(?:fixed|resolved|solved|arreglad[oa]s?|solucionad[oa]s?|corregid[oa]s?|resuelt[oa]s?)\b")
# "38 s instead of 4 min", "2x rather than 3x": a comparison of values, not a choice.
_COMPARISON = re.compile(r"\b(?:instead of|rather than|en (?:lugar|vez) de)\s+[~≈<>]?\s?\d")
# How the final answer states what is now in place: "Search now uses Typesense", "State management
# moved from Redux Toolkit to Zustand", "CI is back on GitHub-hosted runners". It is the decision
# that stands, even when nobody said "let's".
_OUTCOME_DECISION = re.compile(
    r"\b(?:switched|moved|migrated|replaced|swapped)\b(?: [^\s.;:]+){0,5}? (?:to|from|with|by)\b"
    r"|\bnow (?:uses?|runs? (?:on|in|through)|goes? through|lives? in|(?:is|are) (?:done|handled|generated|issued|"
    r"served|built|sent|stored|scheduled|rendered) (?:by|with|through|via|in|on))\b"
    r"|\b(?:is|are) now (?:a|an|the|on|in|handled|done|generated|issued|served|built|sent|stored|scheduled)\b"
    r"|\b(?:is|are) back on\b"
    r"|\bahora (?:usa|usamos|se hace|va|corre|se genera|se envía)\b"
    r"|\b(?:cambiad|migrad|movid|sustituid|reemplazad)[oa]s? (?:a|de|por)\b|\bpasamos a\b",
)
_NARRATION = re.compile(
    r"^(?:let me|i'll|i will|i'm going to|now i|next,? i|voy a|déjame)\b", re.I
)
_FIX = re.compile(
    r"\b(?:fixed|resolved|solved|the fix (?:is|was)|root cause|caused by|this fixes|that fixed|now (?:passes|works|pass)"
    r"|the (?:problem|issue|bug|error) (?:was|is) (?:that|caused|due)|was due to"
    r"|arreglad[oa]s?|solucionad[oa]s?|corregid[oa]s?|resuelt[oa]s?|se arregló|se solucionó|la causa (?:era|es)"
    r"|el (?:problema|error|fallo) (?:era|estaba))\b",
)
_CONFIG_SPAN = re.compile(r"`([A-Za-z_][\w.-]{0,60}(?:\s*=\s*|:\s+)[^`\n]{1,80})`")
_ENV_ASSIGN = re.compile(r"(?<![\w$-])([A-Z][A-Z0-9_]{2,}=(?:\"[^\"\n]{0,80}\"|'[^'\n]{0,80}'|[^\s;&|]{1,80}))")
_SET_TO = re.compile(r"\bset (?:the )?`?[\w.-]+`? (?:to|=)\s*\S|\bconfigur(?:ed|e) `|\bestablec(?:er|imos|ido) `?[\w.-]+`? (?:a|en)\b")
_NUMBER = re.compile(
    r"(?:[$€£]\s?\d[\d,]*(?:\.\d+)?(?:\s?[kKmMbB]\b)?(?:\s?/\s?[A-Za-z]+)?"
    r"|(?<![\w.])\d[\d,]*(?:\.\d+)?\s?(?:%|(?:ms|s|sec|secs|seconds?|min|mins|minutes?|h|hrs?|hours?|days?|weeks?|"
    r"months?|KB|MB|GB|TB|KiB|MiB|GiB|kB|tokens|rps|req/s|qps|fps|px|USD|EUR|dollars|euros|x|"
    r"segundos?|minutos?|horas?|días?|semanas?|meses)\b))"
)
_TODO_LINE = re.compile(r"^\s*(?:[-*]\s*)?\[ \]\s+(.+)|\b(?:TODO|FIXME)\b[:\s]+(.+)|\bpendiente[s]?:\s*(.+)", re.M)
_NEXT_STEPS = re.compile(r"next steps?|follow[- ]ups?|remaining|still to do|open questions|próximos pasos|pendientes?")
_PLAN_LINE = re.compile(r"^\s*\[(\w[\w -]*)\]\s+(.+)$")
_DONE = {"completed", "complete", "done", "finished"}


def todo_items(text: str) -> list[tuple[str, bool]]:
    """(item, done) from a todo / plan tool call: `[status] content` lines, or the JSON input
    (`todos` with `content`, or `plan` with `step`)."""
    t = text.strip()
    items: list[tuple[str, bool]] = []
    if t.startswith("{"):
        try:
            data = json.loads(t)
        except ValueError:
            data = None
        if isinstance(data, dict):
            for entry in data.get("todos") or data.get("plan") or []:
                if isinstance(entry, dict):
                    content = entry.get("content") or entry.get("step") or entry.get("text")
                    if isinstance(content, str) and content.strip():
                        items.append((content.strip(), str(entry.get("status", "")).lower() in _DONE))
            return items
    for line in t.splitlines():
        m = _PLAN_LINE.match(line)
        if m:
            items.append((m.group(2).strip(), m.group(1).strip().lower() in _DONE))
    return items


# (name, words one of which the pattern needs, pattern): `in` on the lower-cased message rules
# most patterns out before they run. The prose patterns are written in lower case and run on
# lower-cased text: `re` is about three times slower with IGNORECASE.
_GATES = (
    ("decision", ("let", "we'll", "we will", "we should", "going to", "decid", "decision", "n't use", "not use",
                  "vamos", "usaremos", "mejor ", "nos quedamos", "opt", "no usar"), _DECISION),
    ("weak", ("go with", "going with", "instead of", "rather than", "switch", "opt", "chose", "lugar de", "vez de"),
     _WEAK_DECISION),
    ("outcome", ("switch", "moved", "migrat", "replac", "swapp", "now ", "back on", "ahora", "cambiad", "migrad",
                 "movid", "sustituid", "reemplazad", "pasamos"), _OUTCOME_DECISION),
    ("fix", ("fix", "resolv", "solv", "root cause", "caused by", "now pass", "now work", "due to", "problem",
             "issue", "bug", "error", "arreglad", "solucionad", "corregid", "resuelt", "arregló", "solucionó", "la causa",
             "el problema", "el fallo"), _FIX),
    ("config", ("`",), _CONFIG_SPAN),
    ("set", ("set ", "configur", "establec"), _SET_TO),
    ("number", None, _NUMBER),
    ("env", ("=",), _ENV_ASSIGN),
    ("next", ("next step", "follow", "remaining", "still to do", "open question", "próximos", "pendiente"), _NEXT_STEPS),
)


_CASED = {"config", "number", "env"}  # patterns that look at case: run on the text as written
_DIGIT = re.compile(r"\d")


def _statements(atoms: Candidates, text: str, order: int, weight: float, final: bool) -> None:
    """Decisions, fixes, settings, numbers and todos stated in one message's prose. Each pattern
    runs once on the whole message first: most messages state none of these."""
    body = FENCE.sub("\n", text)
    low = body.lower()
    skip = set() if final else {"next", "outcome"}  # the final answer's own statements
    if weight < 2.0:
        skip.add("weak")  # an explanation mid-session, not a choice
    found = {
        name for name, keys, rx in _GATES
        if name not in skip and (keys is None or any(k in low for k in keys)) and rx.search(body if name in _CASED else low)
    }
    if found:
        after_heading = False
        for sentence in sentences(body):
            s = _INTERJECTION.sub("", sentence)
            sl = s.lower()
            if len(s) < 12:
                after_heading = "next" in found and bool(_NEXT_STEPS.search(sl))
                continue
            question = s.endswith("?")
            if after_heading and not question:
                atoms.add("todo", s, 1.5 + weight, order)
                continue
            after_heading = "next" in found and s.endswith(":") and bool(_NEXT_STEPS.search(sl))
            if question or _NARRATION.match(s):
                continue
            specific = 0.5 if is_specific(s) else 0.0
            if "fix" in found and _FIX_OPENS.match(sl):  # "Fixed: X now uses Y instead of Z" reports a fix
                atoms.add("fix", s, weight - 0.5 + 2 * specific, order)
            elif "decision" in found and _DECISION.search(sl):
                atoms.add("decision", s, weight + 1.0 + specific, order)
            elif "weak" in found and _WEAK_DECISION.search(sl) and not _COMPARISON.search(sl):
                atoms.add("decision", s, weight - 1.0 + specific, order)
            elif "outcome" in found and _OUTCOME_DECISION.search(sl) and not sl.startswith(("fixed", "arreglad")):
                atoms.add("decision", s, weight + 1.0 + specific, order)
            elif "fix" in found and (m := _FIX.search(sl)) and m.start() < 40:
                atoms.add("fix", s, weight - 0.5 + 2 * specific, order)
            elif ("config" in found and _CONFIG_SPAN.search(s)) or ("set" in found and _SET_TO.search(sl)):
                atoms.add("config", s, weight, order)
            elif "number" in found and _DIGIT.search(s) and _NUMBER.search(s):
                atoms.add("number", s, weight - 0.5 + specific, order)
            if "env" in found:
                for m in _ENV_ASSIGN.finditer(s):
                    atoms.add("config", m.group(1), weight, order)
    if "todo" in low or "fixme" in low or "[ ]" in body or "pendiente" in low:
        for m in _TODO_LINE.finditer(body):
            item = next(g for g in m.groups() if g)
            atoms.add("todo", strip_markdown(item), weight + 0.5, order)
