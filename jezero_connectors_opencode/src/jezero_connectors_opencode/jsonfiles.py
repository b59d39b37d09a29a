"""Read sessions from OpenCode's JSON file store (before 1.2, and what an upgrade leaves behind):

    storage/session/<projectID>/<sessionID>.json
    storage/message/<sessionID>/<messageID>.json
    storage/part/<messageID>/<partID>.json

Each file is one object with the same fields as the database's `data` column plus its ids."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Callable

from jezero.plugin import file_signature, json_text

from .reader import Message, Raw, loads


class JsonStore:
    def __init__(self, storage: Path, warn: Callable[[str], None]):
        self.storage = storage
        self.warn = warn

    def _files(self, folder: Path) -> list[Path]:
        try:
            return sorted(p for p in folder.iterdir() if p.suffix == ".json")
        except FileNotFoundError:
            return []
        except OSError as e:
            self.warn(f"opencode: {folder}: cannot list folder: {e.strerror or e}")
            return []

    def sessions(self) -> dict[str, list[Path]]:
        """Each session id's files, one per project folder that holds one (in folder order)."""
        found: dict[str, list[Path]] = {}
        root = self.storage / "session"
        if not root.is_dir():
            return found
        for project in sorted(p for p in root.iterdir() if p.is_dir()):
            for path in self._files(project):
                found.setdefault(path.stem, []).append(path)
        return found

    def newest(self, files: list[Path]) -> Path:
        """Of one session's files in several project folders (a project id that changed between
        versions, stores copied together: the messages and parts, kept under the session id
        alone, are the same for all), the one OpenCode updated last (`time.updated`; on a tie the
        last folder, as before). Before, the last folder's was always read: an older file's
        title, folder and parent could hide the live one's, and a change to the live one was not
        seen (the fingerprint covered one file)."""
        def updated(i: int) -> tuple[float, int]:
            info = self._read(files[i], [])
            time = info.get("time") if isinstance(info, dict) and isinstance(info.get("time"), dict) else {}
            value = time.get("updated")
            return (value if isinstance(value, (int, float)) and not isinstance(value, bool) else 0, i)
        return files[max(range(len(files)), key=updated)]

    def fingerprint(self, sid: str, session_file: Path, others: list[Path] = ()) -> dict[str, str]:
        """What tells whether any file of the session changed: {"fp": a hash of every file's name,
        size and mtime, "check": a hash of their `file_signature` checks}. A file rewritten to the
        same size with its mtime kept (a copy that keeps times, a restore, two writes in one coarse
        tick) changes only "check": before it was kept, such a rewrite was never read again.
        `others`: the session's files in other project folders (`newest`), hashed last."""
        digest, check = hashlib.sha256(), hashlib.sha256()
        files = [session_file]
        for message in self._files(self.storage / "message" / sid):
            files.append(message)
            files += self._files(self.storage / "part" / message.stem)
        files += others
        for path in files:
            try:
                size, mtime_ns, edges = file_signature(path)
            except OSError:
                continue
            name = f"{path.relative_to(self.storage)}"
            digest.update(f"{name}\0{size}\0{mtime_ns}\n".encode("utf-8", "surrogateescape"))
            check.update(f"{name}\0{edges}\n".encode("utf-8", "surrogateescape"))
        return {"fp": digest.hexdigest(), "check": check.hexdigest()[:16]}

    @staticmethod
    def unchanged(stored: object, value: dict[str, str]) -> bool:
        """Whether a cursor entry says the session is as `value` (its `fingerprint` now). One kept
        before "check" was ({"fp": ...}) is trusted on its names, sizes and mtimes, as it was then:
        re-reading every session once after an upgrade would cost a run over the whole store."""
        return stored == value or stored == {"fp": value["fp"]}

    def load(self, sid: str, session_file: Path) -> Raw | None:
        warnings: list[str] = []
        info = self._read(session_file, warnings)
        if info is None:
            for w in warnings:
                self.warn(f"opencode: {w}")
            return None
        time = info.get("time") if isinstance(info.get("time"), dict) else {}
        normal = {"id": info.get("id") or sid, "parent_id": info.get("parentID"), "directory": info.get("directory"),
                  "title": info.get("title"), "version": info.get("version"), "model": info.get("model"),
                  "time_created": time.get("created"), "time_updated": time.get("updated")}
        messages = []
        for path in self._files(self.storage / "message" / sid):
            obj = self._read(path, warnings)
            if obj is None:
                continue
            message = Message(obj)
            for part_path in self._files(self.storage / "part" / path.stem):
                part = self._read(part_path, warnings)
                if part is not None:
                    message.parts.append(part)
            message.parts.sort(key=lambda p: str(p.get("id") or ""))
            messages.append(message)
        messages.sort(key=lambda m: (m.info.get("time", {}).get("created") or 0 if isinstance(m.info.get("time"), dict) else 0,
                                     str(m.info.get("id") or "")))
        return Raw(normal, messages, warnings)

    def _read(self, path: Path, warnings: list[str]) -> dict | None:
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            warnings.append(f"{path}: vanished while being read, skipped")
            return None
        except OSError as e:
            warnings.append(f"{path}: cannot read: {e.strerror or e}")
            return None
        return loads(json_text(data), str(path), warnings)
