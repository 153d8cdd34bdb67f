"""Keyword extraction by a few-shot chat model on vLLM's offline engine (greedy, batched)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from tipqa.llm.chat import Decoding
from tipqa.llm.keywords.llm import KeywordTask, LLMKeywordExtractor
from tipqa.llm.vllm_chat import STRUCTURED_OUTPUTS, VLLMEngineSettings


@dataclass(frozen=True)
class VLLMKeywordSettings(VLLMEngineSettings, KeywordTask):
    """[keywords] of the vLLM offline-engine backend (few-shot prompt, greedy).

    `structured_outputs`: constrain the answer as vLLM's structured outputs do (`regex`,
    `choice`, `grammar` or `json`); the same object as `[keywords] extra_body =
    {"structured_outputs": ...}` of a vLLM server.
    """

    structured_outputs: dict[str, Any] = field(
        default_factory=dict,
        metadata={"doc": "constrain the answer (vLLM structured outputs, a JSON object)"},
    )

    def decoding(self) -> Decoding:
        """Greedy, `max_tokens`, constrained when `structured_outputs` says so."""
        extra = {STRUCTURED_OUTPUTS: self.structured_outputs} if self.structured_outputs else {}
        return dataclasses.replace(super().decoding(), extra=extra)


class VLLMKeywordExtractor(LLMKeywordExtractor):
    """The few-shot keyword extractor on vLLM's offline engine."""
