"""Cache wrappers: a judge or keyword extractor that sends only cache misses to its backend.

All requests of a batch are looked up first; the misses (each distinct prompt once) go to the
inner backend in one batch; each successful result is stored as soon as the backend has it (a
commit per answer: a kill loses no answer received), failures are not (a rerun retries them).
The key is the inner task's `cache_key(item)`: its settings' identity (model, template hash,
decoding) and the item's inputs, so it changes with any of them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from tipqa.errors import TipqaError
from tipqa.judges.base import CacheableJudge
from tipqa.keywords.base import CacheableExtractor
from tipqa.llm.cache import LLMCache
from tipqa.llm.usage import CacheableBackend, Usage
from tipqa.records import JudgeRequest, Judgment, Keywords, Question
from tipqa.stats import StepStats


def _checked(inner: CacheableBackend, results: list[Any], items: list[Any]) -> list[Any]:
    """The backend's results, after checking there is one per item."""
    if len(results) != len(items):
        raise TipqaError(f"{inner.name}: {len(results)} results for {len(items)} inputs")
    return results


class _CacheCounter:
    """Shared counting of hits, misses, stores and saved tokens."""

    def __init__(self, stage: str, inner: CacheableBackend) -> None:
        self.cache_stats = StepStats(stage)
        self._inner_stats = inner

    @property
    def stats(self) -> StepStats:
        """A snapshot of the cache's counters together with the inner backend's (calls, tokens)."""
        merged = StepStats(self.cache_stats.step)
        merged.merge(self._inner_stats.stats)
        merged.merge(self.cache_stats)
        return merged

    def hit(self, entry: Mapping[str, Any]) -> None:
        """Count a cache hit and the tokens it saved."""
        usage = Usage.from_dict(entry.get("usage"))
        self.cache_stats.add("cache_hits")
        self.cache_stats.add("saved_prompt_tokens", usage.prompt_tokens)
        self.cache_stats.add("saved_completion_tokens", usage.completion_tokens)


class CachedJudge(_CacheCounter):
    """A relevance judge that remembers every yes/no its inner judge gave."""

    def __init__(self, inner: CacheableJudge, cache: LLMCache) -> None:
        super().__init__("judge_cache", inner)
        self.inner = inner
        self.cache = cache
        self.name = inner.name

    def key(self, request: JudgeRequest) -> str:
        """The cache key of one request."""
        return self.inner.cache_key(request)

    def judge(self, requests: list[JudgeRequest]) -> list[Judgment]:
        """One judgment per request, in order; hits are marked `cached=True`."""
        keys = [self.key(request) for request in requests]
        stored = self.cache.get_many(keys)
        out: list[Judgment | None] = [None] * len(requests)
        misses: dict[str, list[int]] = {}
        for i, (request, key) in enumerate(zip(requests, keys, strict=True)):
            entry = stored.get(key)
            judgment = self._from_entry(request, entry) if entry is not None else None
            if entry is None or judgment is None:
                self.cache_stats.add("cache_misses")
                misses.setdefault(key, []).append(i)
            else:
                self.hit(entry)
                out[i] = judgment
        if misses:
            firsts = [requests[indices[0]] for indices in misses.values()]
            keys = list(misses)

            def keep(position: int, judgment: Judgment, usage: Usage) -> None:
                if judgment.label is not None:
                    self.cache.put(keys[position], self.name, _judgment_entry(judgment, usage))
                    self.cache_stats.add("cache_stored")

            fresh = _checked(self.inner, self.inner.judge_with_usage(firsts, keep), firsts)
            for indices, (judgment, _) in zip(misses.values(), fresh, strict=True):
                for i in indices:
                    out[i] = _relabel(judgment, requests[i])
        return [judgment for judgment in out if judgment is not None]

    def _from_entry(self, request: JudgeRequest, entry: Mapping[str, Any]) -> Judgment | None:
        """A judgment from a stored entry, or None (counted) when the entry is unusable."""
        label, raw, p_yes = entry.get("label"), entry.get("raw"), entry.get("p_yes")
        if (
            label not in ("yes", "no")
            or not isinstance(raw, str)
            or not (p_yes is None or isinstance(p_yes, (int, float)))
        ):
            self.cache_stats.error("cache_bad_entry")
            return None
        return Judgment.of(
            request,
            label=label,
            raw=raw,
            judge=str(entry.get("judge", self.name)),
            p_yes=None if p_yes is None else float(p_yes),
            cached=True,
        )


class CachedKeywordExtractor(_CacheCounter):
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
        keys = [self.key(question) for question in questions]
        stored = self.cache.get_many(keys)
        out: list[Keywords | None] = [None] * len(questions)
        misses: dict[str, list[int]] = {}
        for i, (question, key) in enumerate(zip(questions, keys, strict=True)):
            entry = stored.get(key)
            keywords = self._from_entry(question, entry) if entry is not None else None
            if entry is None or keywords is None:
                self.cache_stats.add("cache_misses")
                misses.setdefault(key, []).append(i)
            else:
                self.hit(entry)
                out[i] = keywords
        if misses:
            firsts = [questions[indices[0]] for indices in misses.values()]
            keys = list(misses)

            def keep(position: int, keywords: Keywords, usage: Usage) -> None:
                if keywords.error is None:
                    entry = {"keywords": keywords.keywords, "raw": keywords.raw}
                    self.cache.put(keys[position], self.name, {**entry, "usage": usage.to_dict()})
                    self.cache_stats.add("cache_stored")

            fresh = _checked(self.inner, self.inner.extract_with_usage(firsts, keep), firsts)
            for indices, (keywords, _) in zip(misses.values(), fresh, strict=True):
                for i in indices:
                    out[i] = dataclasses.replace(keywords, question_id=questions[i].id)
        return [keywords for keywords in out if keywords is not None]

    def _from_entry(self, question: Question, entry: Mapping[str, Any]) -> Keywords | None:
        """Keywords from a stored entry, or None (counted) when the entry is unusable."""
        keywords, raw = entry.get("keywords"), entry.get("raw")
        if not (
            isinstance(keywords, list)
            and all(isinstance(k, str) for k in keywords)
            and isinstance(raw, str)
        ):
            self.cache_stats.error("cache_bad_entry")
            return None
        return Keywords(question.id, list(keywords), raw, cached=True)


def _relabel(judgment: Judgment, request: JudgeRequest) -> Judgment:
    """The same verdict, attributed to `request` (a batch may repeat one prompt)."""
    return dataclasses.replace(
        judgment,
        question_id=request.question_id,
        stage=request.stage,
        doc_id=request.doc_id,
        unit_id=request.unit_id,
        start=request.start,
        end=request.end,
    )


def _judgment_entry(judgment: Judgment, usage: Usage) -> dict[str, Any]:
    """What is stored for a successful judgment."""
    return {
        "label": judgment.label,
        "raw": judgment.raw,
        "p_yes": judgment.p_yes,
        "judge": judgment.judge,
        "usage": usage.to_dict(),
    }
