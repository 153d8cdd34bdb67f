"""Vector recall that holds with size: FAISS indexes against exact search on real embeddings.

    python -m benchmarks.vector_recall [--documents 100000] [--million] [--grid] [--max-chunks N]

Vectors: the default embedder's embeddings of every chunk of a demo world of `--documents`
documents plus the real samples (`benchmarks.vector_data`, cached); queries: the world's
questions and the TriviaQA questions of the samples. Sizes: the first 10k real vectors, all of
them, the same count drawn from their statistics (to check that drawn vectors are no easier
than real ones), and the real vectors plus drawn ones up to each `--grow` size (100k by
default; `--million` adds 1M).

For each size: exact top-10 by a flat inner-product index, then the shipped default
(`pq-rerank`: PQ codes built by the library's `pq_codes`, searched at several `rerank`
factors) and HNSW (M=64, efConstruction 400, at several efSearch; below 1M only, its build
there takes most of an hour on two cores; with `--grid` at every size, plus other M /
efConstruction and fp16 / int8 scalar-quantised storage): recall@10 against exact, single-query
p50 latency and queries/s in batches of 64, each against the flat index's in the same run,
with the index's bytes, all on `--threads` FAISS threads (1 by default: on shared cores OpenMP
threads that wait for each other cost more than they bring; the thread rows measure it). At
the real size the shipped `FaissVectorIndex` is also built with its defaults and, through the
library's steps with the rule judge, the demo questions are labelled with it and with exact
search, and the labels compared.
"""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np

from benchmarks.common import arguments, latencies, ratio, save, stopwatch, table
from benchmarks.vector_data import (
    ClusterModel,
    cached_vectors,
    corpus_chunks,
    demo_world,
    grown,
    queries,
)
from benchmarks.vector_labels import label_changes
from tipqa.indexes.vector_index.faiss import FaissSettings
from tipqa.indexes.vector_index.faiss_files import import_faiss
from tipqa.indexes.vector_index.pq_rerank import pq_codes, reranked

K = 10
BATCH = 64
SINGLE_QUERIES = 200
EF_SEARCH = (64, 128, 256, 512, 1024)
RERANK = (10, 20, 30, 50)
DEFAULT = FaissSettings()
HNSW = (64, 400)
GRID = ((16, 200), (32, 80), (48, 200))
STORAGE_GRID = ("fp16", "sq8")
MILLION = 1_000_000
REAL_PREFIXES = ("wiki:", "cc:", "evidence:")


def _speed(index: Any, queries: np.ndarray) -> dict[str, float]:
    """Single-query p50/p95 (ms) and queries/s in batches of 64."""
    single = latencies(lambda q: index.search(q[None, :], K), list(queries[:SINGLE_QUERIES]), 1)
    started = time.perf_counter()
    for start in range(0, len(queries), BATCH):
        index.search(queries[start : start + BATCH], K)
    seconds = time.perf_counter() - started
    return {
        "single_p50_ms": single["p50_ms"],
        "single_p95_ms": single["p95_ms"],
        "batch_qps": round(len(queries) / seconds, 1),
    }


def _recall(found: np.ndarray, truth: np.ndarray) -> float:
    """Mean share of the exact top k found."""
    return float(np.mean([len(set(f) & set(t)) / K for f, t in zip(found, truth, strict=True)]))


def _hnsw(vectors: np.ndarray, m: int, ef_construction: int, storage: str = "flat") -> Any:
    """An HNSW index of the vectors (inner product), with flat, fp16 or int8 storage."""
    faiss = import_faiss()
    dimension = vectors.shape[1]
    metric = faiss.METRIC_INNER_PRODUCT
    if storage == "flat":
        index = faiss.IndexHNSWFlat(dimension, m, metric)
    else:
        kinds = {"fp16": faiss.ScalarQuantizer.QT_fp16, "sq8": faiss.ScalarQuantizer.QT_8bit}
        index = faiss.IndexHNSWSQ(dimension, kinds[storage], m, metric)
        index.train(vectors[: min(len(vectors), 100_000)])
    index.hnsw.efConstruction = ef_construction
    for start in range(0, len(vectors), 50_000):
        index.add(vectors[start : start + 50_000])
    return index


