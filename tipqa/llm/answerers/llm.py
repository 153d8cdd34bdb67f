"""The model under evaluation on any LLM provider: the answer prompt, greedy, token logprobs."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from tipqa.core.errors import ConfigError
from tipqa.core.settings import Settings, setting
from tipqa.core.stats import StepStats
from tipqa.llm.answerers.base import DEFAULT_PROMPT, Answer, answer_template
from tipqa.llm.cache import LLMCache
from tipqa.llm.cached_chat import transport_of
from tipqa.llm.chat import ChatModel, ChatPrompt, Completion, Decoding
from tipqa.llm.settings import LLMTaskSettings

Answered = Callable[[int, Answer], None]
"""Hears an answer as it arrives: the question's index and the answer."""


class AnswerSettings(LLMTaskSettings, Protocol):
    """What an LLM answerer reads of its settings (an `LLMSettings` with these members)."""

    def decoding(self) -> Decoding:
        """The decoding of every question."""
        ...

    def described(self) -> dict[str, Any]:
        """The decoding as recorded with the predictions."""
        ...


@dataclass(frozen=True)
class AnswerTask(Settings):
    """[evaluate.<provider>] fields of a provider registered with `register_provider`."""

    prompt: str = setting(DEFAULT_PROMPT, doc="the answer prompt: a shipped template or a file")
    max_tokens: int = setting(64, doc="tokens of an answer at most")
    stop: tuple[str, ...] = setting(("\n",), doc="stop strings (JSON list; empty: none)")
    logprobs: bool = setting(True, doc="ask for token logprobs (the answer's confidence)")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.max_tokens < 1:
            raise ConfigError(f"answerer max_tokens must be >= 1, got {self.max_tokens}")

    def decoding(self) -> Decoding:
        """Greedy, with the stop strings and the chosen tokens' logprobs."""
        return Decoding(max_tokens=self.max_tokens, stop=self.stop, token_logprobs=self.logprobs)

    def described(self) -> dict[str, Any]:
        """Temperature 0 and the settings that shape the answer text and its logprobs."""
        return {
            "temperature": 0,
            "max_tokens": self.max_tokens,
            "stop": list(self.stop),
            "logprobs": self.logprobs,
        }


class LLMAnswerer:
    """Sends the answer prompt as one user message, greedy; counts and converts the answers.

    With `cache` the chat model goes behind the LLM cache (`tipqa.llm.cached_chat`).
    """

    stats: StepStats

    def __init__(
        self, settings: AnswerSettings, *, cache: LLMCache | None = None, progress: bool = True
    ) -> None:
        self.settings = settings
        self.task = settings
        self.model = settings.model
        self.template = answer_template(settings.prompt)
        self.cache = cache
        self.progress = progress
        self.stats = StepStats("answers")
        self.chat = settings.chat_model(self.stats, cache=cache, progress=progress)
        self.transport = transport_of(self.chat)
        self.backend = self.chat.provider

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r}, chat={self.chat!r})"

    def decoding(self) -> dict[str, Any]:
        """The settings that shape the answer text and its logprobs (recorded)."""
        return self.task.described()

    def chat_for(self, stats: StepStats) -> ChatModel:
        """Another chat model on this model, behind the same cache, counting into `stats`."""
        return self.settings.chat_model(stats, cache=self.cache, progress=self.progress)

    def prompt(self, question: str) -> ChatPrompt:
        """The prompt of one question: the answer template as one user message."""
        return ChatPrompt([{"role": "user", "content": self.template.render(question=question)}])

    def answer(self, questions: Sequence[str], on_answer: Answered | None = None) -> list[Answer]:
        """One answer per question, in order; `on_answer` hears each as soon as it is known."""
        out: list[Answer | None] = [None] * len(questions)

        def take(i: int, result: Completion) -> None:
            out[i] = answer = self._answer(result)
            if on_answer is not None:
                on_answer(i, answer)

        prompts = [self.prompt(question) for question in questions]
        self.chat.complete(prompts, self.task.decoding(), desc="answers", on_result=take)
        return [answer for answer in out if answer is not None]

    def _answer(self, result: Completion) -> Answer:
        """Count and convert one completion."""
        if not result.ok:
            return Answer(usage=result.usage, error=result.error)
        self.stats.add("answered")
        if result.token_logprobs is None:
            self.stats.add("without_logprobs")
        return Answer(
            result.text.strip(), result.token_logprobs, result.usage, cached=result.cached
        )

    def close(self) -> None:
        """Let go of the transport's connections (and the cache's)."""
        self.chat.close()
