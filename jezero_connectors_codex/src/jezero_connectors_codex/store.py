"""Find the rollouts in a Codex home and load their bytes.

Layout (see README): `sessions/YYYY/MM/DD/rollout-*.jsonl` (active), `archived_sessions/`
(flat, or dated in some versions), `.jsonl.zst` copies that a background worker compresses, and
the first generation's `sessions/rollout-YYYY-MM-DD-<uuid>.json` / `sessions/<uuid>.json`
documents. One file per rollout identity wins: active over archived, plain over compressed."""

from __future__ import annotations

import hashlib
import io
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Callable

import zstandard

from jezero.plugin import longer_copy, not_a_file, read_json

SESSIONS = "sessions"
ARCHIVED = "archived_sessions"
SESSION_INDEX = "session_index.jsonl"

_UUID = re.compile(r"([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$")


@dataclass(frozen=True)
class RolloutFile:
    path: Path
    key: str  # the rollout's identity: the id in its file name, else the name without suffixes
    archived: bool
    compressed: bool  # .jsonl.zst
    document: bool  # a first-generation .json document

    @property
    def rank(self) -> tuple:
        """Lower wins among files with the same key."""
        return (self.archived, self.compressed, self.document, str(self.path))


def classify(path: Path, archived: bool) -> RolloutFile | None:
    name = path.name
    if name.endswith(".jsonl.zst"):
        stem, compressed, document = name[: -len(".jsonl.zst")], True, False
    elif name.endswith(".jsonl"):
        stem, compressed, document = name[: -len(".jsonl")], False, False
    elif name.endswith(".json"):
        stem, compressed, document = name[: -len(".json")], False, True
    else:
        return None
    m = _UUID.search(stem)
    if not stem.startswith("rollout-") and not (document and m and m.start() == 0):
        return None  # only rollouts, and the TS CLI's bare `<uuid>.json`
    return RolloutFile(path, m.group(1).lower() if m else stem, archived, compressed, document)


def discover(root: Path, warn: Callable[[str], None]) -> dict[str, RolloutFile]:
    """Every rollout under `root`, one file per key (`pick`)."""
    found: dict[str, list[RolloutFile]] = {}
    for sub, archived in ((SESSIONS, False), (ARCHIVED, True)):
        top = root / sub
        if not top.is_dir():
            continue

        def onerror(err: OSError) -> None:
            warn(f"{err.filename}: cannot list folder: {err.strerror or err}")

        for folder, dirs, files in os.walk(top, onerror=onerror):
            dirs.sort()
            for name in dirs:  # (still walked into, as before)
                if classify(Path(folder) / name, archived) is not None:
                    warn(f"{Path(folder) / name}: named like a rollout but is a folder: not read")
            for name in sorted(files):
                ref = classify(Path(folder) / name, archived)
                if ref is None:
                    continue
                kind = not_a_file(ref.path)  # a stat: a named pipe is never opened
                if kind:
                    warn(f"{ref.path}: named like a rollout but is {kind}: not read")
                    continue
                found.setdefault(ref.key, []).append(ref)
    return {key: pick(refs, warn) if len(refs) > 1 else refs[0] for key, refs in found.items()}


def pick(refs: list[RolloutFile], warn: Callable[[str], None]) -> RolloutFile:
    """The file read of several of one rollout: the best ranked (active over archived, plain over
    compressed, then the path), unless another plain one holds more, the winner's lines and
    then some (a copy of its start left in a folder that sorts first, an active file restored
    short beside its archive): that one. Before, the best ranked was read, and the rest of the
    longer copy was lost without a word. Copies that differ otherwise are said."""
    refs = sorted(refs, key=lambda r: r.rank)
    best = refs[0]
    for other in refs[1:]:
        if best.compressed or best.document or other.compressed or other.document:
            continue  # (a compressed copy is made from the plain one; documents supersede each other)
        kept = longer_copy(best.path, other.path)
        if kept is None:
            warn(f"{best.path} and {other.path} are one rollout id holding different lines: only the first is read "
                 "(move one out)")
        elif kept is not best.path:  # (equal copies: `best`)
            warn(f"{best.path} is the start of {other.path} (one rollout copied twice): the longer is read")
            best = other
    return best


