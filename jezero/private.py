"""Files only their owner may read. The library holds every item of every source, the config
names the clients, and the inbox holds other devices' transcripts: other local users must not
read them. Everything Jezero creates is private by default (folders 0700, files 0600); what
already exists keeps the mode its owner gave it, so an admin who shares a library on purpose
(a group-readable folder) is not overruled."""

from __future__ import annotations

import os
from pathlib import Path

FOLDER_MODE = 0o700
FILE_MODE = 0o600
# The process umask the CLI and the server run under: whatever else they create (lock files,
# SQLite's -wal and -shm, a future inbox) is private too.
UMASK = 0o077


def private_folder(path: Path) -> Path:
    """Make `path` (and any missing parents) a folder; the ones created here are 0700."""
    path = Path(path)
    missing = []
    p = path
    while not p.exists():
        missing.append(p)
        if p.parent == p:
            break
        p = p.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=FOLDER_MODE)
        except FileExistsError:  # made by someone else meanwhile: theirs to keep
            continue
        os.chmod(folder, FOLDER_MODE)  # mkdir's mode passes through the umask
    return path


def private_file(path: Path) -> bool:
    """Create `path` empty with mode 0600 if it does not exist (before SQLite or a writer opens
    it, so it is never readable by others, not even for a moment). True if it was created."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    except FileExistsError:
        return False
    os.close(fd)
    return True


def write_private_text(path: Path, text: str) -> None:
    """Write a new file that only its owner may read (the folder made private if missing)."""
    private_folder(Path(path).parent)
    private_file(path)
    Path(path).write_text(text, encoding="utf-8")
