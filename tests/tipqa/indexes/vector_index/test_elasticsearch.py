"""ElasticsearchVectorIndex without a server: options, vector checks, requests not sent.

The tests against a real cluster are in test_elasticsearch_contract.py.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tipqa.core.errors import ConfigError, InputError
from tipqa.core.records import Chunk
from tipqa.indexes.vector_index.base import VECTOR_INDEXES
from tipqa.indexes.vector_index.elasticsearch import ElasticsearchVectorIndex

pytestmark = pytest.mark.needs("elasticsearch")


class NoServer:
    """A client stand-in that fails the test on any use: nothing may be sent."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"unexpected use of the Elasticsearch client: {name}")


def index(dimension: int = 4, **options: Any) -> ElasticsearchVectorIndex:
    """An index object bound to no server."""
    return ElasticsearchVectorIndex.named("pile-chunks", dimension, client=NoServer(), **options)


def chunks(n: int) -> list[Chunk]:
    """`n` chunks of one document."""
    return [Chunk(f"d#{i}", "d", i, f"chunk {i}") for i in range(n)]


def test_registered_under_elasticsearch() -> None:
    assert VECTOR_INDEXES.resolve("elasticsearch") is ElasticsearchVectorIndex


@pytest.mark.parametrize(
    "options",
    [
        {"similarity": "hamming"},
        {"quantize": "int2"},
        {"quantize": "bbq"},
        {"hnsw_m": 1},
        {"num_candidates": 0},
        {"search_batch": 0},
        {"shards": 0},
    ],
)
def test_bad_options_are_config_errors(options: dict) -> None:
    with pytest.raises(ConfigError):
        index(**options)


def test_quantization_options_accepted() -> None:
    assert index(dimension=384, quantize="bbq").settings.quantize == "bbq"
    assert index(dimension=8, quantize="int4").settings.quantize == "int4"
    with pytest.raises(ConfigError, match="even"):
        index(dimension=7, quantize="int4")


def test_vectors_elasticsearch_would_refuse_are_skipped_and_counted() -> None:
    vectors = np.array(
        [[np.nan, 0, 0, 0], [0, 0, 0, 0], [np.inf, 1, 0, 0], [0, 0, 0, 0]], dtype=np.float32
    )
    cosine = index()
    cosine.add(chunks(4), vectors)
    assert cosine._counts["vectors_nonfinite"] == 2
    assert cosine._counts["vectors_zero"] == 2
    unit = index(similarity="dot_product")
    unit.add(chunks(2), np.array([[2, 0, 0, 0], [0.5, 0.5, 0.5, 0.1]], dtype=np.float32))
    assert unit._counts["vectors_not_unit"] == 2
    assert unit._invalid(np.array([[0.6, 0.8, 0, 0]], dtype=np.float32)) == [None]
    l2 = index(similarity="l2_norm")
    assert l2._invalid(np.zeros((1, 4), dtype=np.float32)) == [None]


def test_shapes_are_checked() -> None:
    with pytest.raises(InputError, match="dimension 4"):
        index().add(chunks(2), np.ones((2, 3), dtype=np.float32))
    with pytest.raises(InputError, match="2 chunks but 3 vectors"):
        index().add(chunks(2), np.ones((3, 4), dtype=np.float32))
    with pytest.raises(InputError, match="dimension 4"):
        index().search(np.ones((1, 5), dtype=np.float32), 3)


def test_search_edge_cases_send_nothing() -> None:
    assert index().search(np.ones((3, 4), dtype=np.float32), 0) == [[], [], []]
    with pytest.raises(ConfigError, match="10000"):
        index().search(np.ones((1, 4), dtype=np.float32), 10_001)
    assert index().present_ids([]) == set()
