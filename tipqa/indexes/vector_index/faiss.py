"""The embedded vector index: FAISS (exact, HNSW, or PQ codes re-ranked) with chunk metadata.

An index is a folder:

- `chunks.sqlite3`: one row per chunk (`row` = the FAISS vector id, chunk id, doc id, text);
  texts stay on disk and a search fetches only the rows it returns.
- `index-<generation>.faiss`: the vectors, written to a temporary file and renamed;
  `codes-<generation>.faiss`: their PQ codes (kind `pq-rerank`).
- `manifest.json`: parameters, chunk count and the current FAISS files, written atomically last.

The manifest is the commit point: `finish` writes the FAISS file and then the manifest; on
opening, SQLite rows beyond the manifest's count (an add that was never finished) are dropped.
A folder without a manifest is an unfinished first build and starts empty.

Kinds: `flat` (exact), `hnsw` (a graph), and the default `pq-rerank`: every vector is held
exactly (as for `flat`) and also as 4-bit product-quantised codes (`pq_dims` dimensions per code,
FAISS fast scan); a search scans all the codes for `rerank` x k candidates and re-ranks them by
their exact vectors, so its scores are exact. The codes are trained on an even sample of the
vectors and rebuilt by `finish` (not by `checkpoint`), so they are a function of the vectors
alone; an index of fewer than `MIN_CODED` vectors, or one searched before `finish`, is searched
exactly. Measured on MiniLM vectors of real chunks (1M: 100k of them plus vectors drawn from
their statistics; `python -m benchmarks.vector_recall`, `benchmarks/results/vectors.md`):
recall@10 against exact search 0.992 at 100k chunks and 0.968 at 1M, at 46x and 31x its
single-query speed and 2.2x and 2.7x its batch speed, where HNSW (M=64, efConstruction 400,
efSearch 512) reached 0.928 at 100k at 10.6x and 0.58x. A search reads every code, so its time
grows linearly with the index (about 8.5 ms per million chunks a query on one core); recall at
a fixed `rerank` falls slowly with size (raise it for several million chunks). FAISS runs on
OpenMP threads (`threads`, every core by default; under load, try 1).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from tipqa.core.errors import ConfigError, InputError
from tipqa.core.jsonl import write_json
from tipqa.core.records import Chunk, VectorHit
from tipqa.core.settings import Settings, knob, search_only, setting
from tipqa.indexes.place import IndexPlace
from tipqa.indexes.vector_index.base import as_matrix
from tipqa.indexes.vector_index.faiss_files import (
    FORMAT,
    FORMAT_VERSION,
    MANIFEST,
    import_faiss,
    load_faiss,
    read_manifest,
    write_faiss,
)
from tipqa.indexes.vector_index.pq_rerank import MIN_CODED, pq_codes, reranked

DATABASE = "chunks.sqlite3"
SIMILARITIES = ("cosine", "dot_product", "l2_norm")
_SQL_BATCH = 500
_KINDS_USING = {  # the settings that only some kinds read
    "hnsw_m": ("hnsw",),
    "ef_construction": ("hnsw",),
    "ef_search": ("hnsw",),
    "pq_dims": ("pq-rerank",),
    "rerank": ("pq-rerank",),
}


def _in_batches(items: list[Any], size: int = _SQL_BATCH) -> Iterator[list[Any]]:
    """Consecutive slices of at most `size` items."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


