"""Keyword extraction by a few-shot chat model on vLLM's offline engine (greedy, batched)."""

from __future__ import annotations

from dataclasses import dataclass

from tipqa.keywords.llm import KeywordTask, LLMKeywordExtractor
from tipqa.llm.vllm_chat import VLLMEngineSettings


@dataclass(frozen=True)
class VLLMKeywordSettings(VLLMEngineSettings, KeywordTask):
    """[keywords] of the vLLM offline-engine backend (few-shot prompt, greedy)."""


class VLLMKeywordExtractor(LLMKeywordExtractor):
    """The few-shot keyword extractor on vLLM's offline engine."""
