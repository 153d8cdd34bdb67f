"""The keyword-extractor seam."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

from tipqa.core.records import Keywords, Question
from tipqa.core.registry import Registry, has_attribute, has_methods
from tipqa.llm.usage import CacheableBackend, Usage

Extracted = Callable[[int, Keywords, Usage], None]
"""Hears an extraction as it arrives: the question's index, the keywords, their tokens."""


class KeywordExtractor(Protocol):
    """Turns questions into the entity keywords that token search requires."""

    name: str

    def extract(self, questions: list[Question]) -> list[Keywords]:
        """Keywords for each question, in order; a failure is recorded in `Keywords.error`."""
        ...


@runtime_checkable
class CacheableExtractor(CacheableBackend, Protocol):
    """A keyword extractor backed by an LLM, whose answers `CachedKeywordExtractor` may store."""

    def extract(self, questions: list[Question]) -> list[Keywords]:
        """Keywords for each question, in order."""
        ...

    def cache_key(self, question: Question) -> str:
        """The cache key of one question."""
        ...

    def extract_with_usage(
        self, questions: Sequence[Question], on_extracted: Extracted | None = None
    ) -> list[tuple[Keywords, Usage]]:
        """Keywords with the tokens each extraction cost; `on_extracted` hears each at once."""
        ...


KEYWORD_CAPABILITIES = {
    "cacheable": has_methods("cache_key", "extract_with_usage"),
    "counted": has_attribute("stats"),
}
"""The optional capabilities of a keyword extractor: `CachedKeywordExtractor` may wrap it
(`CacheableExtractor`), it counts its work (`Counted`)."""
LLM_EXTRACTOR = ("cacheable", "counted")

KEYWORD_EXTRACTORS: Registry[KeywordExtractor] = Registry("keyword extractor", KEYWORD_CAPABILITIES)
KEYWORD_EXTRACTORS.add(
    "rules",
    "tipqa.llm.keywords.rules:RuleKeywordExtractor",
    settings="tipqa.llm.keywords.rules:RuleKeywordSettings",
)
KEYWORD_EXTRACTORS.add(
    "openai",
    "tipqa.llm.keywords.openai:OpenAIKeywordExtractor",
    settings="tipqa.llm.keywords.openai:OpenAIKeywordSettings",
    capabilities=LLM_EXTRACTOR,
)
KEYWORD_EXTRACTORS.add(
    "vllm",
    "tipqa.llm.keywords.vllm:VLLMKeywordExtractor",
    settings="tipqa.llm.keywords.vllm:VLLMKeywordSettings",
    capabilities=LLM_EXTRACTOR,
)
