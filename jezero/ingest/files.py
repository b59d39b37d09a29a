"""Helpers that every file-based connector needs: tolerant JSONL reading, file signatures for
cursors, timestamps, and caps on what a block may carry. Connector plugins import these; the
pipeline only `without_lone_surrogates`, for text that came another way."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import stat
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, BinaryIO

from jezero.models import TITLE_MAX_CHARS

# A tool result or a pasted file can be megabytes; what a summary needs is its head (the command,
# the first error) and its tail (the outcome). The cap keeps one block from filling a segment.
TOOL_TEXT_LIMIT = 4000

# Windows editors and some export tools start a UTF-8 file with a byte order mark, which JSON
# refuses: left in, it costs a JSONL file its first line (Codex's session_meta, Gemini's header).
_BOM = "\ufeff"

# An agent writes each JSONL line in one go, so a last line without its newline is normally seen
# only for the moment of that write. One that has not changed for a minute is a cut file, not a
# line being written.
CUT_LINE_SECONDS = 60

# JSON may escape one half of a UTF-16 pair alone (`"\ud800"`): Python reads it as a lone
# surrogate, which no UTF-8 text can hold, so hashing or storing it raises. Only a line holding
# such an escape is walked for one.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")

# No transcript nests a record 100 levels deep (tool inputs and results reach about 10). A line
# that does is hostile or broken: nested 100,000 deep, Python's decoder raises RecursionError
# rather than ValueError; nested 900 deep, the decoder reads it and every walk through it by
# recursion (a connector's rendering, the lone-surrogate walk, a redactor) overflows instead.
MAX_JSON_DEPTH = 100

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07")


@dataclass
class JsonlRead:
    records: list[tuple[int, Any]]  # (1-based line number, parsed JSON)
    consumed: int  # bytes up to and including the last complete line
    bad_lines: list[int] = field(default_factory=list)  # complete lines that were not JSON objects
    partial_tail: bool = False  # the file ends in a line still being written
    not_utf8_lines: list[int] = field(default_factory=list)  # lines with text that is not UTF-8, replaced
    path: str | os.PathLike | None = None  # the file read

    def in_order(self) -> list[tuple[int, Any]]:
        """The records and the bad lines in file order, a bad line as (line number, None): the
        order a `JsonlStream` yields them in."""
        return sorted([*self.records, *((n, None) for n in self.bad_lines)], key=lambda e: e[0])


def read_jsonl(path: str | os.PathLike, stream: BinaryIO | None = None) -> JsonlRead:
    """Read every complete line of a JSONL file. A last line without its newline is left for the
    next read (the agent is still writing it); a complete line that is not a JSON object is
    recorded in `bad_lines` and skipped, never fatal. Holds every record at once: for a file of
    any size, iterate a `JsonlStream` instead."""
    lines = JsonlStream(path, stream)
    records = [(n, obj) for n, obj in lines if obj is not None]
    return JsonlRead(records=records, consumed=lines.consumed, bad_lines=lines.bad_lines,
                     partial_tail=lines.partial_tail, not_utf8_lines=lines.not_utf8_lines, path=path)


class JsonlStream:
    """The complete lines of a JSONL file, one at a time: (line number, object), or (line number,
    None) for a line that is not a JSON object. Memory stays at one line however large the file
    (a 200 MB transcript took 1.2 GB read whole, benchmarks/stream/README.md). After iterating:
    `consumed` (bytes up to the last newline), `bad_lines`, `partial_tail`, `not_utf8_lines`, as
    in `JsonlRead`."""

    def __init__(self, path: str | os.PathLike, stream: BinaryIO | None = None, *, limit: int | None = None):
        self.path, self.stream, self.limit = path, stream, limit  # limit: read no byte past it
        self.consumed = 0
        self.bad_lines: list[int] = []
        self.partial_tail = False
        self.not_utf8_lines: list[int] = []

    def __iter__(self):
        if self.stream is not None:
            yield from self._lines(self.stream)
            return
        with open(self.path, "rb") as f:
            yield from self._lines(f)

    def _lines(self, f: BinaryIO):
        for number, raw in enumerate(f, start=1):
            if not raw.endswith(b"\n"):  # the agent is still writing it: left for the next read
                self.partial_tail = bool(raw.strip())
                return
            if self.limit is not None and self.consumed + len(raw) > self.limit:
                return
            self.consumed += len(raw)
            if not raw.strip():
                continue
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                self.not_utf8_lines.append(number)
                text = raw.decode("utf-8", errors="replace")
            try:
                obj = read_json(text.removeprefix(_BOM))
            except ValueError:
                obj = None
            if not isinstance(obj, dict):
                self.bad_lines.append(number)
                obj = None
            elif _SURROGATE_ESCAPE.search(raw):
                obj = self._valid_unicode(number, obj)
            yield number, obj

    def _valid_unicode(self, number: int, obj: dict) -> dict:
        fixed = without_lone_surrogates(obj)
        if fixed != obj and number not in self.not_utf8_lines:
            self.not_utf8_lines.append(number)
        return fixed


def damage_warnings(label: str, lines: JsonlRead | JsonlStream) -> list[str]:
    """What a read of a JSONL file changed or left out besides its bad lines (each
    connector words those with its own counts): text that is not UTF-8, replaced, and a last
    line without its newline that nobody is writing any more (the file was cut: a crash, a full
    disk, a copy stopped short), left out. A last line still being written is no problem and
    says nothing: it is read once it is finished."""
    warnings = []
    if lines.not_utf8_lines:
        first, rest = lines.not_utf8_lines[0], len(lines.not_utf8_lines) - 1
        more = f" (and {rest} more line{'s' if rest > 1 else ''})" if rest else ""
        warnings.append(f"{label}:{first}: text that is not UTF-8 (a bad byte, half a surrogate pair), "
                        f"replaced with U+FFFD{more}")
    if lines.partial_tail and _untouched_for(lines.path, CUT_LINE_SECONDS):
        warnings.append(f"{label}: its last line has no newline and has not changed for "
                        f"{CUT_LINE_SECONDS} s (the file was cut short?): left out until it is finished")
    return warnings


def _untouched_for(path: str | os.PathLike | None, seconds: float) -> bool:
    if path is None:
        return False
    try:
        return time.time() - os.stat(path).st_mtime >= seconds
    except OSError:  # gone since it was read: nothing to say about its last line
        return False


def without_lone_surrogates(value: Any) -> Any:
    """`value` (a string, or JSON made of dicts and lists) with each lone surrogate replaced by
    U+FFFD, as a byte that is not UTF-8 is replaced when a file is decoded."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [without_lone_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {without_lone_surrogates(k): without_lone_surrogates(v) for k, v in value.items()}
    return value


