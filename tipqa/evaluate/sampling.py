"""The model calls behind the confidences of `tipqa.evaluate.confidence`: samples and P(True).

Sampled answers: the answer prompt n times per question at `sample_temperature`, sample i with
seed `seed + i`, so that a rerun asks for the same samples; each is stored in the LLM cache as
soon as it arrives (key: the answerer's identity, the question, the sample's index, seed,
temperature and token budget), so a rerun after a failure asks only for those missing. P(True):
the `p-true-v1` prompt with the question and the greedy answer, one token at temperature 0 with
the top log-probabilities. A question with a failed sample, or whose P(True) reply has neither
yes nor no among its top tokens, gets no value of that measure and is counted.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tipqa.core.errors import InputError
from tipqa.core.jsonl import atomic_open, iter_json_lines
from tipqa.core.stats import StepStats
from tipqa.evaluate.confidence import (
    ANSWER_EQUIVALENCE,
    ConfidenceSettings,
    Rated,
    sample_confidences,
)
from tipqa.evaluate.metrics import Scored
from tipqa.evaluate.refusal import boxed_reading
from tipqa.llm.answerers.llm import LLMAnswerer
from tipqa.llm.cache import LLMCache, cache_key
from tipqa.llm.chat import ChatPrompt, Completion, Decoding, p_yes
from tipqa.llm.prompts import load_template

CONFIDENCE_FILE = "confidence.jsonl"
P_TRUE_PROMPT = "p-true-v1"
TOP_LOGPROBS = 5


def answer_text(text: str) -> str:
    """A sampled response's answer: the last box's content when it has one, else the text."""
    boxed = boxed_reading(text)
    return boxed.answer if boxed is not None else text.strip()


def _cached_complete(
    answerer: LLMAnswerer,
    keys: Sequence[str],
    prompts: Sequence[ChatPrompt],
    decodings: Sequence[Decoding],
    cache: LLMCache | None,
    stats: StepStats,
    read: Callable[[Completion], dict[str, Any]],
    desc: str,
) -> list[dict[str, Any] | None]:
    """Each request's stored value from the cache, else asked (grouped by decoding) and stored."""
    stored = cache.get_many(keys) if cache is not None else {}
    out: list[dict[str, Any] | None] = [stored.get(key) for key in keys]
    stats.add(f"{desc}_cache_hits", sum(value is not None for value in out))
    groups: list[tuple[Decoding, list[int]]] = []
    for i, value in enumerate(out):
        if value is None:
            group = next((g for d, g in groups if d == decodings[i]), None)
            if group is None:
                groups.append((decodings[i], group := []))
            group.append(i)
    for decoding, misses in groups:

        def take(position: int, result: Completion, misses: list[int] = misses) -> None:
            index = misses[position]
            if not result.ok:
                stats.error(f"{desc}_failed")
                return
            out[index] = value = read(result)
            if cache is not None:
                cache.put(keys[index], answerer.backend, value)

        answerer.chat.complete([prompts[i] for i in misses], decoding, desc=desc, on_result=take)
    return out


def sample_answers(
    answerer: LLMAnswerer,
    questions: Sequence[str],
    settings: ConfidenceSettings,
    seed: int,
    cache: LLMCache | None,
    stats: StepStats,
) -> list[list[str] | None]:
    """`settings.samples` sampled answers per question (None where a sample failed)."""
    n = settings.samples
    stop = answerer.task.decoding().stop
    keys, prompts, decodings = [], [], []
    for question in questions:
        prompt = answerer.prompt(question)
        for i in range(n):
            decoding = Decoding(
                max_tokens=settings.sample_max_tokens,
                temperature=settings.sample_temperature,
                seed=seed + i,
                stop=stop,
            )
            inputs = {
                "question": question,
                "sample": i,
                "seed": seed + i,
                "temperature": settings.sample_temperature,
                "max_tokens": settings.sample_max_tokens,
            }
            keys.append(cache_key(f"sample:{answerer.backend}", answerer.identity, inputs))
            prompts.append(prompt)
            decodings.append(decoding)
    values = _cached_complete(
        answerer,
        keys,
        prompts,
        decodings,
        cache,
        stats,
        lambda result: {"text": result.text},
        "samples",
    )
    out: list[list[str] | None] = []
    for start in range(0, len(values), n):
        chunk = values[start : start + n]
        if any(value is None for value in chunk):
            stats.add("questions_without_samples")
            out.append(None)
            continue
        out.append([answer_text(str(value["text"])) for value in chunk if value is not None])
    return out


