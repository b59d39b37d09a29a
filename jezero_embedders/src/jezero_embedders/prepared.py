"""What the embedders whose `prepare` copies a model into a cache folder share: the digest of a
copied file, and the manifest that folder holds (checked on every build)."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path

from jezero.plugin import EmbedderNotReady

PREPARE_COMMAND = "jezero embed --prepare"
MANIFEST = "manifest.json"


def digest(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def copy_checked(source: Path, work: Path, names: Iterable[str]) -> tuple[dict[str, str], dict[str, int]]:
    """Each named file (a path relative to `source`) copied into `work`, its copy's SHA-256 checked
    against the source's; the digests and the sizes, for the manifest. OSError when a file changed
    while it was copied."""
    digests, sizes = {}, {}
    for name in names:
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source / name, work / name)
        digests[name] = digest(work / name)
        if digests[name] != digest(source / name):
            raise OSError(f"{name} changed while it was copied from {source}")
        sizes[name] = (work / name).stat().st_size
    return digests, sizes


def read_manifest(folder: Path, name: str, required: Callable[[dict], Iterable[str]]) -> dict:
    """The prepared model's manifest, or EmbedderNotReady naming the command to run: every file it
    records a size of, and every one `required(manifest)` names, must be in `folder` at the size
    prepared."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text())
    except FileNotFoundError:
        raise EmbedderNotReady(f"{name}: no prepared model in {folder}: run `{PREPARE_COMMAND}` "
                               "(once, a few seconds)") from None
    except (OSError, ValueError) as e:
        raise EmbedderNotReady(f"{name}: {folder / MANIFEST} is unreadable ({e}): run `{PREPARE_COMMAND}` again") from None
    sizes = manifest.get("sizes", {})
    bad = [f for f in dict.fromkeys([*required(manifest), *sizes])
           if not (folder / f).is_file() or (folder / f).stat().st_size != sizes.get(f)]
    if bad:
        raise EmbedderNotReady(f"{name}: the prepared model in {folder} is damaged "
                               f"({', '.join(bad)} missing or not the size prepared): run `{PREPARE_COMMAND}` again")
    return manifest
