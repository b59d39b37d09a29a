"""The docs that are generated from the code stay in step with it."""

import os
import subprocess
import sys

from jz_support import REPO, jezero_command


def test_cli_reference_is_up_to_date():
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "gen_cli_docs.py"), "--check"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_the_cli_reference_check_fails_on_a_stale_copy(tmp_path):
    # One option's help differing from docs/cli.md (here `search --limit`'s, as if the code had
    # changed and not the doc) fails the check.
    doc = (REPO / "docs" / "cli.md").read_text()
    line = next(line for line in doc.splitlines() if "--limit" in line)
    stale = tmp_path / "cli.md"
    stale.write_text(doc.replace(line, line + " (changed)", 1))
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "gen_cli_docs.py"), "--check", str(stale)],
                          capture_output=True, text=True)
    assert proc.returncode == 1, proc.stderr
    assert "is out of date" in proc.stderr


def test_the_cli_reference_is_what_a_real_process_prints():
    # The script renders every command's help in its own process (one start, not one per command):
    # a real `jezero search --help` at the same width prints the very text docs/cli.md holds.
    env = {**os.environ, "COLUMNS": "100", "TERMINAL_WIDTH": "100", "NO_COLOR": "1", "TERM": "dumb"}
    out = subprocess.run([*jezero_command(), "search", "--help"], capture_output=True, text=True, env=env,
                         check=True).stdout
    text = "\n".join(line.rstrip() for line in out.strip("\n").splitlines())
    assert f"## jezero search\n\n```text\n{text}\n```\n" in (REPO / "docs" / "cli.md").read_text()


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


def test_the_readme_lists_every_config_key_once():
    # README.md's "Configuration" block is the config reference: every key of every section, with
    # its default. A key added to jezero/config.py without a line there fails here.
    import re

    from jezero import config

    text = (REPO / "README.md").read_text(encoding="utf-8")
    block = text.split("## Configuration", 1)[1].split("```toml", 1)[1].split("```", 1)[0]
    import tomllib

    tomllib.loads(block)  # a reader copies from it
    listed, section = {}, None
    for line in block.splitlines():
        head = re.match(r"^\[\[?([a-z_]+)\]\]?", line)
        key = re.match(r"^(?:# )?([a-z_0-9]+) = ", line)
        if head:
            section = head.group(1)
            listed.setdefault(section, [])
        elif key and section:
            listed[section].append(key.group(1))
    models = {name: field.annotation for name, field in config.Config.model_fields.items()}
    for name, annotation in models.items():
        model = annotation.__args__[0] if name in ("connectors", "clients") else annotation
        keys = listed.get(name)
        assert keys is not None, f"README's config block has no [{name}]"
        assert sorted(keys) == sorted(set(keys)), f"[{name}] lists a key twice: {keys}"
        assert set(keys) == set(model.model_fields), (name, set(model.model_fields) ^ set(keys))
    assert set(listed) == set(models)
