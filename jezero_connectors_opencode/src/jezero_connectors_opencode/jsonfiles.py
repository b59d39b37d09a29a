"""Read sessions from OpenCode's JSON file store (before 1.2, and what an upgrade leaves behind):

    storage/session/<projectID>/<sessionID>.json
    storage/message/<sessionID>/<messageID>.json
    storage/part/<messageID>/<partID>.json

Each file is one object with the same fields as the database's `data` column plus its ids."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Callable

from jezero.plugin import json_text

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

    def sessions(self) -> dict[str, Path]:
        found = {}
        root = self.storage / "session"
        if not root.is_dir():
            return found
        for project in sorted(p for p in root.iterdir() if p.is_dir()):
            for path in self._files(project):
                found[path.stem] = path
        return found

    def fingerprint(self, sid: str, session_file: Path) -> str:
        """A hash of every file of the session (name, size, mtime): changes when any does."""
        digest = hashlib.sha256()
        files = [session_file]
        for message in self._files(self.storage / "message" / sid):
            files.append(message)
            files += self._files(self.storage / "part" / message.stem)
        for path in files:
            try:
                st = path.stat()
            except OSError:
                continue
            digest.update(f"{path.relative_to(self.storage)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode("utf-8", "surrogateescape"))
        return digest.hexdigest()

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
