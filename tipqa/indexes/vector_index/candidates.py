"""A vector stage that embeds only what the open questions need (`backend = candidates`).

For each question that reaches the vector stage, the token index ranks documents by BM25 over
the question's text (and, with `query = question+answers`, its answer aliases); the first
`candidates` of them are chunked with the splitter of the full index (the same embedder,
overlap and characters-per-token calibration) and embedded once per build, into a chunk store
that every later question reuses; the exact k2 nearest chunks among the question's candidates
are its hits. Building this "index" is only calibrating the splitter on the corpus's first
documents, as the full index does; the cost of embedding follows the questions, not the
corpus.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import accumulate, groupby
from pathlib import Path
from typing import Literal

import numpy as np
import orjson
from tqdm import tqdm

from tipqa.core.errors import ConfigError, InputError
from tipqa.core.records import Chunk, Document, Question, VectorCandidates, VectorHit
from tipqa.core.settings import Settings, knob, search_only
from tipqa.core.stats import StepStats
from tipqa.indexes.chunking import ChunkSplitter, chunk_document, make_splitter
from tipqa.indexes.embedders.base import Embedder
from tipqa.indexes.place import IndexPlace
from tipqa.indexes.token_index.base import RanksText, TokenIndex
from tipqa.indexes.vector_index.chunk_store import ChunkStore, StoredDocument, document_key

STORE, SPLITTER = "chunks", "splitter.json"
MISSING_NAMED = 100  # candidates the token index could not return, named in the stats


@dataclass(frozen=True)
class CandidateSettings(Settings):
    """[vector_index] of the candidate stage: embed the chunks of BM25 candidates only."""

    candidates: int = search_only(100, doc="documents per question, by the token index's BM25")
    query: Literal["question", "question+answers"] = search_only(
        "question", doc="the BM25 query: the question, or the question and its answer aliases"
    )
    batch_size: int = knob(256, doc="chunks per embedding batch (each batch is committed)")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.candidates < 1 or self.batch_size < 1:
            raise ConfigError("[vector_index] candidates and batch_size must be at least 1")


class CandidateVectorIndex:
    """The chunk store of a candidate vector stage, and its exact search (see the module)."""

    def __init__(
        self,
        settings: CandidateSettings,
        place: IndexPlace,
        dimension: int,
        similarity: str = "cosine",
    ) -> None:
        self.settings = settings
        self.path = Path(place.path)
        self.dimension = dimension
        self.similarity = similarity
        self._store: ChunkStore | None = None

    @property
    def store(self) -> ChunkStore:
        """The chunk store (opened on first use)."""
        if self._store is None:
            self._store = ChunkStore(self.path / STORE, self.dimension)
        return self._store

    def prepare(
        self,
        sample: Sequence[Document],
        embedder: Embedder,
        overlap_tokens: int,
        max_document_chars: int = 0,
    ) -> dict[str, float]:
        """Calibrate the splitter on `sample` (the corpus's first documents) and keep it, with
        the cap on a document's length."""
        texts = [document.text for document in sample]
        splitter = make_splitter(embedder, overlap_tokens=overlap_tokens, calibration_texts=texts)
        self.path.mkdir(parents=True, exist_ok=True)
        settings = {
            "chars_per_token": splitter.chars_per_token,
            "overlap_tokens": overlap_tokens,
            "max_document_chars": max_document_chars,
        }
        (self.path / SPLITTER).write_bytes(orjson.dumps(settings))
        return {"calibration_documents": len(sample), "chars_per_token": splitter.chars_per_token}

    def splitter(self, embedder: Embedder) -> ChunkSplitter:
        """The splitter that `prepare` calibrated."""
        path = self.path / SPLITTER
        if not path.is_file():
            raise InputError("the candidate vector stage was not prepared", path=str(path))
        kept = orjson.loads(path.read_bytes())
        return make_splitter(
            embedder,
            overlap_tokens=int(kept["overlap_tokens"]),
            chars_per_token=float(kept["chars_per_token"]),
            max_document_chars=int(kept.get("max_document_chars", 0)),
        )

    def search_questions(
        self,
        questions: list[Question],
        token_index: TokenIndex,
        embedder: Embedder,
        k: int,
        stats: StepStats,
    ) -> list[VectorCandidates]:
        """The exact k nearest chunks of each question among its BM25 candidates' chunks."""
        if not questions:
            return []
        if not isinstance(token_index, RanksText):
            raise ConfigError(
                f"[vector_index] backend = candidates needs a token index that ranks texts by "
                f"BM25; {type(token_index).__name__} does not"
            )
        ranked = token_index.rank_texts(
            [self._query(q) for q in questions], self.settings.candidates
        )
        wanted = list(dict.fromkeys(doc_id for ids in ranked for doc_id in ids))
        documents = token_index.get(wanted)
        missing = [doc_id for doc_id in wanted if doc_id not in documents]
        if missing:
            stats.error("candidate_missing", len(missing))
            named = stats.info.setdefault("candidates_missing", [])
            named.extend(missing[: MISSING_NAMED - len(named)])
        stored = self._embedded(list(documents.values()), embedder, stats)
        vectors = embedder.encode_queries([q.text for q in questions])
        out = []
        for question, ids, vector in zip(questions, ranked, vectors, strict=True):
            pieces = [stored[document_key(documents[i])] for i in ids if i in documents]
            chunks = [chunk for piece in pieces for chunk in piece.chunks]
            hits = self._nearest(vector, chunks, pieces, k)
            out.append(VectorCandidates(question.id, hits))
            stats.add("questions")
            stats.add("candidates", len(ids))
            stats.add("candidate_chunks", len(chunks))
            stats.add("hits_returned", len(hits))
            if not ids:
                stats.add("questions_without_candidates")
        return out

    def _query(self, question: Question) -> str:
        """The BM25 query of a question."""
        if self.settings.query == "question":
            return question.text
        return " ".join([question.text, question.answer, *question.aliases])

    def _embedded(
        self, documents: list[Document], embedder: Embedder, stats: StepStats
    ) -> dict[str, StoredDocument]:
        """The stored chunks of `documents`, embedding (and storing) those not yet stored."""
        keys = {document_key(document): document for document in documents}
        present = self.store.keys_present(keys)
        todo = [document for key, document in keys.items() if key not in present]
        stats.add("documents_reused", len(present))
        if todo:
            chunked = self._chunked(todo, self.splitter(embedder), stats)
            total = sum(len(pieces) for _, pieces in chunked)
            with tqdm(
                total=total, desc="embedding candidate chunks", unit="chunk", leave=False
            ) as bar:
                for rows in self._embed_batches(chunked, embedder, keys, bar):
                    self.store.put(rows)
            stats.add("chunks_embedded", total)
        stats.add("documents_embedded", len(todo))
        stored = self.store.get(keys)
        stats.add("chunks_reused", sum(len(stored[k].chunks) for k in present if k in stored))
        return stored

    def _chunked(
        self, documents: list[Document], splitter: ChunkSplitter, stats: StepStats
    ) -> list[tuple[str, list[Chunk]]]:
        """Each document's key and chunks (chunking is fast next to embedding: its bar counts
        documents; a very long document is chunked segment by segment)."""
        return [
            (document_key(document), chunk_document(document, splitter, stats))
            for document in tqdm(documents, desc="chunking candidates", unit="doc", leave=False)
        ]

    def _embed_batches(
        self,
        chunked: list[tuple[str, list[Chunk]]],
        embedder: Embedder,
        keys: dict[str, Document],
        bar: tqdm,
    ) -> Iterator[list[tuple[str, str, list[Chunk], np.ndarray]]]:
        """Embed the chunks in batches of `batch_size` across documents (a long document spans
        many); yield after each batch the documents it completed, ready to store."""
        size = self.settings.batch_size
        flat = [(key, chunk) for key, pieces in chunked for chunk in pieces]
        ends = list(accumulate(len(pieces) for _, pieces in chunked))
        vectors: dict[str, list[np.ndarray]] = {key: [] for key, _ in chunked}
        done = 0  # documents of `chunked` whose every chunk is embedded
        for start in range(0, max(len(flat), 1), size):
            batch = flat[start : start + size]
            if batch:
                matrix = embedder.encode_passages([chunk.text for _, chunk in batch])
                row = 0
                for key, group in groupby(batch, key=lambda item: item[0]):
                    count = len(list(group))
                    vectors[key].append(matrix[row : row + count])
                    row += count
                bar.update(len(batch))
            embedded = start + len(batch)
            rows = []
            while done < len(chunked) and ends[done] <= embedded:
                key, pieces = chunked[done]
                part = np.vstack(vectors.pop(key)) if pieces else None
                rows.append((key, keys[key].id, pieces, _or_empty(part, self.dimension)))
                done += 1
            if rows:
                yield rows

    def _nearest(
        self, vector: np.ndarray, chunks: list[Chunk], pieces: list[StoredDocument], k: int
    ) -> list[VectorHit]:
        """The k chunks nearest to `vector` (exactly), nearest first; ties by chunk id."""
        if not chunks:
            return []
        matrix = np.vstack([piece.vectors for piece in pieces])
        scores = _scores(np.asarray(vector, dtype=np.float32), matrix, self.similarity)
        order = sorted(range(len(chunks)), key=lambda i: (-scores[i], chunks[i].id))[:k]
        return [
            VectorHit(chunks[i].id, chunks[i].doc_id, float(scores[i]), chunks[i].text)
            for i in order
        ]

    def count(self) -> int:
        """Chunks embedded so far."""
        return self.store.chunk_count()


def _scores(query: np.ndarray, matrix: np.ndarray, similarity: str) -> np.ndarray:
    """Similarities of the rows of `matrix` to `query`, as the FAISS index scores them."""
    if similarity == "cosine":
        query = query / max(float(np.linalg.norm(query)), 1e-12)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        matrix = matrix / np.maximum(norms, 1e-12)
    if similarity == "l2_norm":
        distances = ((matrix - query) ** 2).sum(axis=1)
        return 1.0 / (1.0 + distances)
    return matrix @ query


def _or_empty(part: np.ndarray | None, dimension: int) -> np.ndarray:
    """The vectors of a document, or an empty matrix for a document without chunks."""
    return part if part is not None else np.zeros((0, dimension), dtype=np.float32)