def p_true(
    answerer: LLMAnswerer,
    pairs: Sequence[tuple[str, str]],
    cache: LLMCache | None,
    stats: StepStats,
) -> list[float | None]:
    """P(True) of each (question, proposed answer) from the reply's top log-probabilities."""
    template = load_template(P_TRUE_PROMPT)
    decoding = Decoding(max_tokens=1, top_logprobs=TOP_LOGPROBS)
    identity = {**answerer.identity, "p_true_prompt_sha256": template.sha256}
    keys = [
        cache_key(f"p_true:{answerer.backend}", identity, {"question": q, "answer": a})
        for q, a in pairs
    ]
    prompts = [
        ChatPrompt([{"role": "user", "content": template.render(question=q, answer=a)}])
        for q, a in pairs
    ]

    def read(result: Completion) -> dict[str, Any]:
        return {"p_true": p_yes(result.top_logprobs), "text": result.text}

    values = _cached_complete(
        answerer, keys, prompts, [decoding] * len(pairs), cache, stats, read, "p_true"
    )
    out = []
    for value in values:
        probability = None if value is None else value.get("p_true")
        if value is not None and probability is None:
            stats.add("p_true_without_yes_no")
        out.append(None if probability is None else float(probability))
    return out


def rate(
    scored: Sequence[Scored],
    questions: Sequence[str],
    answerer: LLMAnswerer,
    settings: ConfidenceSettings,
    seed: int,
    cache: LLMCache | None,
    stats: StepStats,
) -> tuple[list[Rated], list[dict[str, Any]]]:
    """Every question's confidences by method, and the rows of `confidence.jsonl`."""
    equivalence = ANSWER_EQUIVALENCE.create(settings.equivalence)
    samples: list[list[str] | None] = [None] * len(scored)
    if settings.samples:
        samples = sample_answers(answerer, questions, settings, seed, cache, stats)
    truths: list[float | None] = [None] * len(scored)
    if settings.p_true:
        asked = [i for i, item in enumerate(scored) if not item.refused]
        stats.add("p_true_refusals_skipped", len(scored) - len(asked))
        found = p_true(answerer, [(questions[i], scored[i].answer) for i in asked], cache, stats)
        for i, value in zip(asked, found, strict=True):
            truths[i] = value
    rated, rows = [], []
    for item, drawn, truth in zip(scored, samples, truths, strict=True):
        by_samples = sample_confidences(item.answer, drawn or [], equivalence)
        values = {
            "sequence_probability": item.confidence,
            "agreement": by_samples["agreement"],
            "semantic_entropy": by_samples["semantic_entropy_confidence"],
            "p_true": truth,
        }
        rated.append(Rated(item.id, item.correct, item.label == "answerable", values))
        rows.append(
            {
                "id": item.id,
                "correct": item.correct,
                "known": item.label == "answerable",
                "samples": drawn,
                **by_samples,
                "p_true": truth,
                "sequence_probability": item.confidence,
            }
        )
    return rated, rows


def write_confidences(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    """The per-question confidences, one JSON object a line (atomically)."""
    with atomic_open(path) as handle:
        for row in rows:
            handle.write((json.dumps(row) + "\n").encode())


def read_rated(path: Path) -> list[Rated]:
    """The confidences `write_confidences` wrote, as `Rated` (for fitting temperatures)."""
    if not path.is_file():
        raise InputError("no confidences here (evaluate that split first)", path=str(path))
    out = []
    for number, row in iter_json_lines(path):
        if not isinstance(row, dict) or not isinstance(row.get("id"), str):
            raise InputError("expected a confidence row", path=str(path), line=number)
        values = {
            "sequence_probability": row.get("sequence_probability"),
            "agreement": row.get("agreement"),
            "semantic_entropy": row.get("semantic_entropy_confidence"),
            "p_true": row.get("p_true"),
        }
        out.append(Rated(row["id"], bool(row.get("correct")), bool(row.get("known")), values))
    return out
