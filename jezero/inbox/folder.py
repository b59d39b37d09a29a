"""Writing an uploaded file into its device folder: atomically, durably, and only inside it.

A file is received into a temporary file beside its target (same folder, so the rename is atomic),
hashed as it arrives, flushed to disk, then renamed over the target; the folder is flushed too, so
a stored file survives a power cut. A reader (a connector) sees the old file or the new one, never
half of one. The same bytes sent again change nothing, not even the modification time; any other
content replaces the file, with the upload time as its modification time (a device that was
offline for a week must not land behind a connector's cursor).

Everything under the inbox is private to the server's user: folders 0700, files 0600. A symlink
found inside a device folder is refused rather than followed, so nothing is ever written outside.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import secrets
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from jezero.inbox.layouts import Refused
from jezero.private import FILE_MODE, FOLDER_MODE

log = logging.getLogger("jezero.inbox")

PARTIAL_PREFIX = ".upload-"  # temporary files: hidden, so no connector walk ever picks one up
# A partial file nothing has written to for this long was left by a server killed mid-upload
# (SIGKILL, the OOM killer, a power cut): a live upload writes at least every `[inbox]
# upload_idle_seconds` or is cut with 408 and its file removed. An hour, and never under ten
# idle deadlines, so that another worker's upload in progress is never taken.
ABANDONED_PARTIAL_S = 3600.0
HINTS = ".hints"  # <device>/<agent>/.hints/<path>: the project the device sent for that file
_PROJECT = re.compile(r"^[a-z0-9][a-z0-9._-]{0,62}$")


def ensure_private_folder(path: Path) -> Path:
    """Create `path` (and its parents) if needed; make it 0700 when it is wider."""
    path.mkdir(parents=True, exist_ok=True, mode=FOLDER_MODE)
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        os.chmod(path, FOLDER_MODE)
        log.info("inbox folder %s was mode %o; made it private (700)", path, mode)
    return path


def check_project(value: str) -> str:
    if not _PROJECT.match(value):
        raise Refused(400, "project hint must be a lowercase slug (letters, digits, '.', '_', '-'; at most 63)")
    return value


def _folder(base: Path, names: list[str], *, create: bool = True) -> Path:
    """`base/names...`, creating missing folders (0700) unless `create` is False; refuses a symlink
    or a file on the way."""
    current = base
    for name in names:
        current = current / name
        try:
            st = os.lstat(current)
        except FileNotFoundError:
            if not create:
                return current  # nothing further down exists either
            try:
                os.mkdir(current, FOLDER_MODE)
                continue
            except FileExistsError:  # made meanwhile by a concurrent upload
                st = os.lstat(current)
        if stat.S_ISLNK(st.st_mode):
            raise Refused(400, f"{name!r} is a symlink in the device folder: refused, not followed")
        if not stat.S_ISDIR(st.st_mode):
            raise Refused(409, f"{name!r} is a file in the device folder, not a folder")
    return current


def _inside(path: Path, folder: Path) -> bool:
    real, top = os.path.realpath(path), os.path.realpath(folder)
    return real == top or real.startswith(top + os.sep)


def _fsync_folder(folder: Path) -> None:
    if os.name == "nt":  # Windows cannot open a folder to flush it; its renames are journaled
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _same_content(path: Path, size: int, digest: str) -> bool:
    try:
        if os.lstat(path).st_size != size:
            return False
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        return h.hexdigest() == digest
    except FileNotFoundError:
        return False


@dataclass
class Stored:
    path: Path
    bytes: int
    sha256: str
    changed: bool  # False: the same bytes were there already and nothing was touched


class DeviceFolder:
    """One device's folder in the inbox: `<inbox>/<device>/`."""

    def __init__(self, inbox: Path, device: str):
        self.inbox = inbox
        self.device = device
        self.path = inbox / device

    def prepare(self, *, create: bool = True) -> Path:
        if os.path.islink(self.path):
            raise Refused(409, "the device folder is a symlink on the server: refused, not followed")
        if create:
            ensure_private_folder(self.inbox)
            self.path.mkdir(mode=FOLDER_MODE, exist_ok=True)
        return self.path

    def target_folder(self, names: list[str], *, create: bool = True) -> Path:
        folder = _folder(self.prepare(create=create), names, create=create)
        if create and not _inside(folder, self.path):
            raise Refused(400, "path leads outside the device folder")
        return folder

    def receive(self, agent: str, parts: list[str], max_bytes: int) -> Upload:
        """Check the way to the target without creating anything; the upload creates its folders
        only once its first bytes passed the checks."""
        self.target_folder([agent, *parts[:-1]], create=False)
        target = self.path / agent / Path(*parts)
        try:
            st = os.lstat(target)
        except (FileNotFoundError, NotADirectoryError):
            pass
        else:
            if stat.S_ISLNK(st.st_mode):
                raise Refused(400, f"{parts[-1]!r} is a symlink in the device folder: refused, not followed")
            if not stat.S_ISREG(st.st_mode):
                raise Refused(409, f"{parts[-1]!r} exists in the device folder and is not a file")
        return Upload(lambda: self.target_folder([agent, *parts[:-1]]) / parts[-1], max_bytes)

    def write_hint(self, agent: str, parts: list[str], project: str) -> None:
        """Keep the project the device resolved for this file, for the inbox connector."""
        folder = self.target_folder([agent, HINTS, *parts[:-1]])
        target = folder / parts[-1]
        data = project.encode("utf-8")
        try:
            if target.read_bytes() == data:
                return
        except OSError:
            pass
        upload = Upload(lambda: target, len(data))
        upload.write(data)
        upload.finish()


