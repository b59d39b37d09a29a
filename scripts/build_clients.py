"""Copy the client core into every agent plugin folder under clients/.

clients/core/ holds the one source of the client logic (jezero_client.py: standard library only,
Python 3.9+) and jezero_hook.py, the launcher the plugins' hooks run (it imports the core, so Python
keeps the core's compiled form). Each agent plugin, clients/<agent>/, installs on its own through
its agent's mechanism, so it must carry a copy of both: this script writes them, and `--check`
(run by the tests) fails when a copy differs from the core, so a fix made in a copy cannot
silently drift.
A plugin with a skills/ folder also gets the shared skill (clients/core/SKILL.md) as
skills/jezero/SKILL.md, and the server package gets the core as jezero/client_core.py (the app
runs the same rules as the hooks).

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
CORE_FILES = ["jezero_client.py", "jezero_hook.py"]  # the core, and what the hooks run to start it fast


def plugin_folders(clients: Path) -> list[Path]:
    """Every clients/<agent>/ folder except the core itself."""
    if not clients.is_dir():
        return []
    return sorted(p for p in clients.iterdir()
                  if p.is_dir() and p.name != CORE and not p.name.startswith((".", "_")))


SKILL = "SKILL.md"
SERVER_COPY = Path("jezero") / "client_core.py"


def copies(clients: Path) -> list[tuple[Path, Path]]:
    """(source in the core, copy) for every copy the repository carries."""
    pairs = []
    for folder in plugin_folders(clients):
        pairs += [(clients / CORE / name, folder / name) for name in CORE_FILES]
        if (folder / "skills").is_dir() and (clients / CORE / SKILL).is_file():
            pairs.append((clients / CORE / SKILL, folder / "skills" / "jezero" / SKILL))
    package = clients.parent / SERVER_COPY
    if package.parent.is_dir():
        pairs.append((clients / CORE / CORE_FILES[0], package))
    return pairs


def drifted(clients: Path) -> list[Path]:
    """The copies that are missing or differ from the core."""
    return [copy for source, copy in copies(clients)
            if not copy.is_file() or copy.read_bytes() != source.read_bytes()]


def build(clients: Path) -> list[Path]:
    written = []
    stale = set(drifted(clients))
    for source, copy in copies(clients):
        if copy in stale:
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, copy)
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
            print(f"{copy.relative_to(args.root)}: differs from its source in clients/{CORE}/ "
                  "(edit the core, then run scripts/build_clients.py)", file=sys.stderr)
        return 1 if stale else 0
    for copy in build(clients):
        print(f"wrote {copy.relative_to(args.root)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
