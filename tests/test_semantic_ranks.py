"""The vector lane over an embedder of two models side by side (query/vectors.py
VectorLane._ranks_fused; jezero_embedders' `e5-minilm`): with `rank_k` set, each model's own
ranking of the sessions, fused by reciprocal rank, instead of their averaged similarity. A real
library ingested through the connector; the embedder is this file's, two 2-dimension "models"
whose cosines with the query are fixed per session, so the two orders are known in advance:

| session | model A | model B | averaged | ranks (K 1) |
|---|---|---|---|---|
| xray   | 0.90 (1st) | 0.00 (3rd) | 0.45 | 1/2 + 1/4 |
| yankee | 0.80 (2nd) | 0.80 (2nd) | 0.80 | 1/3 + 1/3 |
| zulu   | 0.00 (3rd) | 0.90 (1st) | 0.45 | 1/2 + 1/4 |

Averaged, `yankee` (second in both) leads; by ranks, the two sessions that one model ranks first
lead it."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("numpy", reason="the semantic lane needs numpy (pip install 'jezero[semantic]'; core-only run)")
pytest.importorskip("sqlite_vec", reason="the semantic lane needs sqlite-vec (pip install 'jezero[semantic]'; core-only run)")

from jezero.plugin import hookimpl  # noqa: E402
from jezero.query import vectors  # noqa: E402
from jezero.store import open_readonly  # noqa: E402
from test_semantic import config, find, ingest, plugins_in, session  # noqa: E402, F401

QUESTION = "which one was it"
COSINES = {"xray": (0.9, 0.0), "yankee": (0.8, 0.8), "zulu": (0.0, 0.9)}


class TwoViews:
    """Two "models" of 2 dimensions each, side by side, each at the square root of half: the
    query is (1, 0) in both; a session's texts (found by its word) are at its fixed cosines."""

    def __init__(self, rank_k=None):
        self.dimension, self.model_id = 4, "two-views-v1"
        self.part_slices, self.rank_k = [(0, 2), (2, 4)], rank_k

    def embed(self, texts, *, query=False):
        import numpy as np

        rows = np.zeros((len(texts), 4), dtype=np.float32)
        half = math.sqrt(0.5)
        for r, text in enumerate(texts):
            if query or text == QUESTION:
                rows[r] = [half, 0.0, half, 0.0]
                continue
            for word, (a, b) in COSINES.items():
                if word in text:
                    rows[r] = [a * half, math.sqrt(1 - a * a) * half, b * half, math.sqrt(1 - b * b) * half]
        return rows


class TwoViewsPlugin:
    @hookimpl
    def register_embedders(self, register):
        register("two-views", lambda options: TwoViews(**options), description="two fixed views, for tests")


@pytest.fixture
def two_views(plugins_in, register_plugin):
    register_plugin(TwoViewsPlugin(), "test-two-views")


def library(tmp_path, **options):
    cfg = config(tmp_path, k=10, embedder="two-views", options=options)
    for i, word in enumerate(COSINES):
        session(tmp_path, "local", word, f"a note about {word}", f"more about {word}", ended_at=f"2026-01-0{1 + i}T10:00:00Z")
    ingest(cfg)
    return cfg


def lane_order(cfg) -> list[tuple[str, float]]:
    conn = open_readonly(cfg.library_path())
    try:
        hits = vectors.VectorLane(cfg.semantic).sessions(conn, QUESTION, sources=None, source=None, project=None, since=None)
        assert hits.off is None, hits.off
        return [(h.session_id, round(h.similarity, 3)) for h in hits]
    finally:
        conn.close()


def test_averaged_the_session_second_in_both_models_leads(tmp_path, two_views):
    cfg = library(tmp_path)
    order = lane_order(cfg)
    assert order[0] == ("yankee", 0.8) and sorted(order[1:]) == [("xray", 0.45), ("zulu", 0.45)]


def test_by_ranks_the_sessions_one_model_ranks_first_lead(tmp_path, two_views):
    cfg = library(tmp_path, rank_k=1)
    order = lane_order(cfg)
    # xray and zulu tie on 1/2 + 1/4 and on their averaged similarity; then by session id
    assert order == [("xray", 0.45), ("zulu", 0.45), ("yankee", 0.8)]
    assert [h["session_id"] for h in find(cfg, QUESTION, lanes=["vectors"])] == ["xray", "zulu", "yankee"]
    # a larger K flattens the ranks' shares, but the order of these three is the same
    assert [s for s, _ in lane_order(library(tmp_path / "k60", rank_k=60))] == ["xray", "zulu", "yankee"]
