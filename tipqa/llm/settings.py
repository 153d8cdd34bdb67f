"""The settings every LLM task shares: a prompt template, a model, and the transport to ask."""

from __future__ import annotations

from typing import Any, ClassVar, Protocol

from tipqa.core.settings import Settings
from tipqa.core.stats import StepStats
from tipqa.llm.cache import LLMCache
from tipqa.llm.cached_chat import cached
from tipqa.llm.chat import ChatModel
from tipqa.llm.prompts import PromptTemplate, load_template


class PromptedSettings(Settings):
    """Settings that send a prompt template: its content hash joins their identity."""

    prompt: str

    def identity(self) -> dict[str, Any]:
        """The settings that decide the answers, with the prompt template's content hash."""
        return {**super().identity(), "prompt_sha256": load_template(self.prompt).sha256}


class LLMTaskSettings(Protocol):
    """What an LLM task reads of its settings (an `LLMSettings`): the prompt, the model, the
    task's name in records and the chat model to ask. Each task's settings protocol adds its
    own members."""

    @property
    def prompt(self) -> str:
        """The prompt template: a shipped name or a file."""
        ...

    @property
    def model(self) -> str:
        """The model asked."""
        ...

    def tag(self, template: PromptTemplate) -> str:
        """The task's name in records."""
        ...

    def chat_model(
        self, stats: StepStats, *, cache: LLMCache | None = None, progress: bool = True
    ) -> ChatModel:
        """The chat model the task asks, behind `cache` when one is given."""
        ...


class LLMSettings(PromptedSettings):
    """Settings of an LLM task on one provider: its model and how to reach it.

    A provider's settings name it (`provider`) and build its transport (`transport`); the task
    settings on top add the task's own fields. `chat_model` is where a transport is made for a
    task, and the one place it goes behind the LLM cache.
    """

    provider: ClassVar[str]
    model: str

    def transport(self, stats: StepStats, *, progress: bool = True) -> ChatModel:
        """The provider's transport for these settings, counting into `stats` (no cache)."""
        raise NotImplementedError(f"{type(self).__name__} names no transport")

    def chat_model(
        self, stats: StepStats, *, cache: LLMCache | None = None, progress: bool = True
    ) -> ChatModel:
        """The chat model a task asks: the transport, behind `cache` when one is given."""
        return cached(self.transport(stats, progress=progress), cache)

    def tag(self, template: PromptTemplate) -> str:
        """The task's name in records: provider, model and the template's short hash."""
        return f"{self.provider}:{self.model}:{template.short_hash}"
