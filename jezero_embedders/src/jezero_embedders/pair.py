"""The `e5-minilm` embedder: `e5-small` and `minilm` together. A text's vector is the two models'
unit vectors side by side, each scaled by the square root of its share (768 dimensions, a unit
vector), so the similarity of two such vectors is the two models' cosines averaged by their
shares: `share * cos_e5 + (1 - share) * cos_minilm`. The two models miss different questions
(benchmarks/retrieval/README.md, 2026-12-04, branch `sem9`): where one ranks the right window
low the other often ranks it high, and the average keeps it nearer the top than either alone.

It costs what both cost (e5-small's engine and minilm's numpy encoder, one after the other) and
stores twice the dimensions. `prepare` prepares both models in the one cache folder; `build`
builds both, and says which is not ready."""

from __future__ import annotations

import math
from collections.abc import Sequence

from pydantic import Field

from jezero.plugin import FolderPath, Options, read_options

from jezero_embedders import e5_small, minilm

NAME = "e5-minilm"
DESCRIPTION = ("e5-small and minilm averaged (their unit vectors side by side, 768 dimensions): the best "
               "chat ranking measured, at the cost of both models; `jezero embed --prepare` readies them")

# Bump when what a text's vector is changes: the model id changes with it, so old vectors never mix.
METHOD = 1
PARTS = (e5_small, minilm)


class PairOptions(Options):
    # Where the two prepared models live (each in its own folder under it); default: the user's
    # cache folder for jezero (platformdirs), as for each model alone.
    cache_dir: FolderPath | None = None
    # e5-small's share of the similarity; minilm has the rest.
    e5_share: float = Field(0.5, gt=0.0, lt=1.0)


def parse_options(options: dict | None) -> PairOptions:
    return read_options(PairOptions, options, NAME)


def _part_options(o: PairOptions) -> dict:
    return {"cache_dir": str(o.cache_dir)} if o.cache_dir else {}


def model_id(share: float, ids: Sequence[str]) -> str:
    return f"{NAME}/{'+'.join(ids)}/s{share:g}-m{METHOD}"


def build(options: dict | None):
    """Both models' embedders, or the first one's EmbedderNotReady (naming the command to run)."""
    o = parse_options(options)
    parts = [module.build(_part_options(o)) for module in PARTS]
    return PairEmbedder(parts, (o.e5_share, 1.0 - o.e5_share))


def prepare(options: dict | None, progress=None) -> str:
    o = parse_options(options)
    return "\n".join(module.prepare(_part_options(o), progress) for module in PARTS)


class PairEmbedder:
    """Each part's rows made unit length (a zero row stays zero), scaled by the square root of its
    share, side by side. A text that one part gives zeros for (only spaces) is zeros in both."""

    def __init__(self, parts, shares: Sequence[float]):
        self.parts = list(parts)
        self.scales = [math.sqrt(s) for s in shares]
        self.dimension = sum(int(p.dimension) for p in self.parts)
        self.model_id = model_id(shares[0], [str(p.model_id) for p in self.parts])

    def embed(self, texts: Sequence[str], *, query: bool = False):
        import numpy as np

        texts = list(texts)
        blocks = []
        for part, scale in zip(self.parts, self.scales):
            rows = np.asarray(part.embed(texts, query=query), dtype=np.float32).reshape(len(texts), int(part.dimension))
            norms = np.linalg.norm(rows, axis=1, keepdims=True)
            blocks.append(np.divide(rows, norms, out=np.zeros_like(rows), where=norms > 0) * np.float32(scale))
        return np.concatenate(blocks, axis=1) if blocks else np.zeros((len(texts), self.dimension), np.float32)
