"""Errors in program output and in what a person pasted: which line of a log, a traceback or a
test run reports the error, how strong it is, and the line that stands in when none has an
error's marks."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass

from .text import _SENTENCE_END, FENCE, cut, one_line, squash

ERROR_LINE_LIMIT = 240
_DIGIT = re.compile(r"\d")


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
        rest = one_line(m.group(2) or "", 60)
        return f"{m.group(1)}: {rest}" if rest else m.group(1)
    m = re.match(r"\s*((?:error|warning|fatal)\[[^\]]+\])", text, re.I) or re.search(rf"\b({_ERRNO})\b", text)
    if m:
        return m.group(1)
    # From the last "error:" on (`a.ts:3:5 - error TS2322: ...`, `ERROR: /x/values.xml:104: AAPT: error: ...`),
    # with the tool's name before it.
    found = [m for m in re.finditer(r"(?:\b[A-Z]{2,}: )?\b(?:error|fatal)\b[\w \[\]-]{0,24}:", text, re.I)
             if len(text) - m.end() >= 10]
    return one_line(text[found[-1].start():] if found and found[-1].start() > 0 else text, 80)


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
