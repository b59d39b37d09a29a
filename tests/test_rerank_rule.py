"""The second-stage rule measured by benchmarks/retrieval/rerank.py (branch `rerank12`): the first
N sessions of the fused ranking re-ordered by reciprocal rank over the first stage's order and
each model's best cosine; the sessions past N keep their places."""

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
