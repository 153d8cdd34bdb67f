"""The one LLM layer: prompts and decoding go into a `ChatModel`, `Completion`s come out.

A chat model is a transport (an OpenAI-compatible server, vLLM's offline engine, ...): it knows
how to send messages and read answers, nothing of judging, keywords or answering. The tasks on
top (`tipqa.llm.judges.llm`, `tipqa.llm.keywords.llm`, `tipqa.llm.answerers.llm`) own their
template, parsing, re-asks and records, so a new transport serves all three. The one LLM cache
sits at this seam, in front of the transport (`tipqa.llm.cached_chat`).

Prompt length has one rule: a prompt that overflows the context is cut in its `cuttable` text
(from the end, the rest kept whole) when it has one; what still does not fit, or a prompt with
nothing to cut, is a failed completion with a "prompt too long" error, never a guess. A
transport that cannot count tokens sends the prompt whole and reports the server's error.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from tipqa.core.stats import StepStats
from tipqa.llm.usage import Usage

Message = dict[str, str]
TopLogprobs = list[list[tuple[str, float]]]
ANSWERS = ("yes", "no")
RAW_CHARS = 80
"""How much of an unreadable reply an error message quotes."""


@dataclass(frozen=True)
class Decoding:
    """How to decode: token budget, sampling, log-probabilities, constrained choice, stops.

    `top_logprobs`: alternatives to report at each position (0: none); `token_logprobs`: report
    the generated tokens' own log-probabilities; `choice`: constrain the answer to one of these
    strings; `extra`: more request fields for transports that send requests (a JSON object).
    """

    max_tokens: int
    temperature: float = 0.0
    seed: int | None = None
    top_logprobs: int = 0
    token_logprobs: bool = False
    choice: tuple[str, ...] = ()
    stop: tuple[str, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ChatPrompt:
    """The messages of one request; `cut(text)` rebuilds them with `cuttable` shortened."""

    messages: list[Message]
    cuttable: str = ""
    cut: Callable[[str], list[Message]] | None = None


@dataclass
class Completion:
    """One request's outcome: the text and log-probabilities, or the error that ended it.

    `top_logprobs`: the alternatives at each generated position; `token_logprobs`: those of the
    generated tokens (None when not reported); `truncated`: the prompt was cut to fit;
    `reasoned_only`: the model wrote reasoning but no answer (a thinking model out of tokens);
    `cached`: it came from the LLM cache (`usage` is then what it cost when it was asked).
    """

    text: str = ""
    top_logprobs: TopLogprobs = field(default_factory=list)
    token_logprobs: list[float] | None = None
    usage: Usage = field(default_factory=Usage)
    error: str | None = None
    truncated: bool = False
    reasoned_only: bool = False
    cached: bool = False

    @property
    def ok(self) -> bool:
        """True when the model answered."""
        return self.error is None


OnCompletion = Callable[[int, Completion], bool | None]
"""Hears a completion as it arrives: its prompt's index and the completion. It returns False
when the completion is of no use (an answer its parser refuses): the LLM cache does not keep it,
so that a rerun asks again."""


class ChatModel(Protocol):
    """A transport: completes chat prompts; never raises for a failed request."""

    provider: str
    model: str
    stats: StepStats

    def identity(self) -> dict[str, Any]:
        """What decides its completions besides the messages and the decoding (the provider,
        the model, how it is run): with those, the key of a completion in the LLM cache."""
        ...

    def complete(
        self,
        prompts: Sequence[ChatPrompt],
        decoding: Decoding,
        *,
        desc: str = "chat",
        on_result: OnCompletion | None = None,
    ) -> list[Completion]:
        """One completion per prompt, in order; `on_result` hears each as soon as it is known."""
        ...

    def close(self) -> None:
        """Let go of connections; the model completes no more."""
        ...


class PromptByPrompt(ABC):
    """The base of a transport that asks one prompt at a time: it writes `identity` and
    `complete_one`, and `complete` is the loop (a transport that batches writes its own)."""

    provider: str
    model: str
    stats: StepStats

    def complete(
        self,
        prompts: Sequence[ChatPrompt],
        decoding: Decoding,
        *,
        desc: str = "chat",
        on_result: OnCompletion | None = None,
    ) -> list[Completion]:
        """One completion per prompt, in order; `on_result` hears each as soon as it is known."""
        out = []
        for index, prompt in enumerate(prompts):
            out.append(self.complete_one(prompt, decoding))
            if on_result is not None:
                on_result(index, out[-1])
        return out

    @abstractmethod
    def identity(self) -> dict[str, Any]:
        """What decides its completions besides the messages and the decoding."""

    @abstractmethod
    def complete_one(self, prompt: ChatPrompt, decoding: Decoding) -> Completion:
        """One prompt's completion; a failed request is a `Completion` with its `error`."""

    def close(self) -> None:  # noqa: B027 (a transport that holds nothing has nothing to close)
        """Let go of what the transport holds: nothing, unless a subclass says otherwise."""


def p_yes(
    top_logprobs: Iterable[Iterable[tuple[str, float]]], *, prefixes: bool = False
) -> float | None:
    """P(yes) / (P(yes) + P(no)) at the first answer position where either is among the top.

    Token texts are compared lower-cased without surrounding spaces. With `prefixes` (constrained
    choice, where a first token such as "y" can only grow into "yes") a token counts for the
    answer it is a prefix of; otherwise it must be the whole word. None when neither appears.
    """
    for alternatives in top_logprobs:
        mass = {"yes": 0.0, "no": 0.0}
        for text, logprob in alternatives:
            token = text.strip().lower()
            if not token:
                continue
            for answer in ANSWERS:
                if token == answer or (prefixes and answer.startswith(token)):
                    mass[answer] += math.exp(logprob)
        total = mass["yes"] + mass["no"]
        if total > 0:
            return mass["yes"] / total
    return None
