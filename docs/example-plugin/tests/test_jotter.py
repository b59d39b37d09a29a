"""The Jotter connector through Jezero's real pipeline, with the plugin test kit."""

from pathlib import Path

import jezero_connectors_jotter as jotter
from jezero.plugin.testing import Library, demo_library

SESSIONS = Path(__file__).resolve().parents[1] / "sessions"


def test_ingests_and_finds_its_sessions(tmp_path):
    with Library(tmp_path, "jotter", {"path": str(SESSIONS)}, plugin=jotter) as library:
        report = library.run()
        assert report["sessions_written"] == 2 and not report["error"]
        hits = library.search("too many open files")
        assert hits and hits[0]["title"].startswith("The nightly export")
        assert library.run()["sessions_written"] == 0  # the cursor: nothing new


def test_a_misspelt_option_is_reported(tmp_path):
    with Library(tmp_path, "jotter", {"pth": str(SESSIONS)}, plugin=jotter) as library:
        assert library.problems() == ["connectors[0].options.pth: unknown option; did you mean 'path'?"]


def test_the_demo_writer_and_the_reader_agree(tmp_path):
    with demo_library(tmp_path, "jotter", plugin=jotter) as library:
        assert library.run()["sessions_written"] == 8
        assert library.search("docker system prune")
