"""The docs that are generated from the code stay in step with it."""

import subprocess
import sys

from jz_support import REPO


def test_cli_reference_is_up_to_date():
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "gen_cli_docs.py"), "--check"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_no_help_text_loses_a_bracketed_word_to_rich_markup():
    # The CLI renders help with Rich markup, which drops an unescaped `[storage]` or `jezero[all]`
    # as an unknown style tag: `--help` read "(default:  url_env)" and "Then set  backend".
    import re

    import typer.main

    from jezero.cli import app

    def texts(cmd, path):
        yield path, cmd.help or ""
        for p in cmd.params:
            yield f"{path} {p.name}", getattr(p, "help", None) or ""
        for name, sub in getattr(cmd, "commands", {}).items():
            yield from texts(sub, f"{path} {name}")

    eaten = [(where, m.group()) for where, text in texts(typer.main.get_group(app), "jezero")
             for m in re.finditer(r"(?<!\\)\[[^\[\]]+\]", text)]
    assert not eaten, f"escape these as \\[...]: {eaten}"