def _flat(vectors: np.ndarray) -> Any:
    """An exact inner-product index of the vectors."""
    flat = import_faiss().IndexFlatIP(vectors.shape[1])
    flat.add(vectors)
    return flat


def _pq_rerank(vectors: np.ndarray) -> tuple[Any, Any]:
    """The shipped default's FAISS structures: the exact vectors and their PQ codes."""
    flat = _flat(vectors)
    return flat, pq_codes(import_faiss(), flat, DEFAULT.pq_dims)


def _row(base: dict, exact: dict, label: str, index: Any, query: np.ndarray, truth: Any) -> dict:
    """Recall and speed of one searchable index against the exact figures."""
    _, found = index.search(query, K)
    speed = _speed(index, query)
    return {
        **base,
        "index": label,
        "recall_at_10": round(_recall(found, truth), 4),
        **speed,
        "single_speedup": ratio(exact["single_p50_ms"], speed["single_p50_ms"]),
        "batch_speedup": ratio(speed["batch_qps"], exact["batch_qps"]),
    }


def _bytes(*indexes: Any) -> int:
    """Serialised size of FAISS indexes."""
    return sum(len(import_faiss().serialize_index(index)) for index in indexes)


def size_rows(name: str, vectors: np.ndarray, query: np.ndarray, grid: bool) -> list[dict]:
    """Flat, default (pq-rerank) and HNSW rows for one set of vectors."""
    base = {"vectors": name, "size": len(vectors), "dimension": vectors.shape[1]}
    flat = _flat(vectors)
    _, truth = flat.search(query, K)
    exact = _speed(flat, query)
    rows = [{**base, "index": "flat (exact)", "recall_at_10": 1.0, **exact}]
    rows[0]["bytes_per_vector"] = round(_bytes(flat) / len(vectors), 1)
    del flat
    with stopwatch() as clock:
        flat, codes = _pq_rerank(vectors)
    shared = {"build_s": round(clock["seconds"], 1)}
    shared["bytes_per_vector"] = round(_bytes(flat, codes) / len(vectors), 1)
    for factor in RERANK:
        index = reranked(import_faiss(), codes, flat, factor)
        label = f"pq-rerank pq_dims={DEFAULT.pq_dims} rerank={factor}"
        rows.append({**_row(base, exact, label, index, query, truth), **shared})
        rows[-1]["default"] = factor == DEFAULT.rerank
    del flat, codes
    builds = [(*HNSW, "flat")] if grid or len(vectors) < MILLION else []
    if grid:
        builds += [(m, ef, "flat") for m, ef in GRID]
        builds += [(*HNSW, s) for s in STORAGE_GRID]
    for m, ef_construction, storage in builds:
        with stopwatch() as clock:
            index = _hnsw(vectors, m, ef_construction, storage)
        shared = {"build_s": round(clock["seconds"], 1)}
        shared["bytes_per_vector"] = round(_bytes(index) / len(vectors), 1)
        label = f"hnsw M={m} efC={ef_construction}" + ("" if storage == "flat" else f" {storage}")
        for ef in EF_SEARCH:
            index.hnsw.efSearch = ef
            rows.append({**_row(base, exact, f"{label} efS={ef}", index, query, truth), **shared})
        del index
    return rows


def threads_rows(vectors: np.ndarray, query: np.ndarray, threads: int) -> list[dict]:
    """Search speed of exact search and of the default index with 1 and with every core's
    OpenMP thread, taking turns twice (then `threads` again)."""
    faiss = import_faiss()
    flat, codes = _pq_rerank(vectors)
    default = reranked(faiss, codes, flat, DEFAULT.rerank)
    rows = []
    for _ in range(2):
        for count in sorted({1, os.cpu_count() or 1}):
            faiss.omp_set_num_threads(count)
            for name, index in (("flat (exact)", flat), ("pq-rerank default", default)):
                rows.append({"index": name, "threads": count, **_speed(index, query)})
    faiss.omp_set_num_threads(threads)
    return rows


