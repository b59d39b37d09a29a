"""The `minilm-static` embedder: its options, its model id, `prepare` (distil the table once, into
the cache folder) and `build` (map the prepared table; never derive or download on a read)."""

from __future__ import annotations

import time
from pathlib import Path

import platformdirs
from pydantic import Field

from jezero.plugin import EmbedderNotReady, FolderPath, Options, read_options

from jezero_embedders import source

NAME = "minilm-static"
DESCRIPTION = (f"static token table distilled once from {source.MODEL} (model2vec's method): "
               "numpy only, about 850 items a second per CPU core; `jezero embed --prepare` makes it")
PREPARE_COMMAND = "jezero embed --prepare"

# Bump when the derivation changes (what is run through the encoder, the pooling, PCA, the
# weighting, the tokenizer settings): the model id changes with it, so old vectors never mix.
METHOD = 1


class MiniLMStaticOptions(Options):
    # Where prepared tables live; default: the user's cache folder for jezero (platformdirs).
    cache_dir: FolderPath | None = None
    # 256 of MiniLM's 384 dimensions keep its paraphrase ranking (benchmarks/embed/README.md)
    # at two thirds of the size of every stored vector.
    dimension: int = Field(256, ge=8, le=384)
    # The SIF coefficient: lower weighs common tokens less. 1e-5 ranked paraphrases better than
    # model2vec's default 1e-4 on the tuning half of benchmarks/embed/pairs.py (MRR 0.45 vs 0.36).
    sif: float = Field(1e-5, gt=0, lt=1)
    # Only the first N vocabulary ids (the most frequent) get a row: a quicker, coarser table,
    # for tests; every other token counts as unknown.
    vocabulary: int | None = Field(None, ge=100)


def parse_options(options: dict | None) -> MiniLMStaticOptions:
    return read_options(MiniLMStaticOptions, options, NAME)


def derivation(o: MiniLMStaticOptions) -> str:
    """The derivation parameters in a name, also the table's folder name."""
    vocab = f"-vocab{o.vocabulary}" if o.vocabulary else ""
    return f"mean-pca{o.dimension}-sif{o.sif:g}{vocab}-m{METHOD}"


def model_id(o: MiniLMStaticOptions, version: str) -> str:
    return f"{NAME}/{source.MODEL}@{source.PACKAGE}-{version}/{derivation(o)}"


def table_folder(o: MiniLMStaticOptions) -> Path:
    root = o.cache_dir or platformdirs.user_cache_path("jezero") / "embedders"
    return root / NAME / derivation(o)


def build(options: dict | None):
    """The embedder over the prepared table, or EmbedderNotReady naming the command to run."""
    from jezero_embedders import table
    from jezero_embedders.static import StaticEmbedder

    o = parse_options(options)
    folder = table_folder(o)
    try:
        prepared = table.read(folder)
    except table.TableMissing as e:
        raise EmbedderNotReady(f"{NAME}: {e}: run `{PREPARE_COMMAND}` (once, about a minute)") from None
    made_from, installed = prepared.manifest["source_version"], source.installed_version()
    if installed is not None and installed != made_from:
        raise EmbedderNotReady(
            f"{NAME}: the table in {folder} was made from {source.PACKAGE} {made_from}, "
            f"{installed} is installed: run `{PREPARE_COMMAND}` again"
        )
    return StaticEmbedder(prepared.manifest["model_id"], prepared.table, prepared.tokenizer)


def prepare(options: dict | None, progress=None) -> str:
    """Distils the table from the installed source model into the cache folder (about 75 s of
    CPU for the whole vocabulary); returns what it did in a line. `progress(done, total)`, when
    given, is called after each batch of tokens."""
    from jezero_embedders import derive, table
    from jezero_embedders.transformer import Encoder

    o = parse_options(options)
    src = source.find()
    started = time.process_time(), time.monotonic()
    encoder = Encoder(src.folder)
    tokenizer = source_tokenizer(src.folder)
    vocab_size = tokenizer.get_vocab_size(with_added_tokens=True)
    ids = derive.kept_ids(tokenizer, o.vocabulary)
    vectors = derive.token_vectors(encoder, tokenizer, ids, progress)
    rows = derive.static_table(vectors, ids, vocab_size, o.dimension, o.sif)
    cpu, wall = time.process_time() - started[0], time.monotonic() - started[1]
    manifest = {
        "model_id": model_id(o, src.version),
        "source_model": source.MODEL,
        "source_package": source.PACKAGE,
        "source_version": src.version,
        "method": METHOD,
        "dimension": o.dimension,
        "sif": o.sif,
        "tokens": int(len(ids)),
        "vocabulary_size": int(vocab_size),
        "prepare_cpu_seconds": round(cpu, 1),
        "prepare_seconds": round(wall, 1),
    }
    folder = table_folder(o)
    table.write(folder, rows, tokenizer, manifest)
    return (f"{NAME}: distilled {len(ids):,} tokens of {source.MODEL} ({source.PACKAGE} {src.version}) "
            f"into {folder} in {wall:.0f} s ({cpu:.0f} s CPU); model id {manifest['model_id']}")


def source_tokenizer(folder: Path):
    """The source model's tokenizer as the table uses it: every token of a text, no padding."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    # The file pads and truncates to 128 tokens (the sentence model's window); a static table
    # has no window, so a long item counts every token.
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer
