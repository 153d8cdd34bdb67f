"""The vector-index seam."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

from tipqa.core.errors import InputError
from tipqa.core.records import Chunk, Document, Question, VectorCandidates, VectorHit
from tipqa.core.registry import Registry

if TYPE_CHECKING:
    from tipqa.core.stats import StepStats
    from tipqa.indexes.embedders.base import Embedder
    from tipqa.indexes.token_index.base import TokenIndex


def as_matrix(vectors: np.ndarray, dimension: int, rows: int | None, what: str) -> np.ndarray:
    """Vectors as a float32 matrix of `dimension` columns (and `rows` rows, when given)."""
    array = np.asarray(vectors, dtype=np.float32)
    if array.ndim == 1:
        array = array.reshape(1, -1)
    if array.ndim != 2 or array.shape[1] != dimension:
        raise InputError(
            f"{what}: expected vectors of dimension {dimension}, got shape {array.shape}"
        )
    if rows is not None and array.shape[0] != rows:
        raise InputError(f"{what}: {rows} chunks but {array.shape[0]} vectors")
    return array


class VectorIndex(Protocol):
    """An approximate nearest-neighbour index of chunk embeddings that stores chunk texts."""

    def add(self, chunks: list[Chunk], vectors: np.ndarray) -> None:
        """Add chunks with their embeddings (idempotent by chunk id)."""
        ...

    def present_ids(self, chunk_ids: list[str]) -> set[str]:
        """The ids among `chunk_ids` already in the index (a resumed build skips them)."""
        ...

    def checkpoint(self) -> dict[str, float]:
        """Make what was added durable (not necessarily searchable); return counts so far."""
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


@runtime_checkable
class EmbedsOnDemand(Protocol):
    """A vector stage that embeds, per question, only the chunks of its token candidates."""

    def prepare(
        self,
        sample: Sequence[Document],
        embedder: Embedder,
        overlap_tokens: int,
        max_document_chars: int = 0,
    ) -> dict[str, float]:
        """Calibrate the chunking on the corpus's first documents (the stage's "build"), and
        keep its overlap and its cap on a document's length (0: none)."""
        ...

    def search_questions(
        self,
        questions: list[Question],
        token_index: TokenIndex,
        embedder: Embedder,
        k: int,
        stats: StepStats,
    ) -> list[VectorCandidates]:
        """The k nearest chunks of each question among those of its candidates."""
        ...


CANDIDATES = "candidates"
"""The vector stage that embeds only what the open questions need."""

VECTOR_INDEXES: Registry[VectorIndex | EmbedsOnDemand] = Registry("vector index")
VECTOR_INDEXES.add(
    "faiss",
    "tipqa.indexes.vector_index.faiss:FaissVectorIndex",
    settings="tipqa.indexes.vector_index.faiss:FaissSettings",
)
VECTOR_INDEXES.add(
    CANDIDATES,
    "tipqa.indexes.vector_index.candidates:CandidateVectorIndex",
    settings="tipqa.indexes.vector_index.candidates:CandidateSettings",
)
VECTOR_INDEXES.add(
    "elasticsearch",
    "tipqa.indexes.vector_index.elasticsearch:ElasticsearchVectorIndex",
    settings="tipqa.indexes.vector_index.elasticsearch:ElasticsearchVectorSettings",
)
