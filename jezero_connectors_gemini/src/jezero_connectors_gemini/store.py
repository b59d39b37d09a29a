"""Find the chat recordings in a Gemini CLI folder (`~/.gemini`).

Layout (gemini-cli `config/storage.ts`, `services/chatRecordingService.ts`):
`tmp/<project>/chats/session-<YYYY-MM-DDTHH-MM>-<8 chars of the id>.jsonl` (`.json` before 0.40),
and sub-agent chats in `tmp/<project>/chats/<parent session id>/<session id>.jsonl`. `<project>`
is a short slug registered in `projects.json` (`{"projects": {path: slug}}`) with the path also
in `tmp/<slug>/.project_root`; older builds named the folder with the SHA-256 of the path."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from jezero.plugin import json_text, not_a_file, read_json

SUFFIXES = (".jsonl", ".json")


@dataclass(frozen=True)
class ChatFile:
    path: Path
    key: str  # the cursor key: the name without its suffix, under its parent's id for a sub-agent
    project: Path  # tmp/<project>
    parent_id: str | None  # the parent session of a sub-agent chat
    document: bool  # a pre-0.40 .json recording


def _chat(path: Path, project: Path, parent_id: str | None) -> ChatFile | None:
    if path.suffix not in SUFFIXES:
        return None
    if parent_id is None and not path.name.startswith("session-"):
        return None
    stem = path.name[: -len(path.suffix)]
    return ChatFile(path, f"{parent_id}/{stem}" if parent_id else stem, project, parent_id, path.suffix == ".json")


def walk(root: Path, warn: Callable[[str], None]) -> list[ChatFile]:
    """Every recording under `root/tmp`, one per key in each project folder: a `.jsonl` wins
    over the `.json` it was migrated from (resuming an old chat copies it into a `.jsonl` and
    leaves the `.json`). One key in two project folders: both, in walk order."""
    found: dict[tuple[str, str], ChatFile] = {}

    def listing(folder: Path) -> list[Path]:
        try:
            return sorted(folder.iterdir())
        except FileNotFoundError:
            return []
        except OSError as e:
            warn(f"gemini: {folder}: cannot list folder: {e.strerror or e}")
            return []

    def odd(path: Path, chat: ChatFile | None) -> None:
        """Said, not silent: a path named like a recording that is not a file."""
        kind = not_a_file(path) if chat is not None else None
        if kind:
            warn(f"gemini: {path}: named like a chat recording but is {kind}: not read")

    def keep(chat: ChatFile | None) -> None:
        if chat is None:
            return
        # One per key and project folder: the same name in two project folders is two files
        # (stores copied together, an old hash folder beside its slug), both returned
        # (`GeminiConnector` tells them apart); before, the second was never read, silently.
        held = found.get((chat.project.name, chat.key))
        if held is None or (held.document and not chat.document):
            found[(chat.project.name, chat.key)] = chat

    for project in listing(root / "tmp"):
        chats = project / "chats"
        if not chats.is_dir():
            continue
        for entry in listing(chats):
            if entry.is_dir():
                odd(entry, _chat(entry, project, None))  # (still looked into, as before)
                for sub in listing(entry):
                    if sub.is_file():
                        keep(_chat(sub, project, entry.name))
                    else:
                        odd(sub, _chat(sub, project, entry.name))
            elif entry.is_file():
                keep(_chat(entry, project, None))
            else:
                odd(entry, _chat(entry, project, None))
    chats = list(found.values())
    # A `.json` migrated into a `.jsonl` under another project folder (a hash folder renamed to
    # its slug): the `.jsonl` wins there too, as it does in one folder.
    with_lines = {c.key for c in chats if not c.document}
    return _each_file_once(root, [c for c in chats if not (c.document and c.key in with_lines)], warn)


def _each_file_once(root: Path, chats: list[ChatFile], warn: Callable[[str], None]) -> list[ChatFile]:
    """One ChatFile per file on disk. Through a symlink (`chats/x -> .`, a project folder linked
    to another) one file is found twice, as two recordings of one session id: the library kept
    whichever was written last, a main chat stored as a sub-agent of "x" or under the other
    project. The path without a symlink below `root` is kept; the others are said and skipped."""
    try:
        real_root = root.resolve()
    except OSError:
        return chats
    by_file: dict[Path, list[ChatFile]] = {}
    for chat in chats:
        try:
            by_file.setdefault(chat.path.resolve(), []).append(chat)
        except (OSError, RuntimeError):  # a symlink loop: the walk found it, the reader says why it fails
            by_file.setdefault(chat.path, []).append(chat)
    out = []
    for real, same in by_file.items():
        direct = [c for c in same if real == real_root / c.path.relative_to(root)]
        kept = (direct or same)[0]
        out.append(kept)
        for other in same:
            if other is not kept:
                warn(f"gemini: {other.path} is {kept.path} again (through a symlink): read once, as the latter")
    return out


def project_roots(root: Path, project: Path, registry: dict[str, str]) -> list[str]:
    """Candidate working folders of a project folder: its `.project_root` marker, then the
    paths `projects.json` maps to its name."""
    out = []
    try:
        marker = (project / ".project_root").read_text(encoding="utf-8", errors="replace").strip()
        if marker:
            out.append(marker)
    except OSError:
        pass
    out += [path for path, slug in registry.items() if slug == project.name]
    return list(dict.fromkeys(out))


def registry(root: Path) -> dict[str, str]:
    """`projects.json`: {project path: slug}; empty when absent or unreadable."""
    try:
        data = read_json(json_text((root / "projects.json").read_bytes()))
    except (OSError, ValueError):
        return {}
    projects = data.get("projects") if isinstance(data, dict) else None
    if not isinstance(projects, dict):
        return {}
    return {k: v for k, v in projects.items() if isinstance(k, str) and isinstance(v, str)}


def default_root() -> Path:
    """Gemini keeps its state in `.gemini` under its home: `$GEMINI_CLI_HOME` when set, else the
    user's home."""
    home = os.environ.get("GEMINI_CLI_HOME", "").strip()
    return (Path(os.path.expanduser(home)) if home else Path.home()) / ".gemini"