def read_json(text: str | bytes) -> Any:
    """`json.loads` for text from outside (a transcript line, a tool's arguments, a file another
    program wrote): anything it cannot use raises ValueError, a document nested deeper than
    MAX_JSON_DEPTH included, so one `except ValueError` covers every way such text is bad."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise ValueError("JSON nested too deep for Python's decoder") from None
    opened = text.count("[") + text.count("{") if isinstance(text, str) else text.count(b"[") + text.count(b"{")
    if opened > MAX_JSON_DEPTH and _nested_deeper(value, MAX_JSON_DEPTH):
        raise ValueError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
    return value


def _nested_deeper(value: Any, limit: int) -> bool:
    """Whether lists and objects nest more than `limit` deep in `value`; walked without recursion.
    Counting the brackets first keeps the walk to the few texts that hold enough of them."""
    todo = [(value, 1)] if isinstance(value, (dict, list)) else []
    while todo:
        node, depth = todo.pop()
        for child in node.values() if isinstance(node, dict) else node:
            if isinstance(child, (dict, list)):
                if depth >= limit:
                    return True
                todo.append((child, depth + 1))
    return False


def json_text(data: bytes) -> str:
    """The text of a JSON file or line as a reader should parse it: UTF-8, a byte that is not
    replaced (never fatal), a leading byte order mark dropped."""
    return data.decode("utf-8", errors="replace").removeprefix(_BOM)


# A file rewritten in place to the same size keeps its mtime when the writer sets it back (`touch
# -r`, `cp -p` or `rsync -t` of another version, an editor or a scrubber that keeps the times) or
# when two writes land in one tick of a coarse clock (1-2 s on FAT and some network file
# systems): size and mtime alone then said "unchanged" forever, and the library kept the old
# text. The signature's third number hashes what neither can hide: the status-change time
# (ctime: set by the system on every write and every utime, never by a program) and the file's
# first and last SIGNATURE_EDGE bytes (a tick too coarse for ctime too: the header and the
# newest records, where a rewrite of a growing transcript lands). Two reads of 4 KB beside the
# stat, whatever the file's size. (A file only renamed, chmod-ed or hard-linked gets a new
# ctime too: it is read again once, and the pipeline finds nothing new.)
SIGNATURE_EDGE = 4096


def file_signature(path: str | os.PathLike) -> list[int]:
    """[size, mtime_ns, check]: enough to tell whether a file changed since the cursor saw it,
    without reading it (`check`: a 48-bit hash of its ctime and its first and last
    SIGNATURE_EDGE bytes, a whole number so the value stays plain JSON). Compare with
    `same_signature`. OSError for a path that is not a regular file (a folder, a named pipe:
    opened without waiting for a writer)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", os.fspath(path))
        check = hashlib.blake2b(st.st_ctime_ns.to_bytes(16, "big", signed=True), digest_size=6)
        check.update(os.read(fd, SIGNATURE_EDGE))
        if st.st_size > SIGNATURE_EDGE:
            os.lseek(fd, max(SIGNATURE_EDGE, st.st_size - SIGNATURE_EDGE), os.SEEK_SET)
            check.update(os.read(fd, SIGNATURE_EDGE))
    finally:
        os.close(fd)
    return [st.st_size, st.st_mtime_ns, int.from_bytes(check.digest(), "big")]


