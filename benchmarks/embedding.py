"""The cheapest embedding on a CPU: runtimes of the same MiniLM on the same real chunks.

    python -m benchmarks.embedding [--chunks 512] [--queries 300] [--rounds 3]

Chunks are the first `--chunks` chunks of the real samples (`benchmarks.real_text`; demo text
when they are absent), cut by the pipeline's splitter. Each method embeds all of them once per
round, the methods taking turns within a round, so that load from other work on the machine
falls on all of them alike; chunks/s is the median over rounds and each speed-up is the median
of the per-round ratios to torch fp32. Agreement with torch fp32: the minimum cosine over the
chunks, and the mean overlap of the top-10 chunks of `--queries` TriviaQA questions (each
method embedding both the questions and the chunks). int8 is ONNX Runtime's dynamic
quantisation (per-channel weights) of the same export; it is measured, not offered.
"""

from __future__ import annotations

import dataclasses
import shutil
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.common import arguments, corpus_files, ensure_world, save, table
from benchmarks.real_text import real_documents, real_questions
from tipqa.indexes.chunking import iter_chunks, make_splitter
from tipqa.indexes.embedders.sentence_transformers import (
    SentenceTransformerEmbedder,
    SentenceTransformerSettings,
)
from tipqa.sources.corpus.files import FileCorpus

K = 10
METHODS = ("torch fp32", "torch bf16", "onnxruntime fp32", "onnxruntime int8", "openvino fp32")


def _texts(model: SentenceTransformerEmbedder, count: int, workdir: Path) -> tuple[list[str], str]:
    """The first `count` chunks of the real samples (or of a demo world), and which."""
    documents = real_documents()
    source = "real samples (shared/data)"
    if not documents:
        documents = list(FileCorpus.of(corpus_files(ensure_world(10_000, workdir)), progress=False))
        source = "demo world"
    splitter = make_splitter(model, calibration_texts=[d.text for d in documents[:200]])
    chunks = []
    for chunk in iter_chunks(documents, splitter):
        chunks.append(chunk.text)
        if len(chunks) >= count:
            break
    return chunks, source


def _queries(count: int) -> list[str]:
    """TriviaQA questions (or made-up ones when the samples are absent)."""
    questions = [q.text for q in real_questions(limit=count)]
    return questions or [f"Which place is described in passage number {i}?" for i in range(count)]


def _int8(workdir: Path) -> SentenceTransformerEmbedder:
    """An ONNX Runtime embedder whose graph is the int8 (dynamic, per-channel) quantisation of
    the export (the export's own folder stays fp32)."""
    from onnxruntime.quantization import (  # type: ignore[import-untyped]
        QuantType,
        quantize_dynamic,
    )

    from tipqa.indexes.embedders.export import MODEL_FILE, TOKENIZER_FILE
    from tipqa.indexes.embedders.onnx_encoder import OnnxEncoder

    model = SentenceTransformerEmbedder(SentenceTransformerSettings(runtime="onnx"))
    adapter: Any = model._encoder  # the benchmark swaps the graph under the same tokenizer
    info = adapter.inner.info
    folder = workdir / "minilm-int8"
    folder.mkdir(parents=True, exist_ok=True)
    quantize_dynamic(
        str(info.model_file),
        str(folder / MODEL_FILE),
        weight_type=QuantType.QInt8,
        per_channel=True,
    )
    shutil.copyfile(info.tokenizer_file, folder / TOKENIZER_FILE)
    adapter.inner = OnnxEncoder(
        dataclasses.replace(info, folder=folder), batch_size=model.batch_size
    )
    return model


def embedders(workdir: Path) -> dict[str, SentenceTransformerEmbedder]:
    """One embedder per method, loaded before any timing."""
    make = SentenceTransformerEmbedder
    made = {
        "torch fp32": make(SentenceTransformerSettings(runtime="torch")),
        "torch bf16": make(SentenceTransformerSettings(runtime="torch", precision="bf16")),
        "onnxruntime fp32": make(SentenceTransformerSettings(runtime="onnx")),
        "onnxruntime int8": _int8(workdir),
        "openvino fp32": make(SentenceTransformerSettings(runtime="openvino")),
    }
    return {name: made[name] for name in METHODS}


def _top(queries: np.ndarray, chunks: np.ndarray) -> np.ndarray:
    """Indexes of the K nearest chunks of each query (exact inner product)."""
    return np.argsort(-(queries @ chunks.T), axis=1)[:, :K]


def measure(texts: list[str], questions: list[str], rounds: int, workdir: Path) -> dict:
    """Rows per method: chunks/s, speed-up, minimum cosine and top-10 overlap to torch fp32."""
    models = embedders(workdir)
    seconds: dict[str, list[float]] = {name: [] for name in models}
    vectors: dict[str, np.ndarray] = {}
    for _ in range(rounds):
        for name, model in models.items():
            started = time.perf_counter()
            vectors[name] = model.encode_passages(texts)
            seconds[name].append(time.perf_counter() - started)
    reference = vectors["torch fp32"]
    truth = _top(models["torch fp32"].encode_queries(questions), reference)
    rows = []
    for name, model in models.items():
        found = _top(model.encode_queries(questions), vectors[name])
        overlap = np.mean([len(set(a) & set(b)) / K for a, b in zip(found, truth, strict=True)])
        ratios = [
            base / mine for base, mine in zip(seconds["torch fp32"], seconds[name], strict=True)
        ]
        rows.append(
            {
                "method": name,
                "name": model.name,
                "chunks_per_s": round(len(texts) / statistics.median(seconds[name]), 1),
                "speedup_vs_torch_fp32": round(statistics.median(ratios), 2),
                "min_cosine": round(float(np.min(np.sum(vectors[name] * reference, axis=1))), 5),
                "top10_overlap": round(float(overlap), 4),
                "seconds_per_round": [round(s, 2) for s in seconds[name]],
            }
        )
    return {"rows": rows}


def main() -> None:
    """Measure every runtime on the same chunks and print the table."""
    args = arguments(
        __doc__.splitlines()[0],
        lambda p: (
            p.add_argument("--chunks", type=int, default=512),
            p.add_argument("--queries", type=int, default=300),
            p.add_argument("--rounds", type=int, default=3),
        ),
    )
    probe = SentenceTransformerEmbedder(SentenceTransformerSettings(runtime="onnx"))
    texts, source = _texts(probe, args.chunks, args.workdir)
    tokens = probe.count_tokens(texts)
    questions = _queries(args.queries)
    started = time.perf_counter()
    result = measure(texts, questions, args.rounds, args.workdir)
    columns = ["method", "chunks_per_s", "speedup_vs_torch_fp32", "min_cosine", "top10_overlap"]
    print(table(result["rows"], columns))
    data = {
        "chunks": len(texts),
        "chunk_source": source,
        "mean_chunk_tokens": round(float(np.mean(tokens)), 1),
        "queries": len(questions),
        "rounds": args.rounds,
        "wall_s": round(time.perf_counter() - started, 1),
        **result,
    }
    print("saved", save("embedding", data, args.results))


if __name__ == "__main__":
    main()
