"""Jezero: a shared memory of past work for coding agents."""

from __future__ import annotations

from typing import Any

__all__ = ["hookimpl", "__version__"]


def __getattr__(name: str) -> Any:
    # Looked up on first use: a cold `jezero search` loads neither pluggy nor package metadata.
    if name == "hookimpl":
        from jezero.hookspecs import hookimpl

        return hookimpl
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("jezero")
        except PackageNotFoundError:  # running from a source tree that is not installed
            return "0.0.0"
    raise AttributeError(f"module 'jezero' has no attribute {name!r}")
