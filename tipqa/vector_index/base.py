"""The vector-index seam."""

from __future__ import annotations

from typing import Protocol

import numpy as np

from tipqa.records import Chunk, VectorHit
from tipqa.registry import Registry


class VectorIndex(Protocol):
    """An approximate nearest-neighbour index of chunk embeddings that stores chunk texts."""

    def add(self, chunks: list[Chunk], vectors: np.ndarray) -> None:
        """Add chunks with their embeddings (idempotent by chunk id)."""
        ...

    def present_ids(self, chunk_ids: list[str]) -> set[str]:
        """The ids among `chunk_ids` already in the index (a resumed build skips them)."""
        ...

    def finish(self) -> dict[str, float]:
        """Make what was added durable and searchable; return counts for the stats file."""
        ...

    def search(self, vectors: np.ndarray, k: int) -> list[list[VectorHit]]:
        """The k nearest chunks of each query vector, nearest first."""
        ...

    def count(self) -> int:
        """Number of chunks in the index."""
        ...


VECTOR_INDEXES: Registry[VectorIndex] = Registry("vector index")
VECTOR_INDEXES.add("faiss", "tipqa.vector_index.faiss:FaissVectorIndex")
VECTOR_INDEXES.add("elasticsearch", "tipqa.vector_index.elasticsearch:ElasticsearchVectorIndex")
