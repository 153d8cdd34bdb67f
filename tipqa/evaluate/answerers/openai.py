"""The model under evaluation on an OpenAI-compatible chat server (OpenAI, vLLM's server, ...)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tipqa.errors import ConfigError
from tipqa.evaluate.answerers.base import DEFAULT_PROMPT, Answer, answer_template
from tipqa.llm.openai_client import ChatResult, OpenAIServerSettings
from tipqa.llm.prompts import load_template
from tipqa.settings import setting
from tipqa.stats import StageStats


@dataclass(frozen=True)
class OpenAIAnswererSettings(OpenAIServerSettings):
    """[evaluate.openai]: the model under evaluation on an OpenAI-compatible server."""

    prompt: str = setting(DEFAULT_PROMPT, doc="the answer prompt: a shipped template or a file")
    max_tokens: int = setting(64, doc="tokens of an answer at most")
    stop: tuple[str, ...] = setting(("\n",), doc="stop strings (JSON list; empty: none)")
    logprobs: bool = setting(True, doc="ask for token logprobs (the answer's confidence)")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.max_tokens < 1:
            raise ConfigError(f"answerer max_tokens must be >= 1, got {self.max_tokens}")

    def identity(self) -> dict[str, Any]:
        """The settings that decide the answers, with the prompt template's content hash."""
        return {**super().identity(), "prompt_sha256": load_template(self.prompt).sha256}


class OpenAIAnswerer:
    """Sends the answer prompt as one user message at temperature 0, bounded and retried."""

    backend = "openai"

    def __init__(self, settings: OpenAIAnswererSettings, *, progress: bool = True) -> None:
        self.settings = settings
        self.model = settings.model
        self.template = answer_template(settings.prompt)
        self.stats = StageStats("answers")
        self.client = settings.client(self.stats, progress=progress)
        self.params: dict[str, Any] = {"max_tokens": settings.max_tokens}
        if settings.stop:
            self.params["stop"] = list(settings.stop)
        if settings.logprobs:
            self.params["logprobs"] = True

    def __repr__(self) -> str:
        return f"OpenAIAnswerer(model={self.model!r}, base_url={self.client.base_url!r})"

    def decoding(self) -> dict[str, Any]:
        """Temperature 0 and the settings that shape the answer text and its logprobs."""
        s = self.settings
        return {
            "temperature": 0,
            "max_tokens": s.max_tokens,
            "stop": list(s.stop),
            "logprobs": s.logprobs,
        }

    def answer(self, questions: Sequence[str]) -> list[Answer]:
        """One answer per question, in order; a request that failed carries its error."""
        batch = [
            [{"role": "user", "content": self.template.render(question=question)}]
            for question in questions
        ]
        results = self.client.complete_many(batch, desc="answers", **self.params)
        return [self._answer(result) for result in results]

    def _answer(self, result: ChatResult) -> Answer:
        """Count and convert one chat result."""
        if not result.ok:
            return Answer(usage=result.usage, error=result.describe_error())
        self.stats.add("answered")
        if result.token_logprobs is None:
            self.stats.add("without_logprobs")
        return Answer(result.text.strip(), result.token_logprobs, result.usage)

    def close(self) -> None:
        """Close the HTTP connections."""
        self.client.close()
