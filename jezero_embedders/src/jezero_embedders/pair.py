"""The `e5-minilm` embedder: `e5-small` and `minilm` together. A text's vector is the two models'
unit vectors side by side, each at the square root of half (768 dimensions, a unit vector). The
search ranks the sessions by each model's own ranking, fused by reciprocal rank (`rank_k`;
query/vectors.py VectorLane._ranks_fused reads the embedder's `part_slices` and `rank_k`): the
two models miss different chat questions, and a session that one ranks first stays near the top
where the other ranks it low (benchmarks/retrieval/README.md, 2026-12-04, branch `sem9`: the
similarity of the whole vector, the two cosines averaged, ranks worse than e5-small alone).

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
DESCRIPTION = ("e5-small and minilm side by side (768 dimensions), each model's ranking fused: the best "
               "chat ranking measured, at the cost of both models; `jezero embed --prepare` readies them")

# Bump when what a text's vector is changes: the model id changes with it, so old vectors never mix.
METHOD = 1
PARTS = (e5_small, minilm)


class PairOptions(Options):
    # Where the two prepared models live (each in its own folder under it); default: the user's
    # cache folder for jezero (platformdirs), as for each model alone.
    cache_dir: FolderPath | None = None
    # The search ranks the sessions by each model's own ranking, fused as 1 / (rank_k + rank)
    # summed over the two (query/vectors.py VectorLane._ranks_fused). 5 was chosen on half A of
    # the benchmark's chats (1, 2, 5, 10, 20, 60 measured). It is read at search time: the stored
    # vectors do not depend on it (the model id does not name it), so it changes without `jezero embed`.
    rank_k: int = Field(5, ge=1)


def parse_options(options: dict | None) -> PairOptions:
    return read_options(PairOptions, options, NAME)


def _part_options(o: PairOptions) -> dict:
    return {"cache_dir": str(o.cache_dir)} if o.cache_dir else {}


def model_id(ids: Sequence[str]) -> str:
    return f"{NAME}/{'+'.join(ids)}/m{METHOD}"


def build(options: dict | None):
    """Both models' embedders, or the first one's EmbedderNotReady (naming the command to run)."""
    o = parse_options(options)
    parts = [module.build(_part_options(o)) for module in PARTS]
    return PairEmbedder(parts, (0.5, 0.5), rank_k=o.rank_k)


def prepare(options: dict | None, progress=None) -> str:
    o = parse_options(options)
    return "\n".join(module.prepare(_part_options(o), progress) for module in PARTS)


class PairEmbedder:
    """Each part's rows made unit length (a zero row stays zero), scaled by the square root of its
    share, side by side: the dot product of two such rows is the parts' cosines averaged by their
    shares, and with the other parts' dimensions of a query set to zero, one part's cosine alone."""

    def __init__(self, parts, shares: Sequence[float], rank_k: int | None = None):
        self.parts = list(parts)
        self.scales = [math.sqrt(s) for s in shares]
        self.dimension = sum(int(p.dimension) for p in self.parts)
        self.rank_k = rank_k
        # each model's dimensions in the vector, for the lane's fusion of their rankings
        bounds = [0]
        for p in self.parts:
            bounds.append(bounds[-1] + int(p.dimension))
        self.part_slices = list(zip(bounds, bounds[1:]))
        self.model_id = model_id([str(p.model_id) for p in self.parts])

    def embed(self, texts: Sequence[str], *, query: bool = False):
        import numpy as np

        texts = list(texts)
        blocks = []
        for part, scale in zip(self.parts, self.scales):
            rows = np.asarray(part.embed(texts, query=query), dtype=np.float32).reshape(len(texts), int(part.dimension))
            norms = np.linalg.norm(rows, axis=1, keepdims=True)
            blocks.append(np.divide(rows, norms, out=np.zeros_like(rows), where=norms > 0) * np.float32(scale))
        return np.concatenate(blocks, axis=1) if blocks else np.zeros((len(texts), self.dimension), np.float32)
