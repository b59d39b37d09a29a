"""Copy the client core into every agent plugin folder under clients/.

clients/core/ holds the one source of the client logic (jezero_client.py: standard library only,
Python 3.9+). Each agent plugin, clients/<agent>/, installs on its own through its agent's
mechanism, so it must carry a copy: this script writes it, and `--check` (run by the tests)
fails when a copy differs from the core, so a fix made in a copy cannot silently drift.

    uv run python scripts/build_clients.py          # write the copies
    uv run python scripts/build_clients.py --check  # exit 1 and name each copy that drifted
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORE = "core"
# What every plugin carries, from clients/core/, at the top of its folder.
CORE_FILES = ["jezero_client.py"]


def plugin_folders(clients: Path) -> list[Path]:
    """Every clients/<agent>/ folder except the core itself."""
    if not clients.is_dir():
        return []
    return sorted(p for p in clients.iterdir()
                  if p.is_dir() and p.name != CORE and not p.name.startswith((".", "_")))


def drifted(clients: Path) -> list[Path]:
    """The copies that are missing or differ from the core."""
    found = []
    for folder in plugin_folders(clients):
        for name in CORE_FILES:
            copy = folder / name
            if not copy.is_file() or copy.read_bytes() != (clients / CORE / name).read_bytes():
                found.append(copy)
    return found


def build(clients: Path) -> list[Path]:
    written = []
    for copy in drifted(clients):
        shutil.copy2(clients / CORE / copy.name, copy)
        written.append(copy)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check that every copy matches the core")
    parser.add_argument("--root", type=Path, default=REPO, help="the repository (default: this one)")
    args = parser.parse_args(argv)
    clients = args.root / "clients"
    if args.check:
        stale = drifted(clients)
        for copy in stale:
            print(f"{copy.relative_to(args.root)}: differs from clients/{CORE}/{copy.name} "
                  "(edit the core, then run scripts/build_clients.py)", file=sys.stderr)
        return 1 if stale else 0
    for copy in build(clients):
        print(f"wrote {copy.relative_to(args.root)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
