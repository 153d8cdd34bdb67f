"""A keyword extractor that sends only cache misses to its backend (`tipqa.llm.cache_batch`).

The key is the inner extractor's `cache_key(question)`: its settings' identity and the question,
so it changes with either. Only successful extractions are stored.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from tipqa.core.records import Keywords, Question
from tipqa.llm.cache import LLMCache
from tipqa.llm.cache_batch import CacheCodec, CacheCounts, Keep, cached_batch
from tipqa.llm.keywords.base import CacheableExtractor
from tipqa.llm.usage import Usage


class CachedKeywordExtractor(CacheCounts):
    """A keyword extractor that remembers every successful extraction of its inner extractor."""

    def __init__(self, inner: CacheableExtractor, cache: LLMCache) -> None:
        super().__init__("keywords_cache", inner)
        self.inner = inner
        self.cache = cache
        self.name = inner.name

    def key(self, question: Question) -> str:
        """The cache key of one question."""
        return self.inner.cache_key(question)

    def extract(self, questions: list[Question]) -> list[Keywords]:
        """Keywords for each question, in order, from the cache where possible."""
        return cached_batch(
            questions,
            [self.key(question) for question in questions],
            self._ask,
            CacheCodec(_entry, _from_entry, _reattributed),
            cache=self.cache,
            backend=self.name,
            stats=self.cache_stats,
        )

    def _ask(self, questions: list[Question], keep: Keep[Keywords]) -> list[Keywords]:
        return [keywords for keywords, _ in self.inner.extract_with_usage(questions, keep)]


def _entry(keywords: Keywords, usage: Usage) -> dict[str, Any] | None:
    """What is stored for a successful extraction (None for a failed one)."""
    if keywords.error is not None:
        return None
    return {"keywords": keywords.keywords, "raw": keywords.raw, "usage": usage.to_dict()}


def _from_entry(question: Question, entry: Mapping[str, Any]) -> Keywords | None:
    """Keywords from a stored entry, or None when the entry is unusable."""
    keywords, raw = entry.get("keywords"), entry.get("raw")
    if not (
        isinstance(keywords, list)
        and all(isinstance(k, str) for k in keywords)
        and isinstance(raw, str)
    ):
        return None
    return Keywords(question.id, list(keywords), raw, cached=True)


def _reattributed(keywords: Keywords, question: Question) -> Keywords:
    """The same keywords, given to another question with the same text."""
    return dataclasses.replace(keywords, question_id=question.id)
