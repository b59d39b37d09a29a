"""What people said that someone will ask about later: the sentences of a conversation that state
a fact or a plan (a name, an employer, a date, a move, a diagnosis), chosen across the whole
segment rather than from its start.

A long chat is mostly small talk; the fact asked about weeks later ("we adopted a greyhound, we're
calling him Biscuit") is one sentence in the middle. Without a model the summarizer cannot tell
meaning, but such sentences carry marks that small talk carries fewer of at once: a first-person
event ("we adopted", "I accepted", "I signed up", "we're moving"), news ("big news", "turns out",
"at last", "!"), names that are not the speakers', and dates or numbers. Each mark adds to a
sentence's score; a sentence needs MIN_SALIENCE to count. Questions, hedges ("maybe", "thinking
of") and greetings do not state anything.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .text import content_words, sentences

# Prose read for statements, shared out over every message of the segment so that its end counts
# as much as its start: each message gets an equal part (at least MESSAGE_CHARS). A chat's lines
# are short and read whole; a long answer gives its head. Reading all 60,000 characters of a
# segment that is nothing but discussion cost 45 ms more (offline_speed.py); this bound, about 15.
SALIENT_CHARS = 20_000
MESSAGE_CHARS = 400
# Two marks at least (an event and a name, news and a date...): one mark is everyday talk ("we
# had pasta", "on Friday").
MIN_SALIENCE = 2.0

# A statement said again in the same segment is routine ("dentist on Tuesday", "... on Friday").
REPEAT_COST = 1.0
# "Maya: ..." at the start of a line: a chat written with each speaker's name.
_SPEAKER = re.compile(r"^\s*([A-ZÀ-Ý][\w'’.-]{1,30}(?: [A-ZÀ-Ý][\w'’.-]{1,30})?):\s+", re.M)
_FIRST_PERSON = re.compile(r"\b(?:i|we|my|our|i'm|we're|i've|we've|i'll|we'll|me|us)\b")
# Events of a life or a plan, in the forms people report them. Strong ones are news by themselves
# (an adoption, a diagnosis, a job offer taken, a plan called off); weak ones are as often routine
# ("I booked the car in", "we went to the pub") and need another mark.
_STRONG_EVENT = re.compile(
    r"\b(?:adopt(?:ed)?|accepted|hired|signed up|quit|resign(?:ed)?|promot(?:ed|ion)|retir(?:ed|ing)|engaged|"
    r"married|wedding|divorc\w*|pregnant|born|diagnos\w*|allergic|torn|surgery|fractur\w*|"
    r"sold|mov(?:e|ed|ing) (?:to|into|house|flat|out)|relocat\w*|picked up the keys|first (?:day|shift|week)|"
    r"new (?:job|role|position)|the offer|fell through|called off|cancel(?:l?ed)? on|postpon\w*|"
    r"calling (?:him|her|it|them)|named (?:him|her|it|them)|lessons|graduat\w*|"
    r"adoptamos|me caso|boda|nos mudamos|alérgic[oa])\b"
)
_WEAK_EVENT = re.compile(
    r"\b(?:accept|join(?:ed)?|broke(?:n)? (?:my|his|her|a)|physio\w*|injur\w*|bought|booked|book(?:ing)? (?:a|the)|"
    r"ordered|rent(?:ed|ing)|keys|start(?:ed|ing|s)? (?:at|as|on|in|my|our|a|the|training|work)|offer|"
    r"cancel(?:l?ed)?|resched\w*|moved to|visit(?:ing)?|coming (?:over|to|for)|landed|arriv\w*|staying|"
    r"picked|chose|decided|going to|planning|plan is|we'll|i'll|passed|went to|birthday|present|gift|teacher|"
    r"got (?:a|an|the|my|our|in)|"
    r"acept[ée]|empiezo|empec[ée]|mudanza|compr[ée]|vend[ií]|reserv[ée]|reservamos|cancel[óo])\b"
)
_NEWS = re.compile(r"\b(?:big news|good news|guess what|turns out|at last|finally|officially|"
                   r"it's official|update:|news:)|!")
_HEDGE = re.compile(r"\b(?:maybe|might|thinking of|no idea|not sure|i wonder|one day|some point|"
                    r"i need|i keep meaning|i just want|haha|sorry|honestly)\b")
# A date or an amount said outright ("the 16th of June", "in 2027", "six weeks"), and a looser time
# ("on Friday", "next month"), which small talk is full of.
_DATE = re.compile(r"\b\d{1,2}(?:st|nd|rd|th)\b|\b\d+\b|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|"
                   r"eleven|twelve|a few) (?:days|weeks|months|years)\b")
_TIME = re.compile(r"\b(?:tomorrow|yesterday|today|tonight|next (?:week|month|year|spring|summer|autumn|winter)|"
                   r"this (?:weekend|week|month)|in the (?:spring|summer|autumn|winter))\b")
_MONTH_DAY = re.compile(r"\b(?:January|February|March|April|May|June|July|August|September|October|November|"
                        r"December|Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)\b")
_CAPITALISED = re.compile(r"(?<![.!?:]\s)(?<!^)\b[A-ZÀ-Ý][\w'’-]*[a-zà-ÿ][\w'’-]*")
_NOT_NAMES = frozenset("I I'm I've I'll I'd OK Ok Mum Mom Dad Haha Yes No Oh".split())


@dataclass
class Statement:
    text: str  # the sentence as said, without the speaker's name
    speaker: str | None
    score: float
    order: int  # the block it was said in
    names: tuple[str, ...]  # the names it holds (not the speakers')
    when: bool  # it holds a date or a number


def speakers(texts: list[str]) -> set[str]:
    """The names that open lines as `Name:` in at least two lines: the people talking."""
    counts: dict[str, int] = {}
    for text in texts:
        for m in _SPEAKER.finditer(text):
            counts[m.group(1)] = counts.get(m.group(1), 0) + 1
    return {n for n, c in counts.items() if c >= 2}


def statements(messages: list[tuple[int, str]], people: set[str] | None = None) -> list[Statement]:
    """The sentences of `messages` ((order, text), in order) that state a fact or a plan, best
    first (on a tie, the earlier one). `people` are the speakers' names, which name nothing."""
    people = people if people is not None else speakers([t for _, t in messages])
    found: list[Statement] = []
    share = max(MESSAGE_CHARS, SALIENT_CHARS // max(len(messages), 1))
    budget = SALIENT_CHARS
    for order, text in messages:
        if budget <= 0:
            break
        text = text[:min(share, budget)]
        budget -= len(text)
        # Lines grouped by who says them, each group split into sentences once.
        speaker, chunk = None, []
        for line in [*text.splitlines(), None]:
            m = _SPEAKER.match(line) if line else None
            if line is None or (m and m.group(1) in people):
                for sentence in sentences("\n".join(chunk)) if chunk else ():
                    st = _score(sentence, speaker, order, people)
                    if st is not None:
                        found.append(st)
                if line is None:
                    break
                speaker, chunk = m.group(1), [line[m.end():]]
            else:
                chunk.append(line)
    return _novel(found)


def routine_key(sentence: str) -> str:
    """A sentence without its days, dates and numbers: "a dentist appointment on Tuesday" and
    "... on Friday" are one routine."""
    return _MASK.sub("#", sentence.lower()).strip(" .!")


_MASK = re.compile(r"\d+(?:st|nd|rd|th)?|\b(?:january|february|march|april|may|june|july|august|september|october|"
                   r"november|december|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b")


def _novel(found: list[Statement]) -> list[Statement]:
    """Each statement once, best first (on a tie, the earlier). A statement said again in the
    segment (the same words, another day) is routine, not news: it loses REPEAT_COST per repeat."""
    groups: dict[str, list[Statement]] = {}
    for st in found:
        groups.setdefault(routine_key(st.text), []).append(st)
    kept = []
    for same in groups.values():
        first = same[0]
        first.score -= REPEAT_COST * (len(same) - 1)
        if first.score >= MIN_SALIENCE:
            kept.append(first)
    kept.sort(key=lambda s: (-s.score, s.order))
    return kept


def _score(sentence: str, speaker: str | None, order: int, people: set[str]) -> Statement | None:
    """The sentence's marks (None for what states nothing: a question, a hedge, a fragment). The
    cheap marks first: most sentences of a chat score under MIN_SALIENCE and only count as a
    possible repeat."""
    s = sentence.strip()
    if s.endswith("?") or len(s) < 20:
        return None
    low = s.lower()
    if _HEDGE.search(low):
        return None
    score = 0.0
    strong = _STRONG_EVENT.search(low)
    if strong or _WEAK_EVENT.search(low):
        score += (1.5 if strong else 1.0) + (0.5 if _FIRST_PERSON.search(low) else 0.0)
    if _NEWS.search(low):
        score += 0.5
    dated = bool(_DATE.search(low))
    when = dated or bool(_TIME.search(low) or _MONTH_DAY.search(s))
    score += 1.0 if dated else 0.5 if when else 0.0
    names: tuple[str, ...] = ()
    if score + 1.0 >= MIN_SALIENCE:  # two names could still make it
        names = tuple(dict.fromkeys(n for n in _CAPITALISED.findall(s)
                                    if n not in people and n not in _NOT_NAMES and not _MONTH_DAY.fullmatch(n)))
        score += min(len(names), 2) * 0.5
    if score >= MIN_SALIENCE and len(content_words(s)) < 3:
        return None
    return Statement(s, speaker, score, order, names, when)
