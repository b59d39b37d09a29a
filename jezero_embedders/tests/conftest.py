from __future__ import annotations

import sys
from pathlib import Path

import pytest

if getattr(sys.modules.get("jezero_embedders"), "__file__", None) is None:
    # The suite's "core alone" run: this distribution is not installed, so nothing here applies.
    collect_ignore_glob = ["test_*.py"]

sys.path.insert(0, str(Path(__file__).parent))
from embedder_kit import TEST_VOCABULARY, offline_run  # noqa: E402


@pytest.fixture(scope="session")
def source_model():
    from jezero_embedders import source

    if source.installed_version() is None:
        pytest.skip(f"the source model is not installed ({source.INSTALL})")
    return source.find()


@pytest.fixture(scope="session")
def prepared(source_model, tmp_path_factory) -> dict:
    """One prepare for the session, through the plugin host in a fresh offline interpreter:
    {"options": ..., "report": what the run printed}."""
    options = {"cache_dir": str(tmp_path_factory.mktemp("embedder-cache")), "vocabulary": TEST_VOCABULARY}
    return {"options": options, "report": offline_run(options, "prepare")}


@pytest.fixture(scope="session")
def embedder(prepared):
    from jezero import plugins

    return plugins.embedder_types()["minilm-static"].build(prepared["options"])
