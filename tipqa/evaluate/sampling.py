"""The model calls behind the confidences of `tipqa.evaluate.confidence`: samples and P(True).

Sampled answers: the answer prompt n times per question at `sample_temperature`, sample i with
seed `seed + i`, so that a rerun asks for the same samples; with the LLM cache each is stored as
soon as it arrives (its key holds the seed, the temperature and the token budget:
`tipqa.llm.cached_chat`), so a rerun after a failure asks only for those missing. P(True):
the `p-true-v1` prompt with the question and the greedy answer, one token at temperature 0 with
the top log-probabilities. A question with a failed sample, or whose P(True) reply has neither
yes nor no among its top tokens, gets no value of that measure and is counted.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tipqa.core.errors import InputError
from tipqa.core.jsonl import atomic_open, iter_json_lines
from tipqa.core.stats import StepStats
from tipqa.evaluate.confidence import (
    ANSWER_EQUIVALENCE,
    ConfidenceSettings,
    RatedAnswer,
    sample_confidences,
)
from tipqa.evaluate.metrics import Scored
from tipqa.evaluate.refusal import boxed_reading
from tipqa.llm.answerers.llm import LLMAnswerer
from tipqa.llm.chat import ChatModel, ChatPrompt, Decoding, p_yes
from tipqa.llm.prompts import load_template

P_TRUE_PROMPT = "p-true-v1"
TOP_LOGPROBS = 5


def answer_text(text: str) -> str:
    """A sampled response's answer: the last box's content when it has one, else the text."""
    boxed = boxed_reading(text)
    return boxed.answer if boxed is not None else text.strip()


def sample_answers(
    chat: ChatModel,
    answerer: LLMAnswerer,
    questions: Sequence[str],
    settings: ConfidenceSettings,
    seed: int,
    stats: StepStats,
) -> list[list[str] | None]:
    """`settings.samples` sampled answers per question (None where a sample failed)."""
    stop = answerer.task.decoding().stop
    prompts = [answerer.prompt(question) for question in questions]
    drawn: list[list[str] | None] = [[] for _ in questions]
    for i in range(settings.samples):
        decoding = Decoding(
            max_tokens=settings.sample_max_tokens,
            temperature=settings.sample_temperature,
            seed=seed + i,
            stop=stop,
        )
        for q, result in enumerate(chat.complete(prompts, decoding, desc="samples")):
            answers = drawn[q]
            if not result.ok:
                stats.error("samples_failed")
                drawn[q] = None
            elif answers is not None:
                answers.append(answer_text(result.text))
    stats.add("questions_without_samples", sum(answers is None for answers in drawn))
    return drawn


def p_true(
    chat: ChatModel, pairs: Sequence[tuple[str, str]], stats: StepStats
) -> list[float | None]:
    """P(True) of each (question, proposed answer) from the reply's top log-probabilities."""
    template = load_template(P_TRUE_PROMPT)
    decoding = Decoding(max_tokens=1, top_logprobs=TOP_LOGPROBS)
    prompts = [
        ChatPrompt([{"role": "user", "content": template.render(question=q, answer=a)}])
        for q, a in pairs
    ]
    out: list[float | None] = []
    for result in chat.complete(prompts, decoding, desc="p_true"):
        probability = p_yes(result.top_logprobs) if result.ok else None
        if not result.ok:
            stats.error("p_true_failed")
        elif probability is None:
            stats.add("p_true_without_yes_no")
        out.append(probability)
    return out


def rate(
    scored: Sequence[Scored],
    questions: Sequence[str],
    answerer: LLMAnswerer,
    settings: ConfidenceSettings,
    seed: int,
    stats: StepStats,
) -> tuple[list[RatedAnswer], list[dict[str, Any]]]:
    """Every question's confidences by method, and the rows of `confidence.jsonl`.

    Samples and P(True) are asked on a chat model of the answerer's (behind its cache) that
    counts into `stats`.
    """
    equivalence = ANSWER_EQUIVALENCE.create(settings.equivalence)
    samples: list[list[str] | None] = [None] * len(scored)
    truths: list[float | None] = [None] * len(scored)
    if settings.active:
        chat = answerer.chat_for(stats)
        try:
            if settings.samples:
                samples = sample_answers(chat, answerer, questions, settings, seed, stats)
            if settings.p_true:
                asked = [i for i, item in enumerate(scored) if not item.refused]
                stats.add("p_true_refusals_skipped", len(scored) - len(asked))
                pairs = [(questions[i], scored[i].answer) for i in asked]
                for i, value in zip(asked, p_true(chat, pairs, stats), strict=True):
                    truths[i] = value
        finally:
            chat.close()
    rated, rows = [], []
    for item, drawn, truth in zip(scored, samples, truths, strict=True):
        by_samples = sample_confidences(item.answer, drawn or [], equivalence)
        values = {
            "sequence_probability": item.confidence,
            "agreement": by_samples["agreement"],
            "semantic_entropy": by_samples["semantic_entropy_confidence"],
            "p_true": truth,
        }
        rated.append(RatedAnswer(item.id, item.correct, item.label == "answerable", values))
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


def read_rated(path: Path) -> list[RatedAnswer]:
    """The confidences `write_confidences` wrote, as `RatedAnswer` (for fitting temperatures)."""
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
        out.append(RatedAnswer(row["id"], bool(row.get("correct")), bool(row.get("known")), values))
    return out
