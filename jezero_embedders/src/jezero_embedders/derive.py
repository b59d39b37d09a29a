"""Distilling a static table from a sentence encoder, model2vec's method (Minish Lab, 2024): every
vocabulary token goes through the encoder once on its own (`[CLS] token [SEP]`, mean-pooled), the
vectors are reduced by PCA, and each row is weighted by how rare its token is (SIF, with token
frequencies estimated from the vocabulary's order by Zipf's law). A text's vector is then the
normalised sum of its tokens' rows: a lookup, no network, no transformer at read time."""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
from tokenizers import Tokenizer

from jezero_embedders.transformer import Encoder

# Tokens the table leaves at zero: the special tokens (a text is embedded without them) and the
# never-trained `[unusedN]` slots of the BERT vocabulary (model2vec drops the same).
_UNUSED = re.compile(r"\[unused\d+\]")

# Tokens per encoder call: 3 positions each, so a batch is a few MB of activations.
_BATCH = 2048


def kept_ids(tokenizer: Tokenizer, limit: int | None = None) -> np.ndarray:
    """The ids the table gives a row, in id order (the vocabulary's frequency order for BERT's
    WordPiece); `limit` keeps only the first so many (a smaller, quicker table)."""
    vocab = tokenizer.get_vocab(with_added_tokens=True)
    special = {t.content for t in tokenizer.get_added_tokens_decoder().values() if t.special}
    ids = sorted(i for t, i in vocab.items() if t not in special and not _UNUSED.fullmatch(t))
    return np.asarray(ids[:limit] if limit else ids, dtype=np.int64)


def token_vectors(encoder: Encoder, tokenizer: Tokenizer, ids: np.ndarray,
                  progress: Callable[[int, int], None] | None = None) -> np.ndarray:
    """Each token id run alone through the encoder between `[CLS]` and `[SEP]`, mean-pooled over
    the three positions, as the sentence model pools a text: (len(ids), width) float32."""
    cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    out = np.empty((len(ids), encoder.word_embeddings.shape[1]), dtype=np.float32)
    mask = np.ones((_BATCH, 3), dtype=np.int64)
    for start in range(0, len(ids), _BATCH):
        chunk = ids[start:start + _BATCH]
        batch = np.stack([np.full(len(chunk), cls), chunk, np.full(len(chunk), sep)], axis=1)
        out[start:start + len(chunk)] = encoder.mean_pooled(batch, mask[:len(chunk)])
        if progress:
            progress(start + len(chunk), len(ids))
    return out


def pca(vectors: np.ndarray, dimension: int) -> np.ndarray:
    """The vectors centred and projected on their `dimension` main axes, each axis signed so its
    largest score is positive (the same table from the same input, whatever the eigen solver)."""
    if not 0 < dimension <= vectors.shape[1]:
        raise ValueError(f"dimension must be between 1 and {vectors.shape[1]}, not {dimension}")
    centred = vectors - vectors.mean(axis=0)
    cov = centred.T.astype(np.float64) @ centred / max(len(vectors) - 1, 1)
    _, axes = np.linalg.eigh(cov)  # ascending eigenvalues
    axes = axes[:, ::-1][:, :dimension]
    scores = centred @ axes.astype(np.float32)
    signs = np.sign(scores[np.abs(scores).argmax(axis=0), np.arange(dimension)])
    return (scores * signs).astype(np.float32)


def sif_weights(count: int, sif: float) -> np.ndarray:
    """SIF weights a / (a + p(token)), with p from Zipf's law on the token's rank (its place in
    the vocabulary): common tokens ("the", ".") count little, rare ones fully."""
    inverse_rank = 1.0 / np.arange(2, count + 2)
    p = inverse_rank / inverse_rank.sum()
    return (sif / (sif + p)).astype(np.float32)


def static_table(vectors: np.ndarray, ids: np.ndarray, vocab_size: int, dimension: int, sif: float) -> np.ndarray:
    """The table: one row per vocabulary id, (vocab_size, dimension) float32, the rows of `ids`
    reduced and weighted from `vectors`, every other row zero."""
    table = np.zeros((vocab_size, dimension), dtype=np.float32)
    table[ids] = pca(vectors, dimension) * sif_weights(len(ids), sif)[:, None]
    return table
