"""Helpers the tests import by name (conftest modules cannot be imported reliably: every plugin
folder has its own)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO.parent / "shared" / "samples"


def jezero_command() -> list[str]:
    script = Path(sys.executable).parent / "jezero"
    return [str(script)] if script.exists() else [sys.executable, "-m", "jezero.cli"]


def needs_samples():
    return pytest.mark.skipif(not SAMPLES.is_dir(), reason=f"sample transcripts not found at {SAMPLES} (shared/ is absent)")


def needs_plugin(dist: str):
    from importlib.metadata import PackageNotFoundError, version

    try:
        version(dist)
        missing = False
    except PackageNotFoundError:
        missing = True
    return pytest.mark.skipif(missing, reason=f"{dist} is not installed (core-only run)")


def stored_texts(library: Path) -> dict[str, str]:
    """Each stored session's text (its items' originals in segment order), by session id."""
    from jezero.store import open_readonly

    conn = open_readonly(library)
    try:
        rows = conn.execute("SELECT session_id, original FROM items ORDER BY session_id, segment_index").fetchall()
    finally:
        conn.close()
    out: dict[str, str] = {}
    for sid, text in rows:
        out[sid] = out.get(sid, "") + text
    return out