@dataclass(frozen=True)
class FaissSettings(Settings):
    """[vector_index] of the FAISS backend.

    `kind`, `hnsw_m`, `ef_construction` and `pq_dims` decide the built index; `ef_search` and
    `rerank` decide only what a search returns (a reopened index takes the current values).
    A setting of another kind than `kind` is not part of the identity: changing `hnsw_m` does
    not rebuild a `pq-rerank` index.
    """

    kind: Literal["flat", "hnsw", "pq-rerank"] = setting(
        "pq-rerank", doc="flat (exact), hnsw, or pq-rerank (PQ codes scanned, re-ranked exactly)"
    )
    hnsw_m: int = setting(64, doc="hnsw: graph degree")
    ef_construction: int = setting(400, doc="hnsw: build depth")
    ef_search: int = search_only(512, doc="hnsw: search depth")
    pq_dims: int = setting(2, doc="pq-rerank: dimensions per 4-bit code (divides the dimension)")
    rerank: int = search_only(30, doc="pq-rerank: candidates re-ranked exactly per result")
    threads: int = knob(0, doc="OpenMP threads of FAISS (0: its default, every core)")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.hnsw_m < 2 or min(self.ef_construction, self.ef_search, self.pq_dims) < 1:
            raise ConfigError(
                "faiss index: ef_construction, ef_search and pq_dims must be >= 1, hnsw_m >= 2"
            )
        if self.rerank < 1:
            raise ConfigError(f"faiss index: rerank must be >= 1, got {self.rerank}")
        if self.threads < 0:
            raise ConfigError(f"faiss index: threads must be >= 0, got {self.threads}")

    def identity(self) -> dict[str, Any]:
        """The settings that decide the output of an index of this `kind`."""
        return {
            key: value
            for key, value in super().identity().items()
            if self.kind in _KINDS_USING.get(key, (self.kind,))
        }


