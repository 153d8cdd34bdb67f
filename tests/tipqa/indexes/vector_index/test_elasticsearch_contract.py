"""Contract tests of ElasticsearchVectorIndex against a real cluster (TIPQA_ES_URL).

The same clustered vectors go to Elasticsearch (HNSW) and to exact FAISS search: the
nearest chunks must mostly agree (recall), with the same similarity scores. Skipped unless
TIPQA_ES_URL is set (and ES_API_KEY if the cluster needs one).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from tipqa.core.records import Chunk
from tipqa.indexes.vector_index.elasticsearch import ElasticsearchVectorIndex

pytestmark = [
    pytest.mark.elasticsearch,
    pytest.mark.skipif(
        not os.environ.get("TIPQA_ES_URL"), reason="set TIPQA_ES_URL to test against a cluster"
    ),
]

DIM = 16
K = 10


def clustered(n: int, seed: int) -> np.ndarray:
    """`n` unit vectors around 8 seeded centers."""
    rng = np.random.default_rng(seed)
    centers = np.random.default_rng(0).normal(size=(8, DIM))
    vectors = centers[rng.integers(0, 8, size=n)] + 0.3 * rng.normal(size=(n, DIM))
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


CHUNKS = [Chunk(f"doc{i // 3}#{i % 3}", f"doc{i // 3}", i % 3, f"text {i}") for i in range(300)]
VECTORS = clustered(300, seed=1)
QUERIES = clustered(20, seed=2)


def _drop(index: ElasticsearchVectorIndex) -> None:
    """Delete the index and its ledger."""
    index.client.indices.delete(index=[index.index, index.ledger_index], ignore_unavailable=True)


@pytest.fixture(scope="module")
def built() -> Iterator[tuple[ElasticsearchVectorIndex, dict[str, float]]]:
    """The chunks added in two batches to a fresh index (deleted afterwards)."""
    index = ElasticsearchVectorIndex.named(
        f"tipqa-test-{uuid.uuid4().hex[:12]}", DIM, num_candidates=100, threads=2
    )
    try:
        index.add(CHUNKS[:150], VECTORS[:150])
        index.add(CHUNKS[150:], VECTORS[150:])
        yield index, index.finish()
    finally:
        _drop(index)


def test_finish_counts(built: tuple) -> None:
    index, counts = built
    assert counts["chunks"] == 300 and counts["chunks_added"] == 300
    assert counts["chunks_duplicate"] == 0 and index.count() == 300


def test_search_agrees_with_exact_faiss(built: tuple, tmp_path: Path) -> None:
    faiss_module = pytest.importorskip("tipqa.indexes.vector_index.faiss")
    index, _ = built
    exact = faiss_module.FaissVectorIndex.at(tmp_path / "flat", DIM, kind="flat")
    exact.add(CHUNKS, VECTORS)
    exact.finish()
    ours, truth = index.search(QUERIES, K), exact.search(QUERIES, K)
    found = sum(
        len({h.chunk_id for h in a} & {h.chunk_id for h in b})
        for a, b in zip(ours, truth, strict=True)
    )
    assert found / (K * len(QUERIES)) >= 0.9
    for a, b in zip(ours, truth, strict=True):
        assert [h.score for h in a] == sorted((h.score for h in a), reverse=True)
        expected = {h.chunk_id: h for h in b}
        for hit in a:
            if hit.chunk_id in expected:
                assert hit.score == pytest.approx(expected[hit.chunk_id].score, abs=1e-4)
                assert (hit.doc_id, hit.text) == (
                    expected[hit.chunk_id].doc_id,
                    expected[hit.chunk_id].text,
                )


def test_readding_is_idempotent_and_present_ids(built: tuple) -> None:
    index, _ = built
    again = ElasticsearchVectorIndex.named(index.index, DIM)
    assert again.present_ids(["doc0#0", "nope", "doc99#2"]) == {"doc0#0", "doc99#2"}
    again.add(CHUNKS[:10], VECTORS[:10])
    counts = again.finish()
    assert counts["chunks_duplicate"] == 10 and counts["chunks_added"] == 0
    assert counts["chunks"] == 300


def test_shards_and_completion() -> None:
    index = ElasticsearchVectorIndex.named(
        f"tipqa-test-{uuid.uuid4().hex[:12]}", DIM, quantize="int8"
    )
    try:
        index.add(CHUNKS[:50], VECTORS[:50])
        index.finish_shard("file-1")
        assert index.part_done("file-1") and not index.part_done("file-2")
        assert not index.is_complete()
        index.finalize(["file-1"])
        assert index.is_complete() and index.count() == 50
        assert len(index.search(QUERIES[:3], 5)[0]) == 5
    finally:
        _drop(index)
