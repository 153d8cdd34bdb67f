"""Keyword extraction by a few-shot chat model on an OpenAI-compatible server (as in the paper)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from tipqa.llm.chat import Decoding
from tipqa.llm.keywords.llm import KeywordTask, LLMKeywordExtractor
from tipqa.llm.openai_chat import OpenAISettings


@dataclass(frozen=True)
class OpenAIKeywordSettings(OpenAISettings, KeywordTask):
    """[keywords] of the OpenAI-compatible backend (few-shot prompt, temperature 0)."""

    extra_body: dict[str, Any] = field(
        default_factory=dict, metadata={"doc": "more request fields (a JSON object)"}
    )

    def decoding(self) -> Decoding:
        """Greedy, `max_tokens`, and the extra request fields."""
        return dataclasses.replace(super().decoding(), extra=self.extra_body)


class OpenAIKeywordExtractor(LLMKeywordExtractor):
    """The few-shot keyword extractor on an OpenAI-compatible server."""
