"""What can be lifted from a transcript without a model: the requests, the outcome, and candidate
atoms (errors, commands, files, decisions, fixes, settings, numbers, todos), each copied verbatim
from the blocks and scored. Pure functions over blocks; the offline summarizer composes them.

Everything here reads `Block`s as connectors make them: a shell tool call's text is the command
(or its JSON input), a file tool's text is the path (or its JSON input), a tool result carries the
tool's name and `is_error`. Nothing depends on how the pipeline renders a segment's text."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from jezero.models import Block

ATOM_TEXT_LIMIT = 300  # below the schema's 400: an atom is a line to find, not a paragraph
# Prose read for decisions, fixes, settings, numbers and paths: the requests first, then the final
# answer, then the other answers from the newest back. A segment that is all discussion would
# otherwise cost three times a typical one; twelve atoms never need more than this.
PROSE_CHARS = 24_000
ERROR_LINE_LIMIT = 240

# Results that are reports or file contents, not program output: error words in them are prose or code.
QUIET_ACTIONS = frozenset({"read", "edit", "write", "search", "plan", "subagent", "fetch"})

# -- text helpers -------------------------------------------------------------------------------

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


def clip(text: str, limit: int) -> str:
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
    return text if len(text) <= limit and "\n" not in text else clip(text, limit)


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


# Lines a person pastes rather than writes: indented (stack frames, logs, code), frames and
# `at ...` lines, elided parts.
_PASTED = re.compile(r"^(?: {4,}|\t)\S|^\s*(?:File \"|at \S|\.\.\.\s*$)")


@functools.lru_cache(maxsize=64)  # read for the title, the summary, the atoms and the questions
def request_prose(text: str, errors: bool = False) -> str:
    """What the person wrote, without what they pasted: code blocks, tracebacks (with the log
    line above one), indented lines, log lines with a timestamp, lines that open with an error
    (`Error: ...`, `ValueError: ...`) and a lone line between two pasted parts ("This error is
    located at:"). `errors`: keep the error lines, and a traceback's exception, where they were."""
    body = FENCE.sub("\n", text)
    if _TB_HEAD in body:
        for start, end, exc in reversed(tracebacks(body)):
            above = body.rfind("\n", 0, max(start - 1, 0)) + 1 if start > 0 else start
            if start > 0 and body[above:start - 1].strip() and not body[above:start - 1].rstrip().endswith(":"):
                start = above  # `Internal Server Error: /webhooks/` logged with the traceback
            body = body[:start] + "\n" + (exc or "") + "\n" + body[end + 1:]
    lines = body.splitlines()
    pasted, error = [], []
    for line in lines:
        _, shown = log_body(line)
        error.append(bool(shown and _ERROR_STRONG.match(shown) and not _SENTENCE_END.search(shown[:-1])))
        pasted.append(bool(line.strip()) and bool(_PASTED.match(line) or _TIMESTAMP.match(line) or error[-1]))
    filled = [i for i, line in enumerate(lines) if line.strip()]
    for n, i in enumerate(filled):
        if 0 < n < len(filled) - 1 and lines[i].rstrip().endswith(":") and pasted[filled[n - 1]] and pasted[filled[n + 1]]:
            pasted[i] = True
    return "\n".join(line for line, p, e in zip(lines, pasted, error) if not p or (errors and e)).strip()


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


# -- candidates ---------------------------------------------------------------------------------


@dataclass
class Candidate:
    type: str
    text: str
    score: float
    order: int  # where it first appeared: ties go to the earlier one
    tag: str = ""  # for errors: "warning", "generic" or "weak" (see ErrorLine)
    base: float = 0.0  # the best score it was seen with
    bonus: float = 0.0  # for being seen again
    counted: bool = True  # seen at least once in a way that counts (not only in a listing)


_SHELL_COMMENT = re.compile(r"\s+#[^'\"\n]*$")
REPEAT_BONUS, MAX_ERROR_BONUS = 0.5, 1.0  # a line seen again counts more (an error, up to a point)


@dataclass
class Candidates:
    """Atom candidates by type, de-duplicated on their normalised text; a repeat raises the score
    (not a trivial one's, and an error's only up to a point: a log repeats its errors)."""

    by_key: dict[tuple[str, str], Candidate] = field(default_factory=dict)

    def add(self, type_: str, text: str, score: float, order: int, tag: str = "", repeat: bool = True) -> None:
        """`repeat=False`: a sighting that raises no score by itself (a path that a listing shows)."""
        text = text.strip()
        if len(text) < 3:
            return
        if len(text) > ATOM_TEXT_LIMIT:
            text = clip(text, ATOM_TEXT_LIMIT)
        if type_ == "error":
            key = (type_, error_key(text))
        elif type_ == "command" and "#" in text:  # `pytest -q  # run 2` is `pytest -q`
            key = (type_, squash(_SHELL_COMMENT.sub("", text)).lower().strip(" .:;,`"))
        else:
            key = (type_, squash(text).lower().strip(" .:;,`"))
        seen = self.by_key.get(key)
        if seen is None:
            self.by_key[key] = Candidate(type_, text, score, order, tag, score, counted=repeat)
            return
        seen.base = max(seen.base, score)
        if repeat and seen.counted and seen.base >= 1.0:  # a repeated trivial `ls` stays trivial
            seen.bonus += REPEAT_BONUS
        if repeat and not seen.counted:  # its place is where it counted first
            seen.order, seen.counted = order, True
        seen.score = seen.base + (min(seen.bonus, MAX_ERROR_BONUS) if type_ == "error" else seen.bonus)
        if seen.tag and not tag:
            seen.tag = ""

    def of(self, type_: str) -> list[Candidate]:
        found = [c for c in self.by_key.values() if c.type == type_]
        return sorted(found, key=lambda c: (-c.score, c.order))


# -- errors -------------------------------------------------------------------------------------

_ERRNO = r"E(?:NOENT|ACCES|PERM|EXIST|NOSPC|ADDRINUSE|CONNREFUSED|CONNRESET|TIMEDOUT|NOTFOUND|AI_AGAIN|MFILE|NOTDIR|ISDIR|PIPE|NOMEM|NOTEMPTY)"
_ERROR_STRONG = re.compile(
    r"^\s*(?i:error|fatal|panic)(?:\[[^\]\n]{1,80}\])?\s*:"  # error: / Error: / error[E0382]: / fatal: / PANIC:
    r"|^\s*(?:Uncaught\s+)?(?:[A-Za-z_]\w*\.)*_*(?:[A-Z][A-Za-z0-9_]*)?(?:Error|Exception)\b(?=:|\s*$)"  # (x.)ValueError: / Error:
    r"|(?<![\w-])_*[A-Z][A-Za-z0-9_]*(?:Error|Exception)\b(?=:|\s*$)"  # ... raised ValueError: ...
    r"|^\s*(?:FAILED|FAIL|ERROR|ERR!)\b"  # pytest, jest, go test
    r"|\bnpm ERR!|\berror TS\d+|:\d+(?::\d+)?:\s*(?:fatal )?error\b"  # npm, tsc, gcc/clang
    r"|^\s*\[!\]\s|\bpanicked at\b|^\s*assertion failed\b"  # CocoaPods and other installers; Rust
    r"|^\s*(?:[a-z_]\w*\.)+_*[A-Z]\w*:\s"  # an exception by its module path: `amqp.exceptions.ChannelClosed: ...`
    rf"|\b{_ERRNO}\b"
    r"|(?i:No such file or directory|Permission denied|command not found|Segmentation fault|Cannot find module"
    r"|Module not found|Could not resolve|Connection refused|Unable to locate|is not recognized as"
    r"|No space left on device|Disk quota exceeded|Too many open files|Address already in use|Read-only file system"
    r"|Connection reset by peer|Connection timed out|Name or service not known|Temporary failure in name resolution"
    r"|Out of memory|OOMKilled|Killed process"  # what the errno codes and the kernel print
    r"|i/o timeout|context deadline exceeded|no such host|server misbehaving)",  # Go's network errors
)
# The same tests, split so that most of them are `in` on the lower-cased line (_ERROR_STRONG's
# thirty alternatives, tried at every position of a line, are the slowest part of reading output).
_STRONG_START = re.compile(
    r"\s*(?:(?i:error|fatal|panic)(?:\[[^\]\n]{1,80}\])?\s*:"
    r"|(?:Uncaught\s+)?(?:[A-Za-z_]\w*\.)*_*(?:[A-Z][A-Za-z0-9_]*)?(?:Error|Exception)\b(?=:|\s*$)"
    r"|(?:FAILED|FAIL|ERROR|ERR!)\b|\[!\]\s|assertion failed\b"
    r"|(?:[a-z_]\w*\.)+_*[A-Z]\w*:\s)"  # an exception by its module path: `amqp.exceptions.ChannelClosed: ...`
)
_STRONG_NAME = re.compile(r"(?<![\w-])_*[A-Z][A-Za-z0-9_]*(?:Error|Exception)\b(?=:|\s*$)")
_STRONG_CODE = re.compile(r"\bnpm ERR!|\berror TS\d+|:\d+(?::\d+)?:\s*(?:fatal )?error\b")
_ERRNO_RX = re.compile(rf"\b{_ERRNO}\b")
_ERRNO_LOW = tuple(f"e{code.lower()}" for code in _ERRNO[4:-1].split("|"))  # enoent, eacces, ...
_STRONG_PHRASES = tuple(p.lower() for p in (
    "No such file or directory", "Permission denied", "command not found", "Segmentation fault", "Cannot find module",
    "Module not found", "Could not resolve", "Connection refused", "Unable to locate", "is not recognized as",
    "No space left on device", "Disk quota exceeded", "Too many open files", "Address already in use",
    "Read-only file system", "Connection reset by peer", "Connection timed out", "Name or service not known",
    "Temporary failure in name resolution", "Out of memory", "OOMKilled", "Killed process", "panicked at",
    "i/o timeout", "context deadline exceeded", "no such host", "server misbehaving",  # Go's network errors
))


def is_strong_error(line: str, low: str | None = None) -> bool:
    """`_ERROR_STRONG.search(line)`, faster."""
    if _STRONG_START.match(line):
        return True
    low = line.lower() if low is None else low
    if ("rror" in line or "xception" in line) and _STRONG_NAME.search(line):
        return True
    if any(p in low for p in _STRONG_PHRASES):
        return True
    if ("err!" in low or "error" in low) and _STRONG_CODE.search(line):
        return True
    return any(c in low for c in _ERRNO_LOW) and _ERRNO_RX.search(line) is not None


_ERROR_WEAK = re.compile(
    r"\bfailed(?: to\b|:)|\b[1-9]\d* (?:failed|errors?)\b|\bFAIL(?:ED|URE)?\b"
    r"|^\s*[✖✗✕×❌]\s+(?!\d+ problems?\b)",
)
# A line that opens with the failure states it ("Failure in test x", "Failed to connect to ...");
# one that has it further on is more often a progress line ("3 of 9 FAIL 37 test_x ...").
_ERROR_OPENS = re.compile(r"^\s*(?:Failure|Failed|FAILURE|Could not|Cannot|Unable to)\b")
_WARNING = re.compile(r"^\s*(?:warning|Warning|WARNING|WARN|npm warn)(?:\[[^\]\n]{1,80}\])?\s*(?::|\s)")
# Lines that only say that something failed, not what: a build tool's verdict, a retry hint.
_GENERIC = re.compile(
    r"\s*(?:error: (?:test failed, to rerun|aborting due to)|BUILD FAILED\b|FAILURE: Build failed|make(?:\[\d+\])?: \*\*\*"
    r"|ERROR: Job failed|npm ERR! (?:code|errno|syscall|path|command|A complete)\b|(?:ERROR|FAILED|FAIL|Error)\s*:?\s*$"
    r"|\S+:\d+: \w*(?:Error|Exception)\s*$)"  # pytest's `path:12: ValueError`, under the full message
)
_GENERIC_PHRASES = ("execution failed for task", "command failed with exit code", "exited with code", "exited with status",
                    "a complete log of this run", "process completed with exit code")


def _is_generic(shown: str, low: str) -> bool:
    return (_GENERIC.match(shown) is not None or any(p in low for p in _GENERIC_PHRASES)
            or ("could not compile" in low and " due to " in low))


# Counts of a test or lint run ("==== 1 failed, 25 passed in 3.1s ====", "Tests: 1 failed, 9 total",
# "Done. PASS=7 WARN=0 ERROR=1"), decoration, deprecations: error words, no error.
_SUMMARY = re.compile(
    r"^[\s=_*#-]*(?:\d+ (?:failed|passed|errors?|skipped|xfailed|xpassed|warnings?|deselected|selected|rerun)\b[,;\s]*)+"
    r"(?:in [\d.:]+\s?m?s\b)?(?:\s*\([\d.:]+\s?m?s?\))?[\s=_*#-]*$"
    r"|^\s*(?:test result:|Test Suites:|Tests:|Test Files |Snapshots:|Ran all test suites)"
    r"|\bPASS=\d+\b.*\bERROR=\d+|^\s*[=_*#-]{3,}\s.*\s[=_*#-]{3,}\s*$|\d+ (?:errors?|warnings?) generated\b"
    r"|^\s*Found \d+ errors? in \d+ files?|^\s*[✖✗]\s+\d+ problems?",
)
_DEPRECATION = re.compile(r"deprecat", re.I)
_CODE_LINE = re.compile(r"^(?:(?:except|raise|catch|throw|import|from|def|class|if|elif|return|const|let|var)\b|#|//|\d+\s*[→|:])")
_ERROR_NOISE = re.compile(
    r"doesn't want to proceed|tool use was rejected|has not been read yet|interrupted by user|"
    r"^\s*WARN\b.*pre-release|[;{]\s*$",  # the last: a line of code quoted by a search
    re.I,
)
_EXIT = re.compile(r"(?:Process exited with code|Exit code:?|exit code:?|exit status)\s*(-?\d+)")
_BOX_MARK = re.compile(r"^\s*[│|>•*][\s│|>•*]*")  # box and quote marks (not the indentation alone)
# A log line's date and time ("2025-10-12 10:01:13,123", "12:04:11", "11-02 10:14:22.311  8812  8840",
# "Oct 12 10:01:13"), then its level and logger ("ERROR   [celery.worker]", "WARNING:django.request:").
_TIMESTAMP = re.compile(
    r"^\s*\[?(?:\d{4}-\d{2}-\d{2}[T ]\d{1,2}:\d{2}(?::\d{2})?(?:[.,]\d{1,9})?(?:Z|[+-]\d{2}:?\d{2}|\s?UTC)?"
    r"|\d{4}/\d{2}/\d{2}[ T]\d{1,2}:\d{2}:\d{2}(?:[.,]\d{1,9})?"
    r"|\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?(?: +\d+ +\d+(?= +[VDIWEF] ))?"
    r"|[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2}"
    r"|\d{1,2}:\d{2}:\d{2}(?:[.,]\d{1,9})?)\]?:?(?:\s+\[\d+\]:?)?(?=\s|$)"  # and a process id: `[2271]`
)
_LEVEL = re.compile(
    r"^\s*(?:\[(?P<b>(?i:trace|debug|info|notice|warn|warning|error|err|critical|crit|fatal|severe))\]"
    r"|(?P<u>TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|ERR|CRITICAL|FATAL|SEVERE)\b(?:/\w+)?\]?(?P<colon>:)?)"
    r"(?:\s*\[[^\]\n]{1,80}\]:?|:[\w.$-]+:|\s+[\w.$-]+(?:\[\d+\])?:(?=\s))?\s*"
)
_QUIET_LEVEL = re.compile(r"^\s*\[?(?i:trace|debug|info|notice)\b")
_PYTEST_E = re.compile(r"^E {2,}(?=\S)")
# Lines under an error line that carry on its message (a wrapped line, the detail dbt prints under
# "Failure in test ..."): indented deeper, and not a location, a code excerpt or a frame.
_NOT_CONTINUATION = re.compile(
    r"^\s*(?:-->|[|\u2500-\u257f]|at\s|File \"|\d+\s*[|│]|[~^]+\s*$|[>+=]|\.\.\.|note:|help:|hint:|Caused by|Traceback|"
    r"in [A-Z]\w*(?:\s\(|\s*$)|\(|\[SQL|\*\s)"
)
_TB_HEAD = "Traceback (most recent call last)"
_EXCEPTION_LINE = re.compile(r"(?:[A-Za-z_]\w*\.)*_*[A-Z]\w*(?::(?:\s.*)?)?")
# Cheap tests run first: most output has none of these words, and `find` on the lower-cased block
# is far faster than the patterns above (the offline summarizer must take 100 segments of 60k
# characters a second). Only the lines holding a hint are matched against the patterns.
_HINT_WORDS = (
    "error", "exception", "fail", "fatal", "panic", "denied", "no such file", "not found", "refused", "warning",
    "segmentation", "unable to", "not recognized", "cannot find", "err!", "[!]",
    "no space left", "out of memory", "oomkilled", "timed out", "timeout", "deadline exceeded", "no such host",
    "misbehaving",
)
_HINT_ERRNO = re.compile(_ERRNO)  # ENOENT, EACCES, ...: one scan of the text, faster than a `find` each
_HINT_MARKS = re.compile("[✖✗✕×❌]")  # a linter's or a test runner's failure marks
MAX_ERROR_LINES = 80  # hint lines looked at per block: the head and the tail of a long log

STRONG, OPENS, WEAK, GENERIC, WARNING_ = 3.0, 2.0, 1.5, 1.0, 1.0
TRACEBACK_END = 3.5  # the exception that ends a Python traceback: the error, whatever its name


@dataclass
class ErrorLine:
    text: str
    strength: float
    tag: str = ""  # "warning", "generic" (only says that something failed), "weak" (a failure word) or ""


def log_body(line: str) -> tuple[str, str]:
    """(body, shown) of one line of output: the body without the box characters and the log line's
    date and time, for matching; `shown` also without a level and logger that only introduce an
    exception, and without pytest's `E   ` marker, for the atom (still a verbatim piece)."""
    m = _BOX_MARK.match(line)
    body = line[m.end():] if m else line
    m = _TIMESTAMP.match(body)
    if m:
        body = body[m.end():]
    shown = body.strip()
    m = _LEVEL.match(shown)
    if m and m.end() < len(shown):
        rest = shown[m.end():]
        if _ERROR_STRONG.match(rest) and not rest.startswith(("ERROR", "FAIL")):
            shown = rest
    elif _PYTEST_E.match(shown):
        shown = _PYTEST_E.sub("", shown)
    return body, shown


_COLUMN_GAP = re.compile(r" {3,}|\t")
_VARIABLE = re.compile(r"\b(?=[0-9a-f]*\d)[0-9a-f]{6,}\b|\d+")  # hex ids and numbers


def error_key(text: str) -> str:
    """What makes two error lines the same error: no timestamps or log prefixes, no numbers or
    hex ids (line numbers, task ids, ports, counts), case and spacing ignored."""
    _, shown = log_body(text)
    return _VARIABLE.sub("#", squash(shown).lower()).strip(" .:;,`")


def _classify(body: str, shown: str) -> tuple[float, str] | None:
    """(strength, tag) of a line of output, None when it reports no error. A log line's level
    counts: INFO and DEBUG lines report none, WARNING lines a warning, and an ERROR line at least
    a weak error, more when its message has an error's marks."""
    if not shown or _CODE_LINE.match(shown) or shown.endswith((";", "{")) or _is_noise(shown):
        return None
    m = _LEVEL.match(shown)
    if m is None or (m.group("colon") and m.group("u") not in ("INFO", "DEBUG", "TRACE", "NOTICE")):
        return _classify_message(shown)  # no level, or `ERROR: ...` as a command line tool writes it
    level, rest = (m.group("b") or m.group("u")).lower(), shown[m.end():]
    inner = _classify_message(rest)
    if level in ("trace", "debug", "info", "notice"):
        return inner if inner and inner[0] >= STRONG and _ERROR_STRONG.match(rest) else None
    if level.startswith("warn"):
        return inner if inner and inner[0] >= STRONG and _ERROR_STRONG.match(rest) else (WARNING_, "warning")
    return inner if inner and inner[0] > WEAK else (WEAK, "weak")


def _is_noise(shown: str) -> bool:
    """A tool's own message, a count of a test run, decoration, a deprecation, a traceback's frame."""
    low = shown.lower()
    return (
        (("want to proceed" in low or "was rejected" in low or "read yet" in low or "interrupted" in low
          or "pre-release" in low) and _ERROR_NOISE.search(shown) is not None)
        or ((_DIGIT.search(shown) is not None or shown.lstrip()[:1] in "=_*#-✖✗TtRS") and _SUMMARY.search(shown) is not None)
        or "deprecat" in low or shown.startswith((_TB_HEAD, 'File "'))
    )


def _classify_message(shown: str) -> tuple[float, str] | None:
    low = shown.lower()
    if _is_generic(shown, low):
        return GENERIC, "generic"
    if _WARNING.match(shown):
        return WARNING_, "warning"
    if is_strong_error(shown, low):
        return STRONG, ""
    if _ERROR_OPENS.match(shown):
        return OPENS, ""
    if ("fail" in low or "error" in low or shown.lstrip()[:1] in "✖✗✕×❌") and _ERROR_WEAK.search(shown):
        return WEAK, "weak"
    return None


def _pasted_error(raw: str, body: str, shown: str) -> bool:
    """A line of a person's message that is an error message, not a sentence about one."""
    return (raw[:1] == "\t" or raw.startswith("    ") or len(body) != len(raw)  # indented, a log line, boxed
            or _STRONG_START.match(shown) is not None or _STRONG_NAME.search(shown) is not None
            or _ERRNO_RX.search(shown) is not None or _STRONG_CODE.search(shown) is not None)


def _from_error(shown: str) -> str:
    """A row of a table (`kubectl get events`, a process list) from the column where its error
    starts: the columns before it differ from row to row and say nothing."""
    if "   " not in shown and "\t" not in shown:
        return shown  # no columns
    m = _ERROR_STRONG.search(shown) or _ERROR_OPENS.search(shown) or _ERROR_WEAK.search(shown)
    if m is None or m.start() < 8:
        return shown
    gaps = [g.end() for g in _COLUMN_GAP.finditer(shown, 0, m.start())]
    return shown[gaps[-1]:] if len(gaps) >= 2 else shown


def _indent(body: str) -> int:
    return len(body) - len(body.lstrip())


def _lines_from(text: str, start: int, limit: int) -> Iterator[tuple[int, int, str]]:
    """(start, end, line) of the lines from offset `start`, at most `limit` of them."""
    n = len(text)
    while start < n and limit > 0:
        end = text.find("\n", start)
        end = n if end < 0 else end
        yield start, end, text[start:end]
        start, limit = end + 1, limit - 1


def _with_continuation(text: str, end: int, body: str, shown: str) -> str:
    """An error line and the lines that carry on its message, up to ERROR_LINE_LIMIT."""
    indent = _indent(body)
    out = shown
    for _, _, nxt in _lines_from(text, end + 1, 2):
        nbody, nshown = log_body(nxt)
        if not nshown or _indent(nbody) <= indent or _NOT_CONTINUATION.match(nshown):
            break
        if not (nshown[0].islower() or not out.endswith((".", "!", "?", ":", ";"))):
            break
        if _classify(nbody, nshown) is not None or len(out) + len(nshown) > ERROR_LINE_LIMIT:
            break  # an error of its own, or enough
        out = f"{out} {nshown}"
    return out


def tracebacks(text: str) -> list[tuple[int, int, str | None]]:
    """(start, end, exception line) of every Python traceback in `text`: from the line of its
    header to the end of the exception line that closes it (None when the text stops first)."""
    found = []
    i = text.find(_TB_HEAD)
    while i >= 0:
        head_start = text.rfind("\n", 0, i) + 1
        prefix = text[head_start:i]
        base = len(prefix) if not prefix.strip() else 0  # a log line's prefix: frames are indented anyway
        end, exc = text.find("\n", i), None
        end = len(text) if end < 0 else end
        for start, stop, line in _lines_from(text, end + 1, 300):
            end = stop
            stripped = line.strip()
            if not stripped or stripped == "..." or _indent(line) > base:
                continue  # the frames and their code
            if _EXCEPTION_LINE.fullmatch(stripped[:400]):
                exc = stripped
            else:
                end = start - 1
            break
        found.append((head_start, end, exc))
        i = text.find(_TB_HEAD, max(end, i + len(_TB_HEAD)))
    return found


def error_lines(text: str, prose: bool = False) -> list[ErrorLine]:
    """Every line of program output that reports an error, in order: the exception that ends a
    Python traceback (whatever its name), then lines with an error's marks. Warnings and lines
    that only say that something failed are tagged; log prefixes are left out; a message wrapped
    over two lines is joined. `prose`: the text is what a person wrote, so a line of it counts
    only when it was pasted (indented, a log line, the line after one ending with a colon) or
    names an error as a program does (`Error: ...` at its start, an exception's name, an errno
    code): "programs run out of memory" is not an error message."""
    low = text.lower()
    out: list[ErrorLine] = []
    skip: list[tuple[int, int]] = []
    if _TB_HEAD in text:
        tbs = tracebacks(text)
        for n, (start, end, exc) in enumerate(tbs):
            skip.append((start, end))
            if exc:  # a chained traceback's last exception is the one that surfaced
                out.append(ErrorLine(cut(exc, ERROR_LINE_LIMIT), TRACEBACK_END if n == len(tbs) - 1 else STRONG))
    if len(low) != len(text):  # a few characters change length when lower-cased
        low = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
    starts = set()
    for word in _HINT_WORDS:
        i = low.find(word)
        while i >= 0:
            starts.add(low.rfind("\n", 0, i) + 1)
            i = low.find(word, i + len(word))
    if "E" in text:
        for m in _HINT_ERRNO.finditer(text):
            starts.add(text.rfind("\n", 0, m.start()) + 1)
    if not text.isascii():  # (isascii is free) ✖ 2 problems, ✕ test name
        for m in _HINT_MARKS.finditer(low):
            starts.add(low.rfind("\n", 0, m.start()) + 1)
    if not starts:
        return out
    starts = sorted(s for s in starts if not any(a <= s <= b for a, b in skip))
    if len(starts) > MAX_ERROR_LINES:
        starts = starts[: MAX_ERROR_LINES * 3 // 4] + starts[-MAX_ERROR_LINES // 4:]
    for start in starts:
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        raw = text[start: min(end, start + 2000)]
        body, shown = log_body(raw)
        kind = _classify(body, shown)
        if kind is None or (prose and not _pasted_error(raw, body, shown)
                            and not text[:max(start - 1, 0)].rstrip(" \t").endswith(":")):  # "It says:\n<line>"
            continue
        strength, tag = kind
        shown = _from_error(shown)
        if tag in ("", "weak"):
            shown = _with_continuation(text, end, body, shown)
        out.append(ErrorLine(cut(shown, ERROR_LINE_LIMIT), strength, tag))
    return out


# Status lines a harness wraps around output (Codex unified exec): they say that a command
# failed, not how.
_STATUS_LINE = re.compile(
    r"^(?:Process (?:running with session ID|exited with code)|Chunk ID:|Wall time:|Original token count:|"
    r"Output:|Exit code:?\s*-?\d+$|\(no output\)$)"
)
_FAILURE_WORDS = re.compile(
    r"\b(?:could(?:n't| not)|cannot|can't|unable|not found|invalid|denied|refused|fail(?:ed|ure|s|ing)?|missing|"
    r"no such|incompatible|conflict(?:s|ing)?|already exists|(?:does|do) not exist|doesn't exist|timed? ?out|"
    r"abort(?:ed|ing)?|killed|out of memory|not allowed|forbidden|unauthori[sz]ed|rejected|mismatch|unexpected|"
    r"undefined|violat\w*|exceeded|expired|corrupt\w*)\b",
    re.I,
)
# Progress and headers: what a tool prints before it gets to the point.
_PROGRESS = re.compile(
    r"^(?:Analyzing|Downloading|Installing|Compiling|Collecting|Building|Running|Resolving|Fetching|Checking|"
    r"Updating|Preparing|Loading|Starting|Using|Found|Reading|Writing|Creating|Generating|Processing|Cloning|"
    r"Pulling|Pushing|Waiting|Connecting|Executing|Configuring|Scanning|Linking|Finished|Done|Successfully|"
    r"Traceback)\b|\.\.\.\s*$|\[\s*\d+%\]|^\d+%|^#\d+ |^[✓✔]"
)


def failure_line(text: str) -> str | None:
    """The line of a failed command's output that says what went wrong, when no line has an
    error's marks: the first line with a failure word ("could not", "invalid", "already
    exists"...), else the last line that is not progress, a status or a count."""
    lines = text.splitlines()
    if len(lines) > 300:
        lines = lines[:150] + lines[-150:]
    last = None
    for raw in lines:
        body, shown = log_body(raw)
        if (not shown or _STATUS_LINE.match(shown) or _PROGRESS.search(shown) or _SUMMARY.search(shown)
                or _NOT_CONTINUATION.match(shown)
                or _ERROR_NOISE.search(shown) or _QUIET_LEVEL.match(body) or _DEPRECATION.search(shown)
                or shown.startswith(("WARN", 'File "')) or not any(c.isalpha() for c in shown)):
            continue
        if _FAILURE_WORDS.search(shown):
            return cut(shown, ERROR_LINE_LIMIT)
        last = shown
    return cut(last, ERROR_LINE_LIMIT) if last else None


def exit_code(text: str) -> int | None:
    m = _EXIT.search(text[:400]) or _EXIT.search(text[-400:])
    return int(m.group(1)) if m else None


def short_error(text: str) -> str:
    """The searchable core of an error line: an exception name and the head of its message, a
    code, a failing test file, or the line's head."""
    _, text = log_body(text)
    m = re.match(r"\s*(FAIL(?:ED)?)\s+(\S+)", text)
    if m:
        name = m.group(2).split("::")[0].rsplit("/", 1)[-1]
        return f"{m.group(1)} {name}"
    m = re.search(r"(?:\b|(?<=[.\s])_+)([A-Z][A-Za-z0-9_]*(?:Error|Exception))\b(?::\s*(.*))?", text) or re.match(
        r"\s*(?:[A-Za-z_]\w*\.)+_*([A-Z]\w*):\s*(.*)", text)  # pyarrow.lib.ArrowInvalid: ...
    if m:
        rest = clip(m.group(2) or "", 60)
        return f"{m.group(1)}: {rest}" if rest else m.group(1)
    m = re.match(r"\s*((?:error|warning|fatal)\[[^\]]+\])", text, re.I) or re.search(rf"\b({_ERRNO})\b", text)
    if m:
        return m.group(1)
    # From the last "error:" on (`a.ts:3:5 - error TS2322: ...`, `ERROR: /x/values.xml:104: AAPT: error: ...`),
    # with the tool's name before it.
    found = [m for m in re.finditer(r"(?:\b[A-Z]{2,}: )?\b(?:error|fatal)\b[\w \[\]-]{0,24}:", text, re.I)
             if len(text) - m.end() >= 10]
    return clip(text[found[-1].start():] if found and found[-1].start() > 0 else text, 80)


# -- commands -----------------------------------------------------------------------------------

_TRIVIAL = {
    "ls", "cat", "head", "tail", "sed", "nl", "pwd", "echo", "find", "rg", "grep", "wc", "tree", "cd", "which",
    "file", "stat", "less", "more", "true", "sleep", "awk", "sort", "uniq", "date", "whoami", "env", "printenv",
    "type", "dir", "du", "df",
}
_GIT_READ = {"status", "diff", "log", "show", "branch", "rev-parse", "remote", "blame", "ls-files", "fetch"}
_BUILD = re.compile(
    r"\b(?:pytest|tox|nox|test|tests|build|install|run|make|cargo|go|npm|pnpm|yarn|bun|uv|pip|poetry|docker|"
    r"kubectl|helm|terraform|ansible|alembic|migrate|deploy|mvn|gradle|dotnet|rake|bundle|mix|tsc|eslint|ruff|"
    r"mypy|pyright|ty|jest|vitest|playwright|systemctl|psql|sqlite3|curl|ssh|rsync|brew|apt|apt-get)\b"
)
_LISTS_PATHS = re.compile(r"(?:^|[|;&(]\s*|\bxargs\s+)(?:sudo\s+)?(?:grep|egrep|rg|ag|ack|find|fd|ls|tree|git|locate)\b")
_GIT_WRITE = re.compile(r"\bgit\s+(?:commit|push|merge|rebase|checkout|switch|reset|revert|cherry-pick|tag|stash|clone|pull)\b")


_SHELL_TOKEN = re.compile(r"""'[^']*'?|"(?:\\.|[^"\\])*"?|&&|\|\||[;|\n]|[^'"&|;\n]+|&""")
_OPERATORS = {"&&", "||", ";", "|", "\n"}


def chain(command: str) -> list[str]:
    """The simple commands of a command line, split at `&&`, `||`, `;`, `|` outside quotes."""
    parts, current = [], []
    for m in _SHELL_TOKEN.finditer(command[:2000]):
        token = m.group()
        if token in _OPERATORS:
            parts.append("".join(current))
            current = []
        else:
            current.append(token)
    parts.append("".join(current))
    return [p for p in parts if p.strip()]


def command_weight(command: str) -> float:
    """How much a command tells about a session: builds, tests, installs and deploys a lot; a
    look at a file (ls, cat, sed -n, rg, git status) almost nothing. A chain weighs what its
    heaviest part weighs."""
    return max((_part_weight(part.split()) for part in chain(command)), default=0.0)


def _part_weight(words: list[str]) -> float:
    i = 0  # skip to the program: past `sudo`, `VAR=value`, `timeout N`, `cd X`
    while i < len(words):
        w = words[i]
        if w in ("sudo", "time", "nohup", "exec", "env", "command") or ("=" in w and not w.startswith("-")):
            i += 1
        elif w in ("cd", "timeout"):
            i += 2
        else:
            break
    if i >= len(words):
        return 0.0
    program = words[i].rsplit("/", 1)[-1]
    if program == "git":
        sub = words[i + 1] if i + 1 < len(words) else ""
        if _GIT_WRITE.search(" ".join(words[i:i + 2])):
            return 2.0
        return 0.0 if sub in _GIT_READ or sub.startswith("-") else 1.0
    if program in _TRIVIAL:
        return 0.0
    return 2.0 if _BUILD.search(" ".join(words[i:i + 3])) else 1.0


def command_atom(command: str) -> str:
    """Verbatim; a long script keeps its first line."""
    if len(command) <= ATOM_TEXT_LIMIT:
        return command
    head = command.strip().splitlines()[0]
    return clip(head, ATOM_TEXT_LIMIT - 2) + (" …" if not head.endswith("…") else "")


# -- files --------------------------------------------------------------------------------------

_CODE_EXT = (
    "py|pyi|ts|tsx|js|jsx|mjs|cjs|go|rs|rb|java|kt|kts|c|h|cc|cpp|hpp|cs|php|swift|m|scala|lua|r|jl|dart|ex|exs|erl|"
    "md|rst|toml|yaml|yml|json|jsonl|ini|cfg|conf|sql|sh|bash|zsh|ps1|html|css|scss|vue|svelte|lock|txt|env|tf|"
    "proto|xml|gradle|ipynb|csv|dockerfile|mk"
)
_PATH_PIECE = re.compile(r"(?:~/|\.{1,2}/|/)?(?:\.?[\w@+-][\w@.+-]*/)*[\w@+-][\w@.+-]*\.([A-Za-z][A-Za-z0-9]{0,7})")
_PIECES = re.compile(r"[\s()\[\]{}<>\"'`,;|=*]+")
_CODE_EXTS = frozenset(_CODE_EXT.split("|"))
_LINE_SUFFIX = re.compile(r"(?::\d+){1,2}$|#L\d+(?:-L?\d+)?$")
_EDITS_SUFFIX = re.compile(r"\s+\(\d+ edits?\)$")


def norm_path(path: str, cwd: str | None) -> str | None:
    p = _EDITS_SUFFIX.sub("", path.strip()).strip("`'\"()[]<>,;")
    p = _LINE_SUFFIX.sub("", p).rstrip(".:")
    if not p or len(p) > ATOM_TEXT_LIMIT or "://" in p:
        return None
    if cwd:
        for sep in ("/", "\\"):
            root = cwd.rstrip(sep) + sep
            if p.startswith(root) and len(p) > len(root):
                return p[len(root):]
    return p


def mentioned_paths(text: str) -> list[str]:
    """Paths named in prose or a command: `dir/name.ext`, or a bare `name.ext` with a code or
    config extension (`path::name`, a test id or a qualified name, names the path). URLs and
    versions are not paths."""
    found = []
    for piece in _PIECES.split(text):
        if "." not in piece or "://" in piece or len(piece) > ATOM_TEXT_LIMIT:
            continue
        if "::" in piece:
            piece = piece.split("::", 1)[0]
        piece = _LINE_SUFFIX.sub("", piece.rstrip(".:!?*")).rstrip(".:")
        m = _PATH_PIECE.fullmatch(piece)
        if m and ("/" in piece or m.group(1).lower() in _CODE_EXTS):
            found.append(piece)
    return found


# A path at the head of a line of output: grep -n (`path:12:`), git status and diff --stat, find,
# a failing test (`FAILED path::test`, `FAIL path (1.2 s)`), the frames of a Python traceback.
# Not a passing suite or a progress line (`PASS path`, `path ....  [ 40%]`): every run lists those.
_OUTPUT_PATH = re.compile(
    r"^[ \t]*(?:[MADRCU?!]{1,2}[ \t]+|(?:modified|new file|deleted|renamed|both modified):[ \t]+|\+\+\+ b/|--- a/|"
    r"diff --git a/|File \"|(FAILED|FAIL|ERROR)[ \t]+)?"
    r"((?:\.{1,2}/|/)?(?:\.?[\w@+-][\w@.+-]*/)+[\w@+-][\w@.+-]*\.[A-Za-z][A-Za-z0-9]{0,7}"
    r"|[\w@+-][\w@.+-]*\.[A-Za-z][A-Za-z0-9]{0,7}(?=:\d))"
    r"(?:[ \t]*$|[:(,\"]|::|[ \t]+\||(?(1)[ \t]|(?!)))",
)
# Installed packages, caches and system folders: in a traceback or a listing, never the session's.
_VENDOR_DIRS = frozenset(
    "site-packages dist-packages node_modules .venv venv .cargo .rustup .gradle .m2 .npm .cache __pycache__ .git .tox "
    ".mypy_cache .pytest_cache".split()
)
_SYSTEM_ROOTS = ("/usr/", "/lib/", "/lib64/", "/proc/", "/sys/", "/nix/", "/System/", "<")


def is_vendor_path(path: str) -> bool:
    """In an installed package, a cache or a system folder: never the session's own file."""
    return path.startswith(_SYSTEM_ROOTS) or ("/" in path and not _VENDOR_DIRS.isdisjoint(path.split("/")[:-1]))


_VERSION = re.compile(r"\d\.\d")
OUTPUT_PATH_SCORE = 0.4  # below a path the agent edited, read, ran or named
OUTPUT_PATHS_FOCUSED = 8  # more paths than this in one output is a listing, not a finding
OUTPUT_PATH_CHARS = 8000


def output_paths(text: str) -> list[str]:
    """Distinct paths that a command's output lists at the head of its lines (grep, find, git,
    failing tests, traceback frames), without installed packages and system folders."""
    head = text[:OUTPUT_PATH_CHARS]
    if "." not in head:
        return []
    cut_at = head.find(" characters cut ...]")
    if cut_at >= 0:  # the lines on either side of a cut are pieces of lines
        before, after = head.rfind("\n", 0, head.rfind("\n", 0, cut_at)), head.find("\n", head.find("\n", cut_at) + 1)
        head = head[:max(before, 0)] + ("\n" + head[after + 1:] if after >= 0 else "")
    found: dict[str, None] = {}
    for line in head.splitlines():  # a match per line: far faster than `^` in MULTILINE mode
        if "." not in line:
            continue
        m = _OUTPUT_PATH.match(line)
        if m is None:
            continue
        path = m.group(2)
        if "/" not in path and path.rsplit(".", 1)[-1].lower() not in _CODE_EXTS:
            continue
        if m.group(0).lstrip().startswith('File "') and not path.endswith(".py"):
            continue  # a compiled module's frame (`pyarrow/_dataset.pyx`)
        if is_vendor_path(path) or _VERSION.search(path.rsplit("/", 1)[-1]):
            continue  # a version (`pkg-1.2.3.tar.gz`), not a file of the project
        found[path] = None
        if len(found) > OUTPUT_PATHS_FOCUSED:
            break  # a listing: the caller counts it as one
    return list(found)


# -- statements in prose: decisions, fixes, settings, numbers, todos -------------------------------

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


# -- the digest ---------------------------------------------------------------------------------


@dataclass
class Request:
    text: str
    order: int
    weak: bool  # a few words ("please fix these"): needs its context to mean anything
    context: str | None  # the command or error the person was looking at, for a weak request
    error: str | None = None  # the main error line the person pasted into it


@dataclass
class Digest:
    requests: list[Request] = field(default_factory=list)
    outcome: str | None = None  # the last substantive assistant text
    last_command: str | None = None
    user_texts: list[str] = field(default_factory=list)
    assistant_texts: list[str] = field(default_factory=list)
    atoms: Candidates = field(default_factory=Candidates)
    edited: list[str] = field(default_factory=list)
    outcome_sentences: list[str] = field(default_factory=list)
    language: str | None = None


_NARRATION_LEAD = re.compile(r"^(?:now |next,? |ok(?:ay)?,? |perfect[!.,]? |great[!.,]? )?(?:let me|i'll|i will|i'm going to|i have|i now have|i've got)\b", re.I)


def digest(blocks: list[Block], cwd: str | None = None) -> Digest:
    d = Digest()
    atoms = d.atoms
    pending: list[str] = []  # shell commands waiting for their result
    errored: set[str] = set()
    last_todo: str | None = None
    context: str | None = None  # what the person last saw: for a short request that follows
    assistant: list[tuple[int, str]] = []

    def add_file(raw: str, score: float, order: int, edited: bool = False, repeat: bool = True) -> None:
        path = norm_path(raw, cwd)
        if path and (score >= 1.5 or not is_vendor_path(path)):  # an installed package's file, unless opened
            atoms.add("file", path, score, order, repeat=repeat)
            if edited and path not in d.edited:
                d.edited.append(path)

    def add_errors(text: str, order: int, bonus: float, failed: bool, prose: bool = False) -> str | None:
        """The errors of one message or output; returns the main one (None if it reports none).
        For a failed command whose output has no error's marks, the line that says what went
        wrong stands in."""
        nonlocal context
        best: ErrorLine | None = None
        for e in error_lines(text, prose):
            atoms.add("error", e.text, e.strength + bonus, order, e.tag)
            if e.tag != "warning" and (best is None or e.strength > best.strength):
                best = e
        if failed and (best is None or best.strength < WEAK):
            line = failure_line(text)
            if line:
                atoms.add("error", line, WEAK + bonus, order)
                best = ErrorLine(line, WEAK)
        if best is not None:
            context = context or best.text
        return best.text if best else None

    for order, block in enumerate(blocks):
        text = block.text or ""
        # What the connector says the call did; a result without one is output of unknown origin,
        # read like a shell's.
        action = block.action or ""
        shell = action == "shell"
        if block.kind == "text" and block.role == "user":
            if is_scaffolding(text):
                continue
            d.user_texts.append(text)
            if is_ack(text):
                continue
            weak = len(text) < 80 and len(content_words(text)) < 3
            request = Request(text, order, weak, context if weak else None)
            d.requests.append(request)
            context = None
            request.error = add_errors(text, order, 1.0, False, prose=True)  # a pasted error is what the person cares about
            for raw in mentioned_paths(request_prose(text)):
                add_file(raw, 1.0, order)
            paths = output_paths(text) if "\n" in text else ()  # the frames of a pasted traceback, a pasted grep
            for raw in paths if len(paths) <= OUTPUT_PATHS_FOCUSED else ():
                add_file(raw, OUTPUT_PATH_SCORE, order, repeat=False)
        elif block.kind == "text" and block.role == "assistant":
            d.assistant_texts.append(text)
            assistant.append((order, text))
        elif block.kind == "tool_call":
            if shell:
                command = (block.command or "").strip()
                if not command:
                    continue  # a poll of a command already running, or nothing run
                weight = command_weight(command) + (1.0 if block.role == "user" else 0.0)
                atoms.add("command", command_atom(command), weight, order)
                pending.append(command)
                d.last_command = context = command
                for raw in mentioned_paths(command):
                    add_file(raw, 0.5, order)
                for m in _ENV_ASSIGN.finditer(command):
                    atoms.add("config", m.group(1), 1.0, order)
            elif action in ("edit", "write"):
                for raw in block.paths:
                    add_file(raw, 4.0, order, edited=True)
            elif action in ("read", "search"):
                for raw in block.paths:
                    add_file(raw, 1.5, order)
            elif action == "plan":
                last_todo = text
        elif block.kind == "tool_result":
            if action == "search" and not block.is_error:
                paths = output_paths(text)
                for raw in paths if len(paths) <= OUTPUT_PATHS_FOCUSED else ():  # a long listing is no finding
                    add_file(raw, OUTPUT_PATH_SCORE, order, repeat=False)
            if action in QUIET_ACTIONS and not block.is_error:
                continue
            command = None
            if block.command:  # the connector knows which command this is the output of
                command = block.command
            elif (shell or not action) and pending:
                command = pending.pop(0)
            # Output of a look around (rg, cat, ls) quotes code and logs: its "errors" are rarely
            # the session's; output of a build or a test run is where they are.
            weight = command_weight(command) if command else 1.0
            bonus = (1.0 if block.is_error else 0.0) + (1.0 if block.role == "user" else 0.0)
            bonus += -1.5 if weight == 0.0 else (0.5 if weight >= 2.0 else 0.0)
            code = exit_code(text) if shell else None
            failed = block.is_error or (code is not None and code != 0)
            bad = add_errors(text, order, bonus, failed)
            if command and (failed or bad):
                errored.add(command)
            # Paths a search or a listing prints (grep, find, ls, git status / diff), and those of a
            # failure (a failing test, a traceback's frames): named by the output, not touched, so
            # below every other source. A build log, an install, a file's contents are not read for them.
            if (shell or not action) and (failed or bad or _LISTS_PATHS.search(command or "")):
                paths = output_paths(text)
                for raw in paths if len(paths) <= OUTPUT_PATHS_FOCUSED else ():  # a long listing is no finding
                    add_file(raw, OUTPUT_PATH_SCORE, order, repeat=False)

    for command in errored:  # a failing build or test is what the session was about; a failing `rg` is not
        weight = command_weight(command)
        atoms.add("command", command_atom(command), weight + (1.5 if weight > 0 else 0.0), 0)

    # The outcome: the last assistant message that says something, without its lead-in
    # ("Now I have a comprehensive understanding. Let me compile the final report:").
    final_order = None
    for order, text in reversed(assistant):
        if len(content_words(text)) >= 5:
            d.outcome, final_order = text, order
            break
    if d.outcome:
        d.outcome_sentences = []
        for sentence in sentences(d.outcome, headings=False):
            sentence = _INTERJECTION.sub("", sentence)
            if not d.outcome_sentences and (_NARRATION_LEAD.match(sentence) or len(sentence) < 3):
                continue
            d.outcome_sentences.append(sentence)

    # (order, text, weight, is the final answer, look for paths): the paths of the requests and
    # of the final answer are counted elsewhere, with more weight.
    prose = [(r.order, request_prose(r.text), 2.0, False, False) for r in d.requests]
    prose += [(o, t, 2.0, True, False) for o, t in assistant if o == final_order]
    prose += [(o, t, 1.0, False, True) for o, t in reversed(assistant) if o != final_order]
    budget = PROSE_CHARS
    for order, text, weight, final, paths in prose:
        if budget <= 0:
            break
        text = text[:budget]
        budget -= len(text)
        _statements(atoms, text, order, weight, final)
        if paths:
            for raw in mentioned_paths(FENCE.sub(" ", text)):
                add_file(raw, 0.5, order)

    for s in d.outcome_sentences:
        if len(content_words(s)) >= 5 and is_specific(s) and s.endswith((".", "!")):
            atoms.add("fact", s, 1.5, final_order or 0)
            break
    if d.outcome:
        for raw in mentioned_paths(FENCE.sub(" ", d.outcome)):
            add_file(raw, 1.5, final_order or 0)

    if last_todo:
        for item, done in todo_items(last_todo):
            atoms.add("fact" if done else "todo", item, 0.8 if done else 2.0, len(blocks))

    d.language = detect_language(d.user_texts, d.assistant_texts)
    return d


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
