from __future__ import annotations

import sys
from pathlib import Path

import pytest


if getattr(sys.modules.get("jezero_summarizers"), "__file__", None) is None:
    # The suite's "core alone" run: this distribution is not installed, so nothing here applies.
    collect_ignore_glob = ["test_*.py"]

# The helper module beside the tests (a name no other distribution's tests use).
sys.path.insert(0, str(Path(__file__).parent))
import summarizer_samples  # noqa: E402


@pytest.fixture(scope="session")
def samples_dir() -> Path:
    if not summarizer_samples.SAMPLES.is_dir():
        pytest.skip(
            f"shared samples not found at {summarizer_samples.SAMPLES} "
            "(they live beside the repository in shared/samples, never in it)"
        )
    return summarizer_samples.SAMPLES


@pytest.fixture(scope="session")
def local_segments(samples_dir) -> dict:
    """One segment per sample (the whole session), read by the local test reader."""
    return {name: summarizer_samples.segment(summarizer_samples.local_session(rel)) for name, rel in summarizer_samples.ALL.items()}


@pytest.fixture(scope="session")
def litellm_module():
    """litellm, imported once for the session the way the llm summarizer imports it (slow: seconds)."""
    import importlib.util

    if importlib.util.find_spec("litellm") is None:  # not importorskip: it would import litellm
        pytest.skip("the llm extra (litellm) is not installed")  # before its cost-map switch is set
    from jezero_summarizers.llm import _litellm

    return _litellm()
