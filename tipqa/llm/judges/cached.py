"""A relevance judge that sends only cache misses to its backend (`tipqa.llm.cache_batch`).

The key is the inner judge's `cache_key(request)`: its settings' identity (model, template hash,
decoding) and the request's inputs, so it changes with any of them. Only judgments with a label
are stored: a failed one is asked again on a rerun.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from tipqa.core.records import JudgeRequest, Judgment
from tipqa.llm.cache import LLMCache
from tipqa.llm.cache_batch import CacheCodec, CacheCounts, Keep, cached_batch
from tipqa.llm.judges.base import CacheableJudge
from tipqa.llm.usage import Usage


class CachedJudge(CacheCounts):
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
        return cached_batch(
            requests,
            [self.key(request) for request in requests],
            self._ask,
            CacheCodec(_judgment_entry, self._from_entry, _relabel),
            cache=self.cache,
            backend=self.name,
            stats=self.cache_stats,
        )

    def _ask(self, requests: list[JudgeRequest], keep: Keep[Judgment]) -> list[Judgment]:
        return [judgment for judgment, _ in self.inner.judge_with_usage(requests, keep)]

    def _from_entry(self, request: JudgeRequest, entry: Mapping[str, Any]) -> Judgment | None:
        """A judgment from a stored entry, or None when the entry is unusable."""
        label, raw, p_yes = entry.get("label"), entry.get("raw"), entry.get("p_yes")
        if (
            label not in ("yes", "no")
            or not isinstance(raw, str)
            or not (p_yes is None or isinstance(p_yes, (int, float)))
        ):
            return None
        return Judgment.of(
            request,
            label=label,
            raw=raw,
            judge=str(entry.get("judge", self.name)),
            p_yes=None if p_yes is None else float(p_yes),
            cached=True,
        )


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


def _judgment_entry(judgment: Judgment, usage: Usage) -> dict[str, Any] | None:
    """What is stored for a judgment with a label (None for a failed one)."""
    if judgment.label is None:
        return None
    return {
        "label": judgment.label,
        "raw": judgment.raw,
        "p_yes": judgment.p_yes,
        "judge": judgment.judge,
        "usage": usage.to_dict(),
    }
