"""Jezero embedders: `minilm-static`, a static token table distilled once from all-MiniLM-L6-v2
(see minilm_static.py). Importing the plugin and registering it imports neither numpy nor
tokenizers; `build` and `prepare` do, when the semantic lane asks for them."""

from jezero.plugin import hookimpl

from jezero_embedders import minilm_static

__all__ = ["register_embedders"]


@hookimpl
def register_embedders(register):
    register(minilm_static.NAME, minilm_static.build, description=minilm_static.DESCRIPTION,
             prepare=minilm_static.prepare)