class FaissVectorIndex:
    """A `VectorIndex` on disk: FAISS vectors plus chunk metadata in SQLite."""

    def __init__(
        self,
        settings: FaissSettings,
        place: IndexPlace,
        dimension: int,
        similarity: str = "cosine",
    ) -> None:
        if similarity not in SIMILARITIES:
            raise ConfigError(
                f"unknown similarity {similarity!r}; known: {', '.join(SIMILARITIES)}"
            )
        if dimension < 1:
            raise ConfigError(f"faiss index: dimension must be >= 1, got {dimension}")
        self.settings = settings
        self.path = Path(place.path)
        self.dimension = dimension
        self.similarity = similarity
        if settings.kind == "pq-rerank" and dimension % settings.pq_dims:
            raise ConfigError(
                f"faiss index: pq_dims {settings.pq_dims} does not divide the dimension {dimension}"
            )
        self._faiss = import_faiss()
        if settings.threads:
            self._faiss.omp_set_num_threads(settings.threads)
        self.path.mkdir(parents=True, exist_ok=True)
        kinds = {"hnsw": {"hnsw_m": settings.hnsw_m}, "pq-rerank": {"pq_dims": settings.pq_dims}}
        checked = {"dimension": dimension, "similarity": similarity, "kind": settings.kind}
        manifest = read_manifest(self.path / MANIFEST, {**checked, **kinds.get(settings.kind, {})})
        # the build depth an existing index was made with (its manifest's), else the settings'
        self.ef_construction = settings.ef_construction
        if manifest is not None:
            self.ef_construction = int(manifest.get("ef_construction", self.ef_construction))
        self._clear(everything=manifest is None)
        self._db = sqlite3.connect(self.path / DATABASE)
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS chunks (row INTEGER PRIMARY KEY, "
            "chunk_id TEXT NOT NULL UNIQUE, doc_id TEXT NOT NULL, text TEXT NOT NULL)"
        )
        self._open_faiss(manifest)
        self._db.execute("DELETE FROM chunks WHERE row >= ?", (self._index.ntotal,))
        self._db.commit()
        rows = self._db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
        if rows != self._index.ntotal:
            raise InputError(
                f"{rows} chunk rows for {self._index.ntotal} vectors",
                path=str(self.path / DATABASE),
            )
        self._dirty = manifest is None
        self._added = 0
        self._duplicates = 0
        self._nonfinite = 0

    @classmethod
    def at(
        cls,
        path: str | os.PathLike[str],
        dimension: int,
        similarity: str = "cosine",
        **settings: Any,
    ) -> FaissVectorIndex:
        """The index in folder `path`, with `FaissSettings(**settings)` (library use)."""
        return cls(FaissSettings(**settings), IndexPlace(Path(path)), dimension, similarity)

    def _open_faiss(self, manifest: dict[str, Any] | None) -> None:
        """The FAISS files the manifest names (and their generation), or a new empty index."""
        self._generation = 0 if manifest is None else manifest["generation"]
        self._codes = None
        if manifest is None:
            self._index = self._new_index()
            return
        count = manifest["count"]
        self._index = load_faiss(self.path / manifest["faiss_file"], count, self.dimension)
        if self.settings.kind == "hnsw":
            self._index.hnsw.efConstruction = self.ef_construction
        if manifest.get("codes_file") is not None:
            self._codes = load_faiss(self.path / manifest["codes_file"], count, self.dimension)

    def _clear(self, *, everything: bool) -> None:
        """Remove temporary files left by a crash, and with `everything` an unfinished build."""
        temporary = (f".{MANIFEST}.", ".index-", ".codes-")
        for name in self._own_files():
            if everything or name.startswith(temporary):
                (self.path / name).unlink()

    def _own_files(self) -> list[str]:
        """Names of the files this class writes in the folder (excluding the manifest)."""
        prefixes = (DATABASE, "index-", ".index-", "codes-", ".codes-", f".{MANIFEST}.")
        return [p.name for p in self.path.iterdir() if p.name.startswith(prefixes)]

    def _new_index(self) -> Any:
        """An empty FAISS index of the configured kind and metric."""
        faiss = self._faiss
        metric = faiss.METRIC_L2 if self.similarity == "l2_norm" else faiss.METRIC_INNER_PRODUCT
        if self.settings.kind != "hnsw":
            return faiss.IndexFlat(self.dimension, metric)
        index = faiss.IndexHNSWFlat(self.dimension, self.settings.hnsw_m, metric)
        index.hnsw.efConstruction = self.ef_construction
        return index

    def _prepare(self, vectors: np.ndarray, rows: int | None, what: str) -> np.ndarray:
        """Check the shape, copy to contiguous float32, and normalise for cosine."""
        array = as_matrix(vectors, self.dimension, rows, what)
        array = np.array(array, dtype=np.float32, order="C", copy=True)
        if self.similarity == "cosine":
            self._faiss.normalize_L2(array)
        return array

    def present_ids(self, chunk_ids: Iterable[str]) -> set[str]:
        """The chunk ids among `chunk_ids` that the index already holds."""
        ids = list(dict.fromkeys(chunk_ids))
        found: set[str] = set()
        for batch in _in_batches(ids):
            marks = ",".join("?" * len(batch))
            query = f"SELECT chunk_id FROM chunks WHERE chunk_id IN ({marks})"
            found.update(row[0] for row in self._db.execute(query, batch))
        return found

    def add(self, chunks: list[Chunk], vectors: np.ndarray) -> None:
        """Add chunks with their embeddings; ids already present and non-finite vectors are
        skipped and counted."""
        array = self._prepare(vectors, len(chunks), "add")
        finite = np.isfinite(array).all(axis=1)
        self._nonfinite += int((~finite).sum())
        present = self.present_ids(c.id for c in chunks)
        keep: list[int] = []
        seen: set[str] = set()
        for i, chunk in enumerate(chunks):
            if not finite[i]:
                continue
            if chunk.id in present or chunk.id in seen:
                self._duplicates += 1
                continue
            seen.add(chunk.id)
            keep.append(i)
        if not keep:
            return
        start = self._index.ntotal
        rows = [
            (start + n, chunks[i].id, chunks[i].doc_id, chunks[i].text) for n, i in enumerate(keep)
        ]
        try:
            self._db.executemany("INSERT INTO chunks VALUES (?, ?, ?, ?)", rows)
            self._index.add(np.ascontiguousarray(array[keep]))
        except BaseException:
            self._db.rollback()
            raise
        self._db.commit()
        self._added += len(keep)
        self._dirty = True

    def checkpoint(self) -> dict[str, float]:
        """Make what was added durable: the vectors, not yet the codes of `pq-rerank`."""
        return self._commit(with_codes=False)

    def finish(self) -> dict[str, float]:
        """Write the vectors (and their codes) and the manifest atomically; return counts for
        the stats file."""
        return self._commit(with_codes=True)

    def _commit(self, *, with_codes: bool) -> dict[str, float]:
        """Write a new generation if anything changed or codes are due; return the counts."""
        coding = with_codes and self.settings.kind == "pq-rerank"
        if self._dirty or (coding and self._codes is None and self.count() >= MIN_CODED):
            self._db.commit()
            generation = self._generation + 1
            names = [f"index-{generation if self._dirty else self._generation}.faiss"]
            if self._dirty:
                write_faiss(self._index, self.path / names[0])
            self._codes = (
                pq_codes(self._faiss, self._index, self.settings.pq_dims) if coding else None
            )
            if self._codes is not None:
                names.append(f"codes-{generation}.faiss")
                write_faiss(self._codes, self.path / names[1])
            write_json(self.path / MANIFEST, self._manifest(generation, *names))
            for old in self._own_files():
                if old.startswith(("index-", "codes-")) and old not in names:
                    (self.path / old).unlink()
            self._generation = generation
            self._dirty = False
        return {
            "chunks": self.count(),
            "chunks_added": self._added,
            "chunks_duplicate": self._duplicates,
            "vectors_nonfinite": self._nonfinite,
        }

    def _manifest(
        self, generation: int, faiss_file: str, codes_file: str | None = None
    ) -> dict[str, Any]:
        """The manifest of the index as it is now."""
        return {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "dimension": self.dimension,
            "similarity": self.similarity,
            "kind": self.settings.kind,
            "hnsw_m": self.settings.hnsw_m,
            "ef_construction": self.ef_construction,
            "pq_dims": self.settings.pq_dims,
            "count": self.count(),
            "generation": generation,
            "faiss_file": faiss_file,
            "codes_file": codes_file,
        }

    def search(self, vectors: np.ndarray, k: int) -> list[list[VectorHit]]:
        """The k nearest chunks of each query vector, nearest first (fewer if the index is
        smaller); scores are cosine similarities for "cosine"."""
        queries = self._prepare(vectors, None, "search")
        if k < 1 or self.count() == 0:
            return [[] for _ in range(queries.shape[0])]
        distances, labels = self._searcher(k).search(queries, min(k, self.count()))
        rows = self._fetch(sorted({int(r) for r in labels.ravel() if r >= 0}))
        return [
            [
                VectorHit(
                    chunk_id=rows[int(r)][0],
                    doc_id=rows[int(r)][1],
                    score=self._score(float(d)),
                    text=rows[int(r)][2],
                )
                for d, r in zip(dist_row, label_row, strict=True)
                if r >= 0
            ]
            for dist_row, label_row in zip(distances, labels, strict=True)
        ]

    def _searcher(self, k: int) -> Any:
        """The FAISS index a search of k results runs on: codes re-ranked once finished."""
        if self.settings.kind == "hnsw":
            self._index.hnsw.efSearch = max(self.settings.ef_search, k)
        if self._codes is None or self._codes.ntotal != self._index.ntotal:
            return self._index
        return reranked(self._faiss, self._codes, self._index, self.settings.rerank)

    def _score(self, distance: float) -> float:
        """FAISS's distance as a similarity (inner product as is; 1/(1+d²) for L2)."""
        return 1.0 / (1.0 + distance) if self.similarity == "l2_norm" else distance

    def _fetch(self, rows: list[int]) -> dict[int, tuple[str, str, str]]:
        """Chunk id, doc id and text of the given rows."""
        found: dict[int, tuple[str, str, str]] = {}
        for batch in _in_batches(rows):
            marks = ",".join("?" * len(batch))
            query = f"SELECT row, chunk_id, doc_id, text FROM chunks WHERE row IN ({marks})"
            for row, chunk_id, doc_id, text in self._db.execute(query, batch):
                found[row] = (chunk_id, doc_id, text)
        missing = set(rows) - found.keys()
        if missing:
            raise InputError(
                f"{len(missing)} vector ids have no chunk row (e.g. {min(missing)})",
                path=str(self.path / DATABASE),
            )
        return found

    def count(self) -> int:
        """Number of chunks in the index."""
        return int(self._index.ntotal)

    def close(self) -> None:
        """Close the SQLite connection; additions not finished are dropped on the next open."""
        self._db.close()

    def __enter__(self) -> FaissVectorIndex:
        """Use as a context manager that closes the index."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Close the index."""
        self.close()
