"""Imports the first-party plugin packages before pytest collects their tests. Each plugin folder
has the same name as its package; under --import-mode=importlib pytest would otherwise register
the folder itself as an empty namespace module and hide the real package (in src/)."""

import importlib

for _name in ("jezero_connectors_claude", "jezero_connectors_codex", "jezero_connectors_copilot", "jezero_connectors_gemini",
              "jezero_connectors_inbox", "jezero_connectors_opencode", "jezero_summarizers", "jezero_index_tantivy", "jezero_embedders"):
    try:
        importlib.import_module(_name)
    except ImportError:  # a core-only run: those tests skip or are not collected
        pass
