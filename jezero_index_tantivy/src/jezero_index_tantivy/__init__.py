"""Jezero search index engine `tantivy`: a derived index beside the library file, built with the
official tantivy bindings, chosen by `[search] engine = "tantivy"`. See README.md."""

from jezero.plugin import hookimpl

from jezero_index_tantivy.index import TantivyIndex, folder_for

__all__ = ["TantivyIndex", "folder_for", "register_index_engines"]


@hookimpl
def register_index_engines(register):
    register("tantivy", TantivyIndex,
             description="tantivy index beside the library (words with column weights, trigrams for fragments)")
