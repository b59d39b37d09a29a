"""The plugin registers both summarizers through the host, and stays light: importing it, listing
the summarizers, building both and running the offline one never imports litellm."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
from jezero import plugins
from jezero.config import SummarizerConfig
from jezero.models import Summarizer

pytestmark = pytest.mark.needs_plugins  # this distribution must be installed


def test_both_summarizers_are_registered_by_this_plugin():
    types = plugins.summarizer_types()
    assert {"offline", "llm"} <= set(types)
    for name in ("offline", "llm"):
        assert types[name].plugin == "jezero_summarizers"
        assert types[name].description
    built = types["offline"].build(SummarizerConfig())
    assert isinstance(built, Summarizer) and built.name == "offline"


def test_no_litellm_import_until_an_llm_call(tmp_path):
    code = textwrap.dedent("""
        import sys
        from datetime import datetime, timezone
        from jezero import plugins
        from jezero.config import SummarizerConfig
        from jezero.models import Block, Segment, Session

        import jezero_summarizers
        types = plugins.summarizer_types()
        offline = types["offline"].build(SummarizerConfig())
        now = datetime.now(timezone.utc)
        session = Session(id="s", agent="claude-code", blocks=[], cursor_key="k", cursor_value=1, cwd="/tmp/shop")
        blocks = [Block("user", "text", "Why does npm run build fail with ENOENT?"),
                  Block("assistant", "tool_call", "npm run build", tool="Bash"),
                  Block("tool", "tool_result", "Error: ENOENT: no such file or directory, open 'dist/x.js'", tool="Bash", is_error=True)]
        segment = Segment("u", "src", session, 0, blocks, "text", "hash", now)
        summary, usage = offline.summarize(segment)
        assert summary.atoms, summary
        llm = types["llm"].build(SummarizerConfig(name="llm", api_key_env="JEZERO_TEST_KEY"))
        assert llm.model == "openai/gpt-4o-mini"
        assert "litellm" not in sys.modules, "litellm was imported"
        print("ok")
    """)
    env = dict(os.environ, JEZERO_TEST_KEY="sk-dummy")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
