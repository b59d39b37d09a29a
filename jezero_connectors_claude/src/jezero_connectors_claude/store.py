"""Finding the transcript files of a Claude Code store, without opening them.

Layout (`projects/` is the root):
    <root>/<file>.jsonl                                   loose files
    <root>/<project>/<sessionId>.jsonl                    main session files
    <root>/<project>/agent-<id>.jsonl                     2.0.x sub-agents (flat)
    <root>/<project>/<sessionId>/subagents/agent-<id>.jsonl   2.1.x sub-agents (nested),
        with agent-<id>.meta.json and, newer, workflows/<run>/agent-<id>.jsonl
The root may also be a single project folder. Folders holding no transcripts (`tool-results/`,
`workflows/` beside `subagents/`, `memory/`) are not entered."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from jezero.plugin import not_a_file

AGENT_PREFIX = "agent-"
SUFFIX = ".jsonl"
SKIP_DIRS = {"tool-results", "workflows", "memory"}


@dataclass(frozen=True)
class TranscriptFile:
    path: Path
    key: str  # the path relative to the root, with "/": the cursor key
    agent: bool  # a sub-agent file (flat or nested), read as one thread
    session_dir: str | None = None  # nested layout: the folder named after the parent session

    @property
    def stem(self) -> str:
        return self.path.name[: -len(SUFFIX)]

    @property
    def meta_path(self) -> Path:
        return self.path.with_name(self.stem + ".meta.json")


def walk(root: Path, warn: Callable[[str], None]) -> Iterator[TranscriptFile]:
    """Every transcript file under `root`, in a stable order. A folder that vanished is skipped
    silently; one that cannot be listed is reported through `warn`."""
    yield from _scan(root, root, 0, warn)


def _entries(folder: Path, warn: Callable[[str], None]) -> list[os.DirEntry]:
    try:
        with os.scandir(folder) as it:
            return sorted(it, key=lambda e: e.name)
    except FileNotFoundError:
        return []
    except OSError as e:
        warn(f"cannot list {folder}: {e.strerror or e}")
        return []


def _is_dir(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _is_file(entry: os.DirEntry) -> bool:
    try:
        return entry.is_file()
    except OSError:
        return False


def _scan(root: Path, folder: Path, depth: int, warn) -> Iterator[TranscriptFile]:
    # depth 0: the root (loose files, or a project folder); 1: a project folder; 2: a session folder
    # Files before folders, so a session comes before the sub-agents in its folder.
    for entry in sorted(_entries(folder, warn), key=lambda e: (not _is_file(e), e.name)):
        path = Path(entry.path)
        if depth < 2 and entry.name.endswith(SUFFIX):
            if _is_file(entry):
                yield TranscriptFile(path, _key(root, path), agent=entry.name.startswith(AGENT_PREFIX))
                continue
            _not_a_transcript(path, warn)  # (a folder is still looked into, as before)
        if entry.name == "subagents" and _is_dir(entry):
            yield from _subagents(root, path, folder.name, warn)
        elif depth < 2 and entry.name not in SKIP_DIRS and not entry.name.startswith(".") and _is_dir(entry):
            yield from _scan(root, path, depth + 1, warn)


def _subagents(root: Path, folder: Path, session_dir: str, warn) -> Iterator[TranscriptFile]:
    for entry in _entries(folder, warn):
        path = Path(entry.path)
        if entry.name.startswith(AGENT_PREFIX) and entry.name.endswith(SUFFIX):
            if _is_file(entry):
                yield TranscriptFile(path, _key(root, path), agent=True, session_dir=session_dir)
            else:
                _not_a_transcript(path, warn)
        elif entry.name == "workflows" and _is_dir(entry):
            # Workflow runs keep their agents one folder down, beside a journal that is not a
            # transcript.
            for run in _entries(path, warn):
                if _is_dir(run):
                    for sub in _entries(Path(run.path), warn):
                        if sub.name.startswith(AGENT_PREFIX) and sub.name.endswith(SUFFIX):
                            p = Path(sub.path)
                            if _is_file(sub):
                                yield TranscriptFile(p, _key(root, p), agent=True, session_dir=session_dir)
                            else:
                                _not_a_transcript(p, warn)


def _not_a_transcript(path: Path, warn) -> None:
    """Said, not silent: a path named like a transcript that is not a file (it holds none)."""
    kind = not_a_file(path)
    if kind:
        warn(f"{path}: named like a transcript but is {kind}: not read")


def _key(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix()
