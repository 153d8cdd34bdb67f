"""Data of the vector-recall benchmark: real chunks, their embeddings (cached), the queries, and
vectors drawn from the real vectors' statistics for sizes too large to embed here.

Chunks are every real document of the shared samples and then those of a demo world of
`documents` documents, cut by the pipeline's splitter; their embeddings are computed once by the
default embedder and cached in the work folder in parts of `PART` chunks, each named by a hash
of the embedder and of its chunks, so an interrupted run resumes and a shorter prefix of the
chunks (`--max-chunks`) reuses what was embedded. `python -m benchmarks.vector_data` only
embeds (for a long run in the background).

Larger sizes: `ClusterModel` fits k-means to the real vectors and draws new ones from a
Gaussian per cluster with that cluster's own mean and covariance (the covariance of its
members, sampled through them: mean + residualsᵀ z / sqrt(n), z ~ N(0, I)), then normalises
them like the real ones. The real vectors are kept and the drawn ones added, so the real
neighbourhoods stay and grow denser, which is what makes an ANN index lose recall with size.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from benchmarks.common import corpus_files, ensure_world, world_questions
from benchmarks.real_text import real_documents, real_questions
from tipqa.core.records import Chunk, Question
from tipqa.indexes.chunking import iter_chunks, make_splitter
from tipqa.sources.corpus.files import FileCorpus

PART = 8192
CLUSTERS = 256


def corpus_chunks(embedder: Any, world: Path, limit: int | None = None) -> list[Chunk]:
    """The chunks of the real samples, then those of the demo world (the first `limit`)."""
    corpus = FileCorpus.of(corpus_files(world), progress=False)
    real = real_documents()
    sample = [d.text for d in islice(iter(corpus), 200)] + [d.text for d in real[:200]]
    splitter = make_splitter(embedder, calibration_texts=sample)
    chunks = list(iter_chunks(real, splitter)) + list(iter_chunks(iter(corpus), splitter))
    return chunks[:limit] if limit is not None else chunks


def _key(embedder: Any, chunks: list[Chunk]) -> str:
    """A name for the vectors of these chunks under this embedder."""
    digest = hashlib.sha256(embedder.name.encode())
    for chunk in chunks:
        digest.update(chunk.id.encode() + b"\0" + chunk.text.encode() + b"\0")
    return digest.hexdigest()[:16]


def cached_vectors(embedder: Any, chunks: list[Chunk], workdir: Path) -> np.ndarray:
    """Embeddings of `chunks`, computed in parts of `PART` chunks, each saved once."""
    parts = workdir / "vector-parts"
    parts.mkdir(parents=True, exist_ok=True)
    blocks = []
    starts = range(0, len(chunks), PART)
    for start in tqdm(starts, desc=f"embedding chunks ({PART} a part)", unit="part"):
        block = chunks[start : start + PART]
        path = parts / f"{_key(embedder, block)}.npy"
        if not path.is_file():
            scratch = parts / f".{path.name}"
            np.save(scratch, embedder.encode_passages([c.text for c in block]))
            scratch.rename(path)
        blocks.append(np.load(path))
    return np.ascontiguousarray(np.vstack(blocks), dtype=np.float32)


@dataclass
class Queries:
    """The benchmark's questions: their texts, where each came from, and their embeddings."""

    texts: list[str]
    sources: list[str]
    vectors: np.ndarray


def queries(embedder: Any, world: Path) -> Queries:
    """The demo world's questions and the real TriviaQA questions, embedded as queries."""
    demo: list[Question] = world_questions(world)
    trivia = real_questions()
    texts = [q.text for q in demo] + [q.text for q in trivia]
    sources = ["demo"] * len(demo) + ["triviaqa"] * len(trivia)
    return Queries(texts, sources, embedder.encode_queries(texts))


class ClusterModel:
    """k-means clusters of real vectors, each a Gaussian of its members' mean and covariance."""

    def __init__(self, vectors: np.ndarray, clusters: int = CLUSTERS, seed: int = 0) -> None:
        import faiss

        kmeans = faiss.Kmeans(vectors.shape[1], clusters, niter=10, seed=seed, spherical=True)
        kmeans.train(vectors)
        _, assigned = kmeans.index.search(vectors, 1)
        self.members = [vectors[assigned[:, 0] == c] for c in range(clusters)]
        self.members = [m for m in self.members if len(m) >= 2]
        self.weights = np.array([len(m) for m in self.members], dtype=np.float64)
        self.weights /= self.weights.sum()

    def draw(self, count: int, seed: int = 1) -> np.ndarray:
        """`count` unit vectors: a cluster by its share of the real vectors, then its Gaussian."""
        rng = np.random.default_rng(seed)
        per_cluster = rng.multinomial(count, self.weights)
        blocks = []
        for members, wanted in zip(self.members, per_cluster, strict=True):
            if not wanted:
                continue
            mean = members.mean(axis=0)
            residuals = (members - mean).astype(np.float32)
            z = rng.standard_normal((int(wanted), len(members)), dtype=np.float32)
            blocks.append(mean + z @ residuals / np.float32(np.sqrt(len(members))))
        drawn = np.vstack(blocks).astype(np.float32)
        drawn /= np.linalg.norm(drawn, axis=1, keepdims=True)
        return drawn[rng.permutation(len(drawn))]


def grown(real: np.ndarray, size: int, seed: int = 1) -> np.ndarray:
    """The real vectors plus vectors drawn from their statistics, `size` in all."""
    if size <= len(real):
        return real[:size]
    return np.vstack([real, ClusterModel(real).draw(size - len(real), seed)])


def demo_world(workdir: Path, documents: int) -> Path:
    """The demo world of `documents` documents (written once)."""
    return ensure_world(documents, workdir)


def main() -> None:
    """Embed the chunks of the real samples and of a demo world (cached; resumable)."""
    import argparse

    from benchmarks.common import DEFAULT_WORKDIR
    from tipqa.indexes.embedders.sentence_transformers import (
        SentenceTransformerEmbedder,
        SentenceTransformerSettings,
    )

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--documents", type=int, default=100_000)
    parser.add_argument("--workdir", type=Path, default=DEFAULT_WORKDIR)
    parser.add_argument("--runtime", default="auto", help="embedder runtime (vectors agree)")
    args = parser.parse_args()
    embedder = SentenceTransformerEmbedder(SentenceTransformerSettings(runtime=args.runtime))
    chunks = corpus_chunks(embedder, demo_world(args.workdir, args.documents))
    vectors = cached_vectors(embedder, chunks, args.workdir)
    print(f"{len(chunks)} chunks, vectors {vectors.shape}, embedder {embedder.name}")


if __name__ == "__main__":
    main()
