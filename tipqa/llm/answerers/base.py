"""The answerer seam: a model that answers questions with the paper's prompt (table 8).

An answer's confidence is the probability the model gave to the answer it generated: the
exponential of the sum of its tokens' log-probabilities, as the backend reports them (None when
the backend reports none).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from tipqa.core.registry import Registry
from tipqa.core.stats import StepStats
from tipqa.llm.prompts import PromptTemplate, load_template
from tipqa.llm.usage import Usage

ANSWER_SLOTS = ("question",)
DEFAULT_PROMPT = "answer-v1"


@dataclass
class Answer:
    """What a model said to one question, with its tokens' log-probabilities, or an error."""

    text: str = ""
    token_logprobs: list[float] | None = None
    usage: Usage = field(default_factory=Usage)
    error: str | None = None
    cached: bool = False

    @property
    def ok(self) -> bool:
        """True when the model answered (an empty answer is an answer)."""
        return self.error is None

    @property
    def confidence(self) -> float | None:
        """The answer's sequence probability; None without log-probabilities or tokens."""
        return sequence_probability(self.token_logprobs)


def sequence_probability(logprobs: Sequence[float] | None) -> float | None:
    """exp(sum of log-probabilities), clipped to [0, 1]; None for None or no tokens."""
    if not logprobs:
        return None
    return min(1.0, max(0.0, math.exp(math.fsum(logprobs))))


def answer_template(name_or_path: str) -> PromptTemplate:
    """The answer prompt (a shipped one or the user's file), checked for its `{question}` slot."""
    template = load_template(name_or_path)
    template.require_slots(*ANSWER_SLOTS)
    return template


class Answerer(Protocol):
    """Answers batches of questions; a failed answer carries an error, never a made-up text."""

    backend: str
    model: str
    template: PromptTemplate
    stats: StepStats

    def decoding(self) -> dict[str, Any]:
        """The settings that shape the answers (recorded with the predictions)."""
        ...

    def answer(
        self, questions: Sequence[str], on_answer: Callable[[int, Answer], None] | None = None
    ) -> list[Answer]:
        """One answer per question text, in order; `on_answer` hears each as it arrives."""
        ...

    def close(self) -> None:
        """Let go of what the answerer holds (connections); it answers no more."""
        ...


ANSWERERS: Registry[Answerer] = Registry("answerer", registered_by=("tipqa.llm.providers",))
"""The models under evaluation, one per LLM provider (registered by `tipqa.llm.providers`)."""
