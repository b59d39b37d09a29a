"""Jezero: a shared memory of past work for coding agents."""

from importlib.metadata import PackageNotFoundError, version

from jezero.hookspecs import hookimpl

try:
    __version__ = version("jezero")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0"

__all__ = ["hookimpl", "__version__"]
