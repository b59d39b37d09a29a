"""Jezero embedders: `minilm-static`, a static token table distilled once from all-MiniLM-L6-v2
(see minilm_static.py), and `minilm`, the full all-MiniLM-L6-v2 encoder run on every text (see
minilm.py). Importing the plugin and registering them imports neither numpy nor tokenizers;
`build` and `prepare` do, when the semantic lane asks for them."""

from jezero.plugin import hookimpl

from jezero_embedders import minilm, minilm_static

__all__ = ["register_embedders"]


@hookimpl
def register_embedders(register):
    register(minilm_static.NAME, minilm_static.build, description=minilm_static.DESCRIPTION,
             prepare=minilm_static.prepare)
    register(minilm.NAME, minilm.build, description=minilm.DESCRIPTION, prepare=minilm.prepare)