def load(ref: RolloutFile) -> bytes:
    """The file's (decompressed) bytes. Raises OSError or zstandard.ZstdError."""
    with open(ref.path, "rb") as f:
        if not ref.compressed:
            return f.read()
        with zstandard.ZstdDecompressor().stream_reader(f, read_across_frames=True) as reader:
            return reader.read()


@contextmanager
def open_bytes(ref: RolloutFile) -> Iterator[BinaryIO]:
    """The file's (decompressed) bytes as a stream, to read line by line without holding the
    file in memory. Raises OSError or zstandard.ZstdError."""
    with open(ref.path, "rb") as f:
        if not ref.compressed:
            yield f
            return
        yield io.BufferedReader(_Frames(f), buffer_size=1 << 20)


class _Frames(io.RawIOBase):
    """A .zst file decompressed as it is read, frame after frame, that raises ZstdError at its
    end when the last frame is cut short. zstandard's stream reader returns whatever it could
    decode and stops without a word, so a damaged rollout read as a shorter (or empty) session.
    Codex writes a compressed rollout whole and verified, so a cut frame is damage, not a write
    in progress."""

    CHUNK = 1 << 20

    def __init__(self, raw: BinaryIO):
        self.raw = raw
        self.frame = zstandard.ZstdDecompressor().decompressobj()
        self.started = False  # this frame got input
        self.out, self.at = b"", 0  # decompressed bytes not read yet: out[at:]

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        while self.at == len(self.out):
            self.out, self.at = b"", 0
            data = self.raw.read(self.CHUNK)
            if not data:
                if self.started and not self.frame.eof:
                    raise zstandard.ZstdError(f"{getattr(self.raw, 'name', 'rollout')}: compressed data cut short")
                return 0
            while data:
                if self.frame.eof:  # the next frame (read_across_frames, as zstd writes them)
                    self.frame = zstandard.ZstdDecompressor().decompressobj()
                self.started = True
                self.out += self.frame.decompress(data)
                data = self.frame.unused_data if self.frame.eof else b""
        n = min(len(buffer), len(self.out) - self.at)
        buffer[:n] = self.out[self.at:self.at + n]
        self.at += n
        return n


def complete_lines_digest(ref: RolloutFile) -> tuple[int, int, str]:
    """(size, bytes up to the last newline, SHA-256 of those bytes), read in chunks: how the
    cursor tells a file with new lines from one only touched, moved or recompressed."""
    digest = hashlib.sha256()
    size = consumed = 0
    pending = bytearray()  # bytes after the last newline so far
    with open_bytes(ref) as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            size += len(chunk)
            cut = chunk.rfind(b"\n")
            if cut < 0:
                pending += chunk
                continue
            digest.update(pending)
            digest.update(chunk[: cut + 1])
            consumed = size - (len(chunk) - cut - 1)
            pending = bytearray(chunk[cut + 1:])
    return size, consumed, digest.hexdigest()


def declared_size(ref: RolloutFile) -> int | None:
    """The decompressed size a .zst frame header states, when the writer recorded it."""
    try:
        with open(ref.path, "rb") as f:
            head = f.read(18)
        size = zstandard.frame_content_size(head)
    except (OSError, zstandard.ZstdError):
        return None
    return size if size >= 0 else None


def thread_names(root: Path) -> dict[str, str]:
    """Names given to threads (`session_index.jsonl`, append-only: the newest line wins)."""
    names: dict[str, str] = {}
    try:
        raw = (root / SESSION_INDEX).read_bytes()
    except OSError:
        return names
    for line in raw.splitlines():
        try:
            entry = read_json(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and isinstance(entry.get("id"), str) and isinstance(entry.get("thread_name"), str):
            if entry["thread_name"].strip():
                names[entry["id"]] = entry["thread_name"].strip()
    return names
