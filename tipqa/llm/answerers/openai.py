"""The model under evaluation on an OpenAI-compatible chat server (OpenAI, vLLM's server, ...)."""

from __future__ import annotations

from dataclasses import dataclass

from tipqa.llm.answerers.llm import AnswerTask, LLMAnswerer
from tipqa.llm.openai_chat import OpenAISettings


@dataclass(frozen=True)
class OpenAIAnswererSettings(OpenAISettings, AnswerTask):
    """[evaluate.openai]: the model under evaluation on an OpenAI-compatible server."""


class OpenAIAnswerer(LLMAnswerer):
    """The model under evaluation on an OpenAI-compatible server."""
