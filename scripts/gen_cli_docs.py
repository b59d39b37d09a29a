"""Write docs/cli.md from the real `--help` of every command, so the reference cannot drift.

    .venv/bin/python scripts/gen_cli_docs.py          # rewrite docs/cli.md
    .venv/bin/python scripts/gen_cli_docs.py --check  # exit 1 if it is out of date (a test runs this)
"""

from __future__ import annotations

import os
import subprocess
from concurrent.futures import ThreadPoolExecutor
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[1] / "docs" / "cli.md"
# A fixed width and no colour, so the text is the same on every machine.
ENV = {**os.environ, "COLUMNS": "100", "TERMINAL_WIDTH": "100", "NO_COLOR": "1", "TERM": "dumb"}


def help_text(*args: str) -> str:
    out = subprocess.run([sys.executable, "-m", "jezero.cli", *args, "--help"], capture_output=True, text=True,
                         env=ENV, check=True).stdout
    return "\n".join(line.rstrip() for line in out.strip("\n").splitlines())


def commands() -> list[tuple[str, ...]]:
    """Every command, and after a group (`warnings`, `device`) each of its subcommands, whose
    options (`ack --match`, `approve`'s digest) a user acts on too."""
    from jezero.cli import app
    import typer.main

    group = typer.main.get_group(app)
    out: list[tuple[str, ...]] = []
    for name, command in group.commands.items():
        out.append((name,))
        out += [(name, sub) for sub in getattr(command, "commands", {})]
    return out


def render() -> str:
    names = commands()
    # One process per command, a few at once: each start is mostly imports, the same for all.
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 1)) as pool:
        top, *texts = pool.map(lambda args: help_text(*args), [(), *names])
    parts = ["# Command reference", "",
             "Generated from `jezero --help` by `scripts/gen_cli_docs.py`; a test fails when it is out of date.",
             "", "```text", top, "```", ""]
    for name, text in zip(names, texts):
        parts += [f"{'##' if len(name) == 1 else '###'} jezero {' '.join(name)}", "", "```text", text, "```", ""]
    return "\n".join(parts)


def main() -> int:
    text = render()
    if "--check" in sys.argv:
        if not DOC.exists() or DOC.read_text() != text:
            print(f"{DOC} is out of date: run scripts/gen_cli_docs.py", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
