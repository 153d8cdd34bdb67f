"""The keyword-extractor seam."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

from tipqa.llm.usage import CacheableBackend, Usage
from tipqa.records import Keywords, Question
from tipqa.registry import Registry

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

    def cache_inputs(self, question: Question) -> dict[str, str]:
        """The parts of a question that the prompt uses (the cache key's inputs)."""
        ...

    def extract_with_usage(
        self, questions: Sequence[Question], on_extracted: Extracted | None = None
    ) -> list[tuple[Keywords, Usage]]:
        """Keywords with the tokens each extraction cost; `on_extracted` hears each at once."""
        ...


KEYWORD_EXTRACTORS: Registry[KeywordExtractor] = Registry("keyword extractor")
KEYWORD_EXTRACTORS.add(
    "rules",
    "tipqa.keywords.rules:RuleKeywordExtractor",
    settings="tipqa.keywords.rules:RuleKeywordSettings",
)
KEYWORD_EXTRACTORS.add(
    "openai",
    "tipqa.keywords.openai:OpenAIKeywordExtractor",
    settings="tipqa.keywords.openai:OpenAIKeywordSettings",
)
