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

# Prose read for statements: a long chat segment holds about 60,000 characters of talk; reading
# all of it is what "across the whole segment" means, and one pass of a few regexes over it costs
# a few milliseconds.
SALIENT_CHARS = 60_000
# Two marks at least (an event and a name, news and a date...): one mark is everyday talk ("we
# had pasta", "on Friday").
MIN_SALIENCE = 2.0

# "Maya: ..." at the start of a line: a chat written with each speaker's name.
_SPEAKER = re.compile(r"^\s*([A-ZÀ-Ý][\w'’.-]{1,30}(?: [A-ZÀ-Ý][\w'’.-]{1,30})?):\s+", re.M)
_FIRST_PERSON = re.compile(r"\b(?:i|we|my|our|i'm|we're|i've|we've|i'll|we'll|me|us)\b")
# Events of a life or a plan, in the forms people report them: done ("adopted"), arranged
# ("booked"), starting ("I start"), changed ("fell through", "moved to").
_EVENT = re.compile(
    r"\b(?:adopt(?:ed)?|accept(?:ed)?|hired|signed up|sign(?:ed)? (?:a|the)|joined|join|quit|resign(?:ed)?|"
    r"promot(?:ed|ion)|retir(?:ed|ing)|engaged|married|wedding|divorc\w*|pregnant|born|"
    r"diagnos\w*|allergic|torn|broke(?:n)? (?:my|his|her|a)|surgery|physio\w*|injur\w*|"
    r"bought|sold|booked|book(?:ing)? (?:a|the)|ordered|rent(?:ed|ing)|lease|keys|"
    r"mov(?:e|ed|ing) (?:to|into|in|out|house|flat)|relocat\w*|"
    r"start(?:ed|ing|s)? (?:at|as|on|in|my|our|a|the|lessons|training|work)|first (?:day|shift|week)|new (?:job|role|position)|"
    r"offer|cancel(?:l?ed)?|postpon\w*|resched\w*|fell through|called off|moved to the|"
    r"calling (?:him|her|it|them)|named|visit(?:ing)?|coming (?:over|to|for)|landed|arriv\w*|staying|"
    r"picked|chose|decided|going to|planning|plan is|we'll|i'll|graduat\w*|passed|"
    r"got (?:a|an|the|my|our|engaged|married|promoted|the job|in)|lessons|teacher|"
    # the same in Spanish
    r"adoptamos|acept[ée]|empiezo|empec[ée]|nos mudamos|mudanza|me caso|boda|compr[ée]|vend[ií]|reserv[ée]|"
    r"reservamos|cancel[óo]|alérgic[oa])\b"
)
_NEWS = re.compile(r"\b(?:big news|good news|guess what|turns out|at last|finally|officially|"
                   r"it's official|update:|news:)|!")
_HEDGE = re.compile(r"\b(?:maybe|might|thinking of|no idea|not sure|i wonder|one day|some point|"
                    r"i need|i keep meaning|i just want|haha|sorry|honestly)\b")
_ORDINAL = re.compile(r"\b\d{1,2}(?:st|nd|rd|th)\b|\b\d{1,4}\b|\b(?:tomorrow|yesterday|today|tonight|next (?:week|month|year)|"
                      r"this (?:weekend|week|month))\b")
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
    budget = SALIENT_CHARS
    for order, text in messages:
        if budget <= 0:
            break
        text = text[:budget]
        budget -= len(text)
        speaker = None
        for line in text.splitlines():
            m = _SPEAKER.match(line)
            if m and m.group(1) in people:
                speaker, line = m.group(1), line[m.end():]
            for sentence in sentences(line):
                st = _score(sentence, speaker, order, people)
                if st is not None:
                    found.append(st)
    found.sort(key=lambda s: (-s.score, s.order))
    return found


def _score(sentence: str, speaker: str | None, order: int, people: set[str]) -> Statement | None:
    s = sentence.strip()
    if s.endswith("?") or len(s) < 20 or len(content_words(s)) < 3:
        return None
    low = s.lower()
    if _HEDGE.search(low):
        return None
    score = 0.0
    if _EVENT.search(low):
        score += 1.0 + (0.5 if _FIRST_PERSON.search(low) else 0.0)
    if _NEWS.search(low):
        score += 0.5
    names = tuple(dict.fromkeys(n for n in _CAPITALISED.findall(s)
                                if n not in people and n not in _NOT_NAMES and not _MONTH_DAY.fullmatch(n)))
    score += min(len(names), 2) * 0.5
    when = bool(_ORDINAL.search(low) or _MONTH_DAY.search(s))
    if when:
        score += 0.5
    if score < MIN_SALIENCE:
        return None
    return Statement(s, speaker, score, order, names, when)
