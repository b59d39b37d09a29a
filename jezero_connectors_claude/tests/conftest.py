from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

from jezero.models import ConnectorContext

# The shared samples live beside the repository (../shared/samples), never inside it.
SAMPLES = Path(__file__).resolve().parents[3] / "shared" / "samples"


def _unshadow(name: str = "jezero_connectors_claude") -> None:
    """With --import-mode=importlib, pytest names this file `jezero_connectors_claude.tests.
    conftest` and registers the distribution folder (/work/main/jezero_connectors_claude, no
    __init__.py) as the module `jezero_connectors_claude`, which hides the real package (in src/)
    from the tests and from the plugin host's entry-point loading. Put the real package back,
    keeping the `tests` child pytest attached."""
    module = sys.modules.get(name)
    if module is None or getattr(module, "__file__", None) is not None:
        return
    del sys.modules[name]
    real = importlib.import_module(name)
    tests = sys.modules.get(f"{name}.tests")
    if tests is not None and not hasattr(real, "tests"):
        real.tests = tests


_unshadow()


@pytest.fixture
def context() -> ConnectorContext:
    """A connector context whose `warn` calls are kept in `context.warned`."""
    warned: list[str] = []
    ctx = ConnectorContext(name="claude-test", warn=warned.append)
    ctx.warned = warned
    return ctx


@pytest.fixture
def samples() -> Path:
    if not (SAMPLES / "claude").is_dir():
        pytest.skip(f"shared samples not found at {SAMPLES} (they live beside the repository, never in it)")
    return SAMPLES / "claude"
