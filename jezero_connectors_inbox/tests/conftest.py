from __future__ import annotations

from pathlib import Path

import pytest

from jezero.models import ConnectorContext

# The shared samples live beside the repository (../shared/samples), never inside it.
SAMPLES = Path(__file__).resolve().parents[3] / "shared" / "samples"


@pytest.fixture
def context() -> ConnectorContext:
    """A connector context whose `warn` calls are kept in `context.warned`."""
    warned: list[str] = []
    ctx = ConnectorContext(name="inbox-test", warn=warned.append)
    ctx.warned = warned
    return ctx


@pytest.fixture
def samples() -> Path:
    if not (SAMPLES / "claude").is_dir() or not (SAMPLES / "codex").is_dir():
        pytest.skip(f"shared samples not found at {SAMPLES} (they live beside the repository, never in it)")
    return SAMPLES