def memory_per_million(rows: list[dict]) -> dict[str, float]:
    """GiB per million chunks of the default index at 384 and 1024 dimensions.

    The default holds each vector as float32 plus its PQ codes, whose bytes grow with the
    dimension (d / (2 pq_dims)), so 1024-d is the measured bytes scaled by 1024 / 384.
    """
    default = [r for r in rows if r.get("default")]
    largest = max(default, key=lambda r: r["size"])
    per_dimension = largest["bytes_per_vector"] / largest["dimension"]
    return {
        f"gib_per_million_{d}d": round(per_dimension * d * MILLION / 2**30, 2) for d in (384, 1024)
    } | {"bytes_per_vector": largest["bytes_per_vector"], "measured_at_size": largest["size"]}


def main() -> None:
    """Embed (once), then measure every size; print the tables and save the JSON."""
    args = arguments(
        __doc__.splitlines()[0],
        lambda p: (
            p.add_argument("--documents", type=int, default=100_000),
            p.add_argument("--million", action="store_true", help="add 1M grown vectors"),
            p.add_argument(
                "--grow", type=int, nargs="*", default=[100_000], help="real + drawn sizes"
            ),
            p.add_argument("--grid", action="store_true", help="more HNSW settings, every size"),
            p.add_argument("--no-labels", action="store_true", help="skip the demo labels"),
            p.add_argument("--max-chunks", type=int, help="only the first N chunks"),
            p.add_argument("--threads", type=int, default=1, help="FAISS OpenMP threads"),
            p.add_argument("--runtime", default="auto", help="embedder runtime (vectors agree)"),
        ),
    )
    from tipqa.indexes.embedders.sentence_transformers import (
        SentenceTransformerEmbedder,
        SentenceTransformerSettings,
    )

    started = time.perf_counter()
    import_faiss().omp_set_num_threads(args.threads)
    embedder = SentenceTransformerEmbedder(SentenceTransformerSettings(runtime=args.runtime))
    world = demo_world(args.workdir, args.documents)
    chunks = corpus_chunks(embedder, world, args.max_chunks)
    with stopwatch() as clock:
        real = cached_vectors(embedder, chunks, args.workdir)
    asked = queries(embedder, world)
    sets = [("real", real[:10_000]), ("real", real)]
    sets.append(("drawn from real statistics", ClusterModel(real).draw(len(real))))
    sizes = sorted({*args.grow, *([MILLION] if args.million else [])} - {len(real)})
    sets += [("real + drawn", grown(real, size)) for size in sizes if size > len(real)]
    rows = [r for name, vectors in sets for r in size_rows(name, vectors, asked.vectors, args.grid)]
    columns = ["vectors", "size", "index", "recall_at_10", "single_p50_ms", "single_speedup"]
    print(table(rows, [*columns, "batch_qps", "batch_speedup", "bytes_per_vector", "build_s"]))
    threads = threads_rows(real, asked.vectors, args.threads)
    print(table(threads, ["index", "threads", "single_p50_ms", "batch_qps"]))
    labels = None if args.no_labels else label_changes(world, chunks, real, embedder, args.workdir)
    if labels is not None:
        print({k: v for k, v in labels.items() if k != "changed"})
    data = {
        "documents": args.documents,
        "chunks": len(chunks),
        "real_chunks_from_samples": sum(1 for c in chunks if c.doc_id.startswith(REAL_PREFIXES)),
        "queries": {s: asked.sources.count(s) for s in sorted(set(asked.sources))},
        "embedder": embedder.name,
        "embedding_s": round(clock["seconds"], 1),
        "defaults": DEFAULT.to_dict(),
        "rows": rows,
        "threads": threads,
        "memory": memory_per_million(rows),
        "labels": labels,
        "wall_s": round(time.perf_counter() - started, 1),
    }
    print(data["memory"])
    print("saved", save("vector_recall", data, args.results))


if __name__ == "__main__":
    main()