class Upload:
    """One file being received, hashed as it arrives. The first SPOOL_BYTES stay in memory, so a
    body refused early (empty, oversize, of the wrong kind) never touches the disk; past that, or
    at the end, the target's folders are made and the bytes go to a hidden temporary file beside
    the target."""

    SPOOL_BYTES = 1 << 20

    def __init__(self, locate, max_bytes: int):
        self._locate = locate  # () -> the target path, its folders made
        self.max_bytes = max_bytes
        self.size = 0
        self._hash = hashlib.sha256()
        self._spool: list[bytes] = []
        self._fd: int | None = None
        self.target: Path | None = None
        self.partial: Path | None = None

    def _open(self) -> None:
        self.target = self._locate()
        self.partial = self.target.with_name(f"{PARTIAL_PREFIX}{secrets.token_hex(8)}.part")
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
        self._fd = os.open(self.partial, flags, FILE_MODE)
        spooled, self._spool = b"".join(self._spool), []
        self._write(spooled)

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]

    def write(self, chunk: bytes) -> None:
        if self.size + len(chunk) > self.max_bytes:
            self.abort()
            raise Refused(413, f"body larger than the inbox's cap of {self.max_bytes} bytes ([inbox] max_upload_mb)")
        self.size += len(chunk)
        self._hash.update(chunk)
        if self._fd is not None:
            self._write(chunk)
            return
        self._spool.append(bytes(chunk))
        if self.size > self.SPOOL_BYTES:
            self._open()

    def finish(self) -> Stored:
        """Flush and rename over the target, or drop the copy when the target has these bytes."""
        digest = self._hash.hexdigest()
        if self._fd is None:  # all of it in memory: compare before writing anything
            self.target = self._locate()
            if _same_content(self.target, self.size, digest):
                self._spool = []
                return Stored(self.target, self.size, digest, changed=False)
            self._open()
        try:
            os.fsync(self._fd)
        finally:
            os.close(self._fd)
            self._fd = None
        if _same_content(self.target, self.size, digest):
            os.unlink(self.partial)
            return Stored(self.target, self.size, digest, changed=False)
        os.utime(self.partial, None)  # the upload time, whatever the device's own clock says
        os.replace(self.partial, self.target)
        _fsync_folder(self.target.parent)
        return Stored(self.target, self.size, digest, changed=True)

    def abort(self) -> None:
        self._spool = []
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if self.partial is not None:
            try:
                os.unlink(self.partial)
            except FileNotFoundError:
                pass


def read_hint(agent_folder: Path, relative: str) -> str | None:
    """The project a device sent with `relative` (a path inside the agent's store), if any."""
    try:
        value = (agent_folder / HINTS / relative).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return value if _PROJECT.match(value) else None


def remove_abandoned_partials(inbox: Path, idle_seconds: float, now: float | None = None) -> tuple[int, int]:
    """Delete the temporary files of uploads a killed server left (`ABANDONED_PARTIAL_S`); returns
    (files, bytes). Each was up to `[inbox] max_upload_mb` and stayed forever: a server the OOM
    killer stops on each big upload filled the disk. Links are not followed; what cannot be
    looked at or removed is left as it is."""
    bound = max(ABANDONED_PARTIAL_S, 10 * idle_seconds)
    now = time.time() if now is None else now
    files = size = 0
    for folder, _, names in os.walk(inbox):
        for name in names:
            if not (name.startswith(PARTIAL_PREFIX) and name.endswith(".part")):
                continue
            path = os.path.join(folder, name)
            try:
                st = os.lstat(path)
                if stat.S_ISREG(st.st_mode) and now - st.st_mtime > bound:
                    os.unlink(path)
                    files, size = files + 1, size + st.st_size
            except OSError:
                continue
    return files, size
