"""The vector index on an Elasticsearch cluster: one document per chunk, `dense_vector` kNN.

Each chunk is a document with `_id` = chunk id, its parent `doc_id`, its text (stored, not
searched) and its embedding in a `dense_vector` field with the embedder's dimensions and
similarity, indexed as HNSW (`hnsw_m`, `ef_construction`), optionally quantized
(`quantize`: "int8", "int4" or "bbq"). Chunks are added with bulk `create` actions, so an id
already present is skipped and counted, as in the FAISS backend. `search` sends one `knn`
section per query vector (k, `num_candidates`) in batched `_msearch` requests; scores are
turned back into the similarity (the cosine for "cosine"), as FAISS reports it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from tipqa.core.errors import ConfigError
from tipqa.core.records import Chunk, VectorHit
from tipqa.core.settings import knob, search_only, setting
from tipqa.indexes.es import mappings, queries
from tipqa.indexes.es.client import body
from tipqa.indexes.es.lifecycle import EsBuildSettings, EsIndexBase
from tipqa.indexes.place import IndexPlace
from tipqa.indexes.vector_index.base import as_matrix

log = logging.getLogger(__name__)

UNIT_TOLERANCE = 1e-3
ID_BATCH = 1000


@dataclass(frozen=True)
class ElasticsearchVectorSettings(EsBuildSettings):
    """[vector_index] of the Elasticsearch backend (the cluster is in [elasticsearch])."""

    index: str = setting("tipqa-vector", doc="the index's name")
    shards: int = setting(1, doc="primary shards")
    hnsw_m: int = setting(16, doc="HNSW graph degree")
    ef_construction: int = setting(100, doc="HNSW build depth")
    quantize: Literal["int8", "int4", "bbq"] | None = setting(None, doc="vector quantisation")
    num_candidates: int = search_only(100, doc="kNN candidates per shard")
    search_batch: int = knob(64, doc="query vectors per _msearch request")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.num_candidates < 1 or self.search_batch < 1:
            raise ConfigError("num_candidates and search_batch must be >= 1")
        mappings.vector_index_settings(self.shards)


class ElasticsearchVectorIndex(EsIndexBase):
    """A `VectorIndex` in an Elasticsearch index with a `dense_vector` field."""

    settings: ElasticsearchVectorSettings

    def __init__(
        self,
        settings: ElasticsearchVectorSettings,
        place: IndexPlace | None,
        dimension: int,
        similarity: str = "cosine",
        *,
        client: Any | None = None,
    ) -> None:
        mappings.vector_index_mappings(
            dimension,
            similarity,
            hnsw_m=settings.hnsw_m,
            ef_construction=settings.ef_construction,
            quantize=settings.quantize,
        )
        connection, build = (place.elasticsearch, place.build) if place else (None, "")
        super().__init__(settings.index, settings.shards, settings, connection, build, client)
        self.dimension = dimension
        self.similarity = similarity
        self._counts: dict[str, float] = dict.fromkeys(
            (
                "chunks_added",
                "chunks_duplicate",
                "chunks_rejected",
                "vectors_nonfinite",
                "vectors_zero",
                "vectors_not_unit",
            ),
            0,
        )
        self._seconds = 0.0

    @classmethod
    def named(
        cls,
        index: str,
        dimension: int,
        similarity: str = "cosine",
        *,
        client: Any | None = None,
        **settings: Any,
    ) -> ElasticsearchVectorIndex:
        """The index called `index` on the cluster of TIPQA_ES_URL (library use)."""
        options = ElasticsearchVectorSettings(index=index, **settings)
        return cls(options, None, dimension, similarity, client=client)

    def _creation_body(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """Settings and mappings of a new vector index."""
        return mappings.vector_index_settings(self.shards), mappings.vector_index_mappings(
            self.dimension,
            self.similarity,
            hnsw_m=self.settings.hnsw_m,
            ef_construction=self.settings.ef_construction,
            quantize=self.settings.quantize,
        )

    def _expected_meta(self) -> dict[str, Any]:
        """The `_meta.tipqa` of a vector index of this dimension and similarity."""
        return mappings.vector_index_meta(self.dimension, self.similarity)

    def _prepare(self, vectors: np.ndarray, rows: int | None, what: str) -> np.ndarray:
        """Vectors as a float32 matrix of the index's dimension."""
        array = as_matrix(vectors, self.dimension, rows, what)
        return array

    def _invalid(self, array: np.ndarray) -> list[str | None]:
        """Per row, why Elasticsearch would refuse the vector ("vectors_..."), or None."""
        finite = np.isfinite(array).all(axis=1)
        norms = np.linalg.norm(np.where(np.isfinite(array), array, 0.0), axis=1)
        reasons: list[str | None] = []
        for ok, norm in zip(finite, norms, strict=True):
            if not ok:
                reasons.append("vectors_nonfinite")
            elif self.similarity == "cosine" and norm == 0.0:
                reasons.append("vectors_zero")
            elif self.similarity == "dot_product" and abs(norm - 1.0) > UNIT_TOLERANCE:
                reasons.append("vectors_not_unit")
            else:
                reasons.append(None)
        return reasons

    def add(self, chunks: list[Chunk], vectors: np.ndarray) -> None:
        """Add chunks with their embeddings; ids already present and vectors Elasticsearch
        would refuse (non-finite; zero for cosine; not unit length for dot_product) are
        skipped and counted."""
        array = self._prepare(vectors, len(chunks), "add")
        reasons = self._invalid(array)
        actions = []
        for chunk, row, reason in zip(chunks, array, reasons, strict=True):
            if reason is not None:
                self._counts[reason] += 1
                log.warning("skipping chunk %.80r: %s", chunk.id, reason)
                continue
            actions.append(queries.chunk_action(self.index, chunk, row))
        if not actions:
            return
        self._ensure_index()
        started = time.perf_counter()
        report = self._bulk(actions)
        self._seconds += time.perf_counter() - started
        self._counts["chunks_added"] += report.created + report.updated
        self._counts["chunks_duplicate"] += report.conflicts
        self._counts["chunks_rejected"] += sum(report.rejected.values())
        report.raise_for_transient(f"index {self.index!r}")

    def checkpoint(self) -> dict[str, float]:
        """What was added so far (bulk requests are durable once answered; nothing to write)."""
        return {**self._counts, "bulk_seconds": round(self._seconds, 3)}

    def finish(self) -> dict[str, float]:
        """Restore the serving settings and refresh; return counts for the stats file."""
        self._ensure_index()
        self._serve()
        return {"chunks": self.count(), **self.checkpoint()}

    def present_ids(self, chunk_ids: Iterable[str]) -> set[str]:
        """The chunk ids among `chunk_ids` that the index already holds."""
        ids = list(dict.fromkeys(chunk_ids))
        if not ids or not self.exists():
            return set()
        found: set[str] = set()
        for start in range(0, len(ids), ID_BATCH):
            response = self.client.mget(
                index=self.index, ids=ids[start : start + ID_BATCH], source=False
            )
            found |= queries.parse_found_ids(body(response))
        return found

    def search(self, vectors: np.ndarray, k: int) -> list[list[VectorHit]]:
        """The k nearest chunks of each query vector, nearest first (approximate: HNSW with
        `num_candidates` candidates per shard)."""
        queries_array = self._prepare(vectors, None, "search")
        if k < 1:
            return [[] for _ in range(queries_array.shape[0])]
        if k > queries.MAX_NUM_CANDIDATES:
            raise ConfigError(f"k must be <= {queries.MAX_NUM_CANDIDATES}, got {k}")
        results: list[list[VectorHit]] = []
        for start in range(0, queries_array.shape[0], self.settings.search_batch):
            batch = queries_array[start : start + self.settings.search_batch]
            results.extend(self._search_batch(batch, k))
        return results

    def _search_batch(self, batch: np.ndarray, k: int) -> list[list[VectorHit]]:
        """One `_msearch` request for a batch of query vectors."""
        bodies = [queries.knn_search_body(v, k, self.settings.num_candidates) for v in batch]
        response = self.client.msearch(index=self.index, searches=queries.msearch_lines(bodies))
        results = queries.parse_knn_responses(body(response), self.similarity)
        if len(results) != len(bodies):
            raise queries.ResponseError(f"msearch answered {len(results)} of {len(bodies)}")
        return results
