"""Text helpers every extractor uses: one-line clipping, words that say something, markdown
stripped, sentences of prose, the scaffolding an agent puts in the user's turn, and the language."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

ATOM_TEXT_LIMIT = 300  # below the schema's 400: an atom is a line to find, not a paragraph


_WS = re.compile(r"\s+")
FENCE = re.compile(r"```.*?(?:```|\Z)", re.S)
_MD_LEAD = re.compile(r"^(?:#{1,6}\s+|>\s*|[-*+•]\s+|\d{1,2}[.)]\s+|\[[ xX]\]\s+)+")
_MD_EMPH = re.compile(r"\*\*")
# `__bold words__`, not the underscores of `name__icontains` or `__init__`
_MD_UNDERLINE = re.compile(r"(?<![\w_])__([^_\s][^_\n]*\s[^_\n]*[^_\s])__(?![\w_])")
_MD_LINK = re.compile(r"\[([^\]\n]{1,200})\]\([^)\s]{1,500}\)")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z¿¡\"'`(\[])")
_INTERJECTION = re.compile(
    r"^(?:perfect|great|excellent|done|awesome|good news|all set|ok(?:ay)?|alright|sure|"
    r"perfecto|genial|listo|hecho|excelente|vale)\b[!.,:]*\s*",
    re.I,
)
_TOKEN = re.compile(r"[^\W\d_][\w.'’-]*[\w]|[^\W\d_]", re.U)

# "a", "no" and "de" occur in both languages and decide nothing, so neither list has them.
STOPWORDS_EN = frozenset(
    "the and is are was were to of in that it for with this you what how be not on can we have has do does "
    "will would should there their they an at from by or but if i i'm i've it's me my your our us so as "
    "all any some when where which who why these those then than them been being into about also just "
    "please could can't don't let's let what's that's there's here's i'd i'll you're we're doesn't isn't "
    "won't didn't wasn't aren't you'll we'll".split()
)
STOPWORDS_ES = frozenset(
    "el la los las que y en un una es por para con se lo como más pero del al está están qué cómo esto "
    "eso hay muy también ya quiero hacer puedes sobre cuando donde porque tiene son ser fue era le les nos "
    "mi tu su sus este esta estos estas hasta desde todo todos vamos hay necesito podemos ahora así sin "
    "entre cuál cual quién".split()
)
# Words too common in coding sessions to say what one is about.
FILLER = frozenset(
    "file files code let now need check run running using use used make sure want like just thanks thank "
    "here there ok okay yes also get got see look looks try trying going able new way thing things fix "
    "fixed fixes something anything everything help work works working done update updated change changed "
    "add added create created first next last still really actually well good great perfect right one two "
    "test tests issue issues error errors problem problems project session summary summarize explain give "
    "show tell find found following follow without within across each other more most much many very "
    "hola gracias favor archivo código usar hacer".split()
)
_ACKS = frozenset(
    "ok okay k yes y yep yeah no nope continue go go on go ahead proceed do it thanks thank you thx sure "
    "great perfect lgtm next done good nice cool sí si vale dale sigue continúa continua adelante gracias "
    "hazlo perfecto listo bien".split()
)
# Text an agent or its harness puts in the user's turn: instructions, context, slash commands,
# hook output. Connectors drop or mark most of it; what reaches a summarizer as a "prompt" is
# skipped here too. A prompt that merely starts with an HTML tag is not scaffolding.
_SCAFFOLDING = (
    "# AGENTS.md instructions", "Caveat: The messages below were generated",
    "This session is being continued from a previous conversation", "[Request interrupted", "[image", "Warmup",
)
_SCAFFOLDING_TAG = re.compile(
    r"<(?:environment_context|user_instructions|permissions instructions|INSTRUCTIONS|turn_aborted|"
    r"subagent_notification|skill|collaboration_mode|personality_spec|command-name|command-message|command-args|"
    r"command-contents|local-command-stdout|local-command-stderr|local-command-caveat|system-reminder|bash-input|"
    r"bash-stdout|bash-stderr|task-notification|user-prompt-submit-hook|session-start-hook|ide_opened_file|"
    r"ide_selection|ide_diagnostics|user-memory-input)[\s>]"
)


def squash(text: str) -> str:
    return _WS.sub(" ", text).strip()


def one_line(text: str, limit: int) -> str:
    """One line of at most `limit` characters, cut at a word boundary with an ellipsis."""
    return cut_at_word(squash(text), limit)


def cut_at_word(text: str, limit: int) -> str:
    """At most `limit` characters, cut at a word boundary with an ellipsis."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit * 0.6:
        cut = cut[:space]
    return cut.rstrip(" ,;:-—(") + "…"


def cut(text: str, limit: int) -> str:
    """`text` as written when it fits (verbatim matters for errors and commands), else clipped."""
    return text if len(text) <= limit and "\n" not in text else one_line(text, limit)


def content_words(text: str) -> list[str]:
    return [
        w for w in (t.lower().replace("’", "'") for t in _TOKEN.findall(text))
        if len(w) > 1 and w not in STOPWORDS_EN and w not in STOPWORDS_ES and w not in FILLER
    ]


_SPECIFIC = re.compile(r"[`/\d]|[A-Za-z0-9][_.][A-Za-z0-9]|[a-z][A-Z]|[A-Z]{2}")


def is_specific(text: str) -> bool:
    """Names something: a `code span`, a path, a digit, an identifier (`a_b`, `a.b`, camelCase) or
    an acronym."""
    return bool(_SPECIFIC.search(text))


def strip_markdown(line: str) -> str:
    line = _MD_EMPH.sub("", _MD_LEAD.sub("", line.strip()))
    if "__" in line:
        line = _MD_UNDERLINE.sub(r"\1", line)
    return _MD_LINK.sub(r"\1", line).strip()


def sentences(text: str, headings: bool = True) -> Iterator[str]:
    """Prose sentences of a message: code blocks and tables left out, markdown marks removed
    (and headings, unless asked for)."""
    for line in FENCE.sub("\n", text).splitlines():
        line = line.strip()
        if not line or line.startswith("|") or not any(c.isalnum() for c in line):
            continue
        if not headings and line.startswith("#"):
            continue
        line = strip_markdown(line)
        for part in _SENTENCE_END.split(line):
            part = part.strip()
            if part:
                yield part


def is_scaffolding(text: str) -> bool:
    head = text.lstrip()
    return not head or head.startswith(_SCAFFOLDING) or bool(_SCAFFOLDING_TAG.match(head))


def is_ack(text: str) -> bool:
    return squash(re.sub(r"[^\w\s']", " ", text.lower())) in _ACKS


# -- languages ----------------------------------------------------------------------------------


def detect_language(user_texts: Iterable[str], assistant_texts: Iterable[str]) -> str | None:
    """"en" or "es" by stopword counts (what the person typed counts double), None without
    enough prose to tell. Other languages are not told apart."""
    en = es = 0
    for weight, texts in ((2, user_texts), (1, assistant_texts)):
        budget = 8_000  # enough to decide; keeps a long segment fast
        for text in texts:
            sample = FENCE.sub(" ", text[:budget]).lower()
            budget -= len(sample)
            for w in _TOKEN.findall(sample):
                if w in STOPWORDS_EN:
                    en += weight
                elif w in STOPWORDS_ES:
                    es += weight
            if budget <= 0:
                break
    if en + es < 3:
        return None
    return "es" if es > en else "en"
