"""A transcript read back with less than the library holds (truncated, rewritten shorter, a
line in the middle gone bad) keeps its stored items: jezero.ingest.shrunk."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from fixture_plugins import EchoSummarizer, SummarizerPlugin, TestConnectorPlugin, write_session
from jz_support import needs_plugin
from jezero.config import Config
from jezero.ingest.runner import run_connectors
from jezero.store import open_readonly
from test_pipeline import blocks

NOW = datetime(2026, 3, 1, tzinfo=timezone.utc)


@pytest.fixture
def setup(tmp_path, register_plugin):
    register_plugin(TestConnectorPlugin(), "test-connector")
    register_plugin(SummarizerPlugin(EchoSummarizer()), "test-summarizer")
    sessions = tmp_path / "sessions"
    sessions.mkdir()

    def config(max_input_chars=2000):
        return Config.model_validate({
            "storage": {"path": str(tmp_path / "lib.sqlite3")}, "summarizer": {"name": "echo"},
            "ingest": {"settle_minutes": 0, "max_input_chars": max_input_chars},
            "connectors": [{"name": "local", "type": "testdir", "options": {"path": str(sessions)}}]})

    return config, sessions, tmp_path / "lib.sqlite3"


def stored(library):
    conn = open_readonly(library)
    try:
        return conn.execute("SELECT id, uid, content_hash, title, original FROM items ORDER BY id").fetchall()
    finally:
        conn.close()


def test_a_session_rewritten_shorter_keeps_its_items_and_says_so(setup):
    config, sessions, library = setup
    write_session(sessions, "long", blocks(40, size=200))
    run_connectors(config(), now=NOW)
    before = stored(library)
    assert len(before) > 3
    write_session(sessions, "long", blocks(10, size=200))  # truncated: three quarters gone
    [report] = run_connectors(config(), now=NOW)
    assert stored(library) == before
    assert report.error is None and any("read back with" in w and "long" in w for w in report.warnings)
    [again] = run_connectors(config(), now=NOW)  # the cursor moved: not read (or warned) again
    assert again.sessions_seen == 0 and again.warnings == []


def test_a_session_that_grows_again_is_written_as_before(setup):
    config, sessions, library = setup
    write_session(sessions, "long", blocks(40, size=200))
    run_connectors(config(), now=NOW)
    before = stored(library)
    write_session(sessions, "long", blocks(41, size=200))
    [report] = run_connectors(config(), now=NOW)
    after = stored(library)
    assert report.warnings == [] and report.items_written == 1
    assert [r[:2] for r in after] == [r[:2] for r in before] and after[-1][2] != before[-1][2]


def test_regrouped_segments_still_replace_the_old_ones(setup):
    # Same blocks, another max_input_chars: the old segments are stale, not lost content.
    config, sessions, library = setup
    write_session(sessions, "long", blocks(40, size=200))
    run_connectors(config(2000), now=NOW)
    write_session(sessions, "long", blocks(40, size=200))
    [report] = run_connectors(config(5000), now=NOW)
    after = stored(library)
    assert report.warnings == [] and len(after) == report.items_written
    assert "".join(r[4] for r in after).count("[user]") == 20


@needs_plugin("jezero-connectors-claude")
@pytest.mark.parametrize("damage", ["truncated", "middle line bad", "emptied"])
def test_a_real_claude_transcript_damaged_after_ingest_keeps_its_items(tmp_path, damage):
    from jezero.demo import demo_sessions
    from jezero.plugin.testing import Library
    from jezero_connectors_claude.demo import write_claude

    spec = max(demo_sessions(), key=lambda s: len(s.turns))
    path = write_claude(tmp_path / "projects", spec)
    with Library(tmp_path / "lib", "claude", {"path": str(tmp_path / "projects")}) as lib:
        lib.run()
        library = lib.config.library_path()
        before = stored(library)
        lines = path.read_bytes().split(b"\n")
        if damage == "truncated":
            path.write_bytes(b"\n".join(lines[: len(lines) // 2]) + b"\n")
        elif damage == "middle line bad":
            lines[len(lines) // 3] = b'{"type": "user", "message": '
            path.write_bytes(b"\n".join(lines))
        else:
            path.write_bytes(b"")
        report = lib.run()
        assert stored(library) == before
        assert report["error"] is None and any("read back with" in w for w in report["warnings"])
