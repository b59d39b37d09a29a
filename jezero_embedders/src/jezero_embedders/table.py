"""The prepared table in its cache folder: `table.npy` (one float32 row per vocabulary id),
`tokenizer.json` (the source's, with its 128-token truncation and padding switched off) and
`manifest.json` (the model id and how the table was made). The manifest is written last and the
folder appears by one rename, so a folder with a manifest is whole; `build` maps the table from
disk, read-only, so many processes share one copy in the page cache."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

TABLE = "table.npy"
TOKENIZER = "tokenizer.json"
MANIFEST = "manifest.json"

# On disk as float32 (31 MB for 30,522 x 256), the type the rows are summed in: float16 would
# halve the file but converting the gathered rows cost a fifth of the embedding time
# (benchmarks/embed/README.md), and the mapped file is shared by every process that reads it.
DISK_DTYPE = np.float32


@dataclass
class Prepared:
    manifest: dict
    table: np.ndarray  # (vocabulary size, dimension), memory-mapped
    tokenizer: Tokenizer


class TableMissing(Exception):
    pass


def write(folder: Path, table: np.ndarray, tokenizer: Tokenizer, manifest: dict) -> None:
    """Writes the three files into a new folder beside `folder`, then puts it in its place."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}."))
    try:
        np.save(work / TABLE, table.astype(DISK_DTYPE))
        tokenizer.save(str(work / TOKENIZER))
        (work / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
        put_in_place(work, folder)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise


def put_in_place(work: Path, folder: Path) -> None:
    """`work`, a finished folder beside `folder`, becomes `folder` (an old one is moved aside first
    and then removed: a reader never sees a half-written folder)."""
    if folder.exists():
        old = folder.with_name(f".{folder.name}.old-{os.getpid()}")
        folder.rename(old)
        work.rename(folder)
        shutil.rmtree(old, ignore_errors=True)
    else:
        work.rename(folder)


def read(folder: Path) -> Prepared:
    """The prepared table in `folder`; TableMissing when there is none or it is not whole."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text())
    except FileNotFoundError:
        raise TableMissing(f"no prepared table in {folder}") from None
    except (OSError, ValueError) as e:
        raise TableMissing(f"{folder / MANIFEST} is unreadable ({e})") from None
    try:
        table = np.load(folder / TABLE, mmap_mode="r")
        tokenizer = Tokenizer.from_file(str(folder / TOKENIZER))
    except Exception as e:  # OSError, numpy's ValueError, and tokenizers' bare Exception on a bad file
        raise TableMissing(f"the prepared table in {folder} is damaged ({type(e).__name__}: {e})") from None
    shape = [manifest.get("vocabulary_size"), manifest.get("dimension")]
    if list(table.shape) != shape or table.dtype != DISK_DTYPE or tokenizer.get_vocab_size() != shape[0]:
        raise TableMissing(f"the prepared table in {folder} does not match its manifest ({table.shape}, {shape})")
    return Prepared(manifest, table, tokenizer)
