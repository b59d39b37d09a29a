"""Write docs/cli.md from the real `--help` of every command, so the reference cannot drift.

    .venv/bin/python scripts/gen_cli_docs.py                    # rewrite docs/cli.md
    .venv/bin/python scripts/gen_cli_docs.py --check            # exit 1 if it is out of date (a test runs this)
    .venv/bin/python scripts/gen_cli_docs.py --check OTHER.md   # the same against another file
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[1] / "docs" / "cli.md"
# A fixed width and no colour, so the text is the same on every machine. Set before typer and rich
# are imported: typer reads TERMINAL_WIDTH once, at import.
os.environ.update({"COLUMNS": "100", "TERMINAL_WIDTH": "100", "NO_COLOR": "1", "TERM": "dumb"})


def help_text(*args: str) -> str:
    """What `jezero ARGS --help` prints, rendered in this process: the same click command tree and
    formatter as a new `jezero` process (one start for all commands, not one each)."""
    from typer.testing import CliRunner

    from jezero.cli import app

    result = CliRunner().invoke(app, [*args, "--help"], prog_name="jezero", catch_exceptions=False)
    if result.exit_code != 0:
        raise RuntimeError(f"jezero {' '.join(args)} --help exited {result.exit_code}:\n{result.output}")
    return "\n".join(line.rstrip() for line in result.stdout.strip("\n").splitlines())


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
    parts = ["# Command reference", "",
             "Generated from `jezero --help` by `scripts/gen_cli_docs.py`; a test fails when it is out of date.",
             "", "```text", help_text(), "```", ""]
    for name in names:
        parts += [f"{'##' if len(name) == 1 else '###'} jezero {' '.join(name)}", "", "```text", help_text(*name), "```", ""]
    return "\n".join(parts)


def main(argv: list[str]) -> int:
    text = render()
    if argv[:1] == ["--check"]:
        doc = Path(argv[1]) if len(argv) > 1 else DOC
        if not doc.exists() or doc.read_text() != text:
            print(f"{doc} is out of date: run scripts/gen_cli_docs.py", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
