"""The pq-rerank kind of the FAISS index: PQ codes scanned, candidates re-ranked exactly."""

from __future__ import annotations

import json
from itertools import pairwise

import numpy as np
import pytest
from support.vector_support import clustered, make_chunks, unit

from tipqa.core.errors import ConfigError, InputError
from tipqa.indexes.vector_index.faiss import MANIFEST, FaissVectorIndex
from tipqa.indexes.vector_index.pq_rerank import MIN_CODED

DIM = 32
COUNT = 3000


def built(path, vectors: np.ndarray, parts: int = 1, **settings) -> FaissVectorIndex:
    """A finished pq-rerank index of the vectors, added in `parts` checkpointed parts."""
    index = FaissVectorIndex.at(path, vectors.shape[1], kind="pq-rerank", **settings)
    chunks = make_chunks(len(vectors))
    bounds = np.linspace(0, len(vectors), parts + 1, dtype=int)
    for start, end in pairwise(bounds):
        index.add(chunks[start:end], vectors[start:end])
        index.checkpoint()
    index.finish()
    return index


def codes_file(path) -> str | None:
    """The codes file the manifest of the index in `path` names."""
    return json.loads((path / MANIFEST).read_text())["codes_file"]


def recall(index: FaissVectorIndex, vectors: np.ndarray, queries: np.ndarray) -> float:
    """Mean share of the exact cosine top 10 that the index returns."""
    exact = unit(queries) @ unit(vectors).T
    truth = [{f"d{i // 2}#{i % 2}" for i in np.argsort(-row)[:10]} for row in exact]
    found = [{h.chunk_id for h in hits} for hits in index.search(queries, 10)]
    return float(np.mean([len(f & t) / 10 for f, t in zip(found, truth, strict=True)]))


def test_codes_find_the_exact_neighbours_with_exact_scores(tmp_path) -> None:
    vectors = clustered(COUNT, DIM, 30, seed=5)
    queries = clustered(100, DIM, 30, seed=6)
    index = built(tmp_path / "vi", vectors)
    assert codes_file(tmp_path / "vi") == "codes-2.faiss"
    assert (tmp_path / "vi" / "codes-2.faiss").is_file()
    assert recall(index, vectors, queries) >= 0.95
    exact = unit(queries) @ unit(vectors).T
    for row, hits in zip(exact, index.search(queries, 10), strict=True):
        rows = [int(h.chunk_id[1:].split("#")[0]) * 2 + int(h.chunk_id[-1]) for h in hits]
        assert [h.score for h in hits] == pytest.approx(list(row[rows]), abs=1e-5)


def test_rerank_is_read_at_search_time(tmp_path) -> None:
    vectors = clustered(COUNT, DIM, 30, seed=5)
    queries = clustered(100, DIM, 30, seed=6)
    built(tmp_path / "vi", vectors).close()
    narrow = FaissVectorIndex.at(tmp_path / "vi", DIM, kind="pq-rerank", rerank=1)
    wide = FaissVectorIndex.at(tmp_path / "vi", DIM, kind="pq-rerank", rerank=30)
    assert recall(narrow, vectors, queries) < recall(wide, vectors, queries)


def test_codes_depend_on_the_vectors_not_on_the_checkpoints(tmp_path) -> None:
    vectors = clustered(COUNT, DIM, 30, seed=5)
    queries = clustered(20, DIM, 30, seed=6)
    once = built(tmp_path / "once", vectors)
    thrice = built(tmp_path / "thrice", vectors, parts=3)
    assert once.search(queries, 10) == thrice.search(queries, 10)
    assert codes_file(tmp_path / "thrice") == "codes-4.faiss"
    last = (tmp_path / "thrice" / "codes-4.faiss").read_bytes()
    assert (tmp_path / "once" / "codes-2.faiss").read_bytes() == last
    assert sorted(p.name for p in (tmp_path / "thrice").glob("codes-*")) == ["codes-4.faiss"]


def test_a_checkpoint_writes_the_vectors_and_finish_the_codes(tmp_path) -> None:
    vectors = clustered(COUNT, DIM, 30, seed=5)
    index = FaissVectorIndex.at(tmp_path / "vi", DIM, kind="pq-rerank")
    index.add(make_chunks(COUNT), vectors)
    index.checkpoint()
    assert codes_file(tmp_path / "vi") is None
    index.close()
    resumed = FaissVectorIndex.at(tmp_path / "vi", DIM, kind="pq-rerank")
    assert resumed.count() == COUNT
    resumed.finish()
    assert codes_file(tmp_path / "vi") == "codes-2.faiss"
    resumed.finish()
    assert codes_file(tmp_path / "vi") == "codes-2.faiss"


def test_a_small_index_is_searched_exactly(tmp_path) -> None:
    vectors = clustered(MIN_CODED - 1, DIM, 10, seed=2)
    index = built(tmp_path / "vi", vectors, rerank=1)
    assert codes_file(tmp_path / "vi") is None
    assert recall(index, vectors, clustered(30, DIM, 10, seed=3)) == 1.0


def test_additions_after_finish_are_searched_exactly_until_the_next_finish(tmp_path) -> None:
    vectors = clustered(COUNT + 1, DIM, 30, seed=5)
    index = built(tmp_path / "vi", vectors[:COUNT], rerank=1)
    index.add(make_chunks(1, start=COUNT), vectors[COUNT:])
    hits = index.search(vectors[COUNT:], 1)[0]
    assert hits[0].chunk_id == make_chunks(1, start=COUNT)[0].id
    assert hits[0].score == pytest.approx(1.0, abs=1e-5)


@pytest.mark.parametrize("similarity", ["l2_norm", "dot_product"])
def test_other_similarities_rank_as_exact_search(tmp_path, similarity: str) -> None:
    vectors = clustered(COUNT, DIM, 30, seed=5)
    queries = clustered(20, DIM, 30, seed=6)
    found = {}
    for kind in ("flat", "pq-rerank"):
        index = FaissVectorIndex.at(tmp_path / kind, DIM, similarity=similarity, kind=kind)
        index.add(make_chunks(COUNT), vectors)
        index.finish()
        found[kind] = [[h.chunk_id for h in hits][:3] for hits in index.search(queries, 10)]
    agree = np.mean([a == b for a, b in zip(found["flat"], found["pq-rerank"], strict=True)])
    assert agree >= 0.9


def test_pq_dims_must_divide_the_dimension(tmp_path) -> None:
    with pytest.raises(ConfigError, match="pq_dims 3 does not divide the dimension 32"):
        FaissVectorIndex.at(tmp_path / "vi", DIM, kind="pq-rerank", pq_dims=3)


def test_reopening_with_other_pq_dims_is_an_error(tmp_path) -> None:
    built(tmp_path / "vi", clustered(100, DIM, 3, seed=1)).close()
    with pytest.raises(ConfigError, match="pq_dims"):
        FaissVectorIndex.at(tmp_path / "vi", DIM, kind="pq-rerank", pq_dims=4)


def test_a_missing_codes_file_names_it(tmp_path) -> None:
    built(tmp_path / "vi", clustered(COUNT, DIM, 30, seed=5)).close()
    (tmp_path / "vi" / "codes-2.faiss").unlink()
    with pytest.raises(InputError, match=r"codes-2\.faiss.*missing"):
        FaissVectorIndex.at(tmp_path / "vi", DIM, kind="pq-rerank")
