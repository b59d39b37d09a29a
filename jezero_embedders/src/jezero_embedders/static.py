"""The static embedder: a text's vector is the L2-normalised sum of its tokens' rows in the
prepared table (the rows already carry their SIF weight). Tokenizing is the model's own
WordPiece, in Rust and in parallel; the rest is one gather and one sum per batch. Queries and
items are embedded alike (the table is symmetric)."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain

import numpy as np
from tokenizers import Tokenizer

# Token rows gathered at once: bounds the float32 working memory to 16 MB at 256 dimensions
# whatever the texts' lengths (a long message window is summed in several slices).
_SLICE = 16_384


class StaticEmbedder:
    def __init__(self, model_id: str, table: np.ndarray, tokenizer: Tokenizer):
        self.model_id = model_id
        self.dimension = int(table.shape[1])
        self._table = table
        self._tokenizer = tokenizer

    def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        texts = [t if isinstance(t, str) else str(t) for t in texts]
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        encodings = self._tokenizer.encode_batch_fast(texts, add_special_tokens=False)
        lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=len(texts))
        total = int(lengths.sum())
        ids = np.fromiter(chain.from_iterable(e.ids for e in encodings), dtype=np.int64, count=total)
        owner = np.repeat(np.arange(len(texts)), lengths)  # the text each token belongs to
        for start in range(0, total, _SLICE):
            rows = self._table[ids[start:start + _SLICE]].astype(np.float32)
            who = owner[start:start + _SLICE]
            firsts = np.concatenate(([0], np.flatnonzero(np.diff(who)) + 1))
            out[who[firsts]] += np.add.reduceat(rows, firsts, axis=0)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        # A text with no known token (empty, only spaces, only [UNK]) stays all zeros.
        np.divide(out, norms, out=out, where=norms > 0)
        return out