def not_a_file(path: str | os.PathLike) -> str | None:
    """What a path named like a transcript is when it cannot be one: "a folder", "a named pipe",
    "a symlink to nothing", "a symlink loop", "a socket" or "a device"; None for a regular file
    (or a link to one), a path gone and one that cannot be looked at. A walk warns with it
    instead of skipping such a path without a word. Stats only: never opens it (a named pipe
    would wait for a writer)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "a symlink to nothing" if os.path.islink(path) else None
    except OSError as e:
        return "a symlink loop" if e.errno == errno.ELOOP else None
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    return "a socket" if stat.S_ISSOCK(mode) else "a device"


def same_signature(stored: Any, sig: list[int]) -> bool:
    """Whether a signature kept in a cursor says the file is unchanged since (`sig`: its
    `file_signature` now). One kept before the check was ([size, mtime_ns]) is trusted on those
    two, as it was then: re-reading every file once after an upgrade would cost a run over the
    whole store; the file's next change writes the new form."""
    if not isinstance(stored, (list, tuple)):
        return False
    stored = list(stored)
    return stored == sig or (len(stored) == 2 and stored == sig[:2])


def longer_copy(a: str | os.PathLike, b: str | os.PathLike) -> str | os.PathLike | None:
    """When one file's bytes are the start of the other's (one transcript copied at two moments),
    the longer of the two (`a` when they are equal); None when they differ, or either cannot be
    read. One pass over the shorter."""
    chunk = 1 << 16
    try:
        with open(a, "rb") as fa, open(b, "rb") as fb:
            while True:
                x, y = fa.read(chunk), fb.read(chunk)
                n = min(len(x), len(y))
                if x[:n] != y[:n]:
                    return None
                if len(x) < chunk or len(y) < chunk:  # the end of one (or both): the other holds it whole
                    return a if len(x) >= len(y) else b
    except OSError:
        return None


def read_from(state: Any, path: str | os.PathLike) -> bool:
    """Whether a cursor entry `{"bytes": n, "sha256": hex, ...}` was read from this file: its
    first n bytes hash to that digest."""
    if not isinstance(state, dict) or not isinstance(state.get("bytes"), int) or not isinstance(state.get("sha256"), str):
        return False
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read(state["bytes"])).hexdigest() == state["sha256"]
    except OSError:
        return False


def parse_time(value: Any) -> datetime | None:
    """An aware UTC datetime from an ISO-8601 string or epoch seconds/milliseconds; None if absent
    or unreadable."""
    if value is None or value == "":
        return None
    try:
        if isinstance(value, (int, float)):
            seconds = value / 1000 if value > 1e11 else value
            return datetime.fromtimestamp(seconds, tz=timezone.utc)
        text = str(value).strip()
        if text.endswith("Z"):
            text = text[:-1] + "+00:00"
        dt = datetime.fromisoformat(text)
    except (ValueError, OverflowError, OSError):
        return None
    return dt.replace(tzinfo=timezone.utc) if dt.tzinfo is None else dt.astimezone(timezone.utc)


def clip(text: str, limit: int = TOOL_TEXT_LIMIT) -> str:
    """Keep the head and the tail of a long text, with a marker of what was cut."""
    if len(text) <= limit:
        return text
    head = limit * 3 // 4
    tail = limit - head
    return f"{text[:head]}\n[... {len(text) - limit} characters cut ...]\n{text[-tail:]}"


def title_line(text: str | None) -> str | None:
    """The first non-blank line of a text, its whitespace collapsed and cut to `TITLE_MAX_CHARS`
    (ending in "..."); None if there is none."""
    for line in (text or "").splitlines():
        line = " ".join(line.split())
        if line:
            return line if len(line) <= TITLE_MAX_CHARS else line[: TITLE_MAX_CHARS - 3] + "..."
    return None


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


def expand(path: str) -> Path:
    return Path(os.path.expandvars(os.path.expanduser(path)))
