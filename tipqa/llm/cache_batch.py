"""The one cache batch of every LLM task: look up, ask for the misses, store answers as they come.

A batch's items are looked up by key first. The misses go to the backend in one call, each
distinct key once (a batch that repeats a prompt pays for it once), and each result the codec
accepts is committed to the cache the moment the backend has it, so a kill loses no answer
received. Results the codec refuses to store (failures) are not cached: a rerun asks again. A
stored entry the codec cannot read is counted and asked again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from tipqa.core.errors import TipqaError
from tipqa.core.stats import StepStats
from tipqa.llm.cache import LLMCache
from tipqa.llm.usage import CacheableBackend, Usage

Item = TypeVar("Item")
Result = TypeVar("Result")

Keep = Callable[[int, Result, Usage], None]
"""Called by a backend with (position among the items sent, result, its usage) as each arrives."""


@dataclass(frozen=True)
class CacheCodec(Generic[Item, Result]):
    """How one LLM task's results go into the cache and come back out."""

    encode: Callable[[Result, Usage], Mapping[str, Any] | None]
    """The entry to store for a fresh result, or None to store nothing (a failure)."""
    decode: Callable[[Item, Mapping[str, Any]], Result | None]
    """The result a stored entry gives for an item, or None when the entry is unusable."""
    attribute: Callable[[Result, Item], Result]
    """A fresh result given to another item of the batch with the same key."""


class CacheCounts:
    """The counters of a cache wrapper, read together with its inner backend's."""

    def __init__(self, step: str, inner: CacheableBackend) -> None:
        self.cache_stats = StepStats(step)
        self._inner = inner

    @property
    def stats(self) -> StepStats:
        """A snapshot of the cache's counters together with the inner backend's (calls, tokens)."""
        merged = StepStats(self.cache_stats.step)
        merged.merge(self._inner.stats)
        merged.merge(self.cache_stats)
        return merged


def cached_batch(
    items: Sequence[Item],
    keys: Sequence[str],
    ask: Callable[[list[Item], Keep[Result]], Sequence[Result]],
    codec: CacheCodec[Item, Result],
    *,
    cache: LLMCache | None,
    backend: str,
    stats: StepStats,
) -> list[Result]:
    """One result per item, in order: from the cache where stored, else from `ask`.

    `ask(items, keep)` sends the misses and returns one result per item sent. Counted in
    `stats`: `cache_hits` (with the tokens they saved), `cache_misses`, `cache_stored`, and the
    error `cache_bad_entry`.
    """
    stored = cache.get_many(keys) if cache is not None else {}
    out: list[Result | None] = [None] * len(items)
    misses: dict[str, list[int]] = {}
    for i, (item, key) in enumerate(zip(items, keys, strict=True)):
        entry = stored.get(key)
        result = codec.decode(item, entry) if entry is not None else None
        if entry is not None and result is None:
            stats.error("cache_bad_entry")
        if result is None:
            stats.add("cache_misses")
            misses.setdefault(key, []).append(i)
            continue
        usage = Usage.from_dict(entry.get("usage") if entry is not None else None)
        stats.add("cache_hits")
        stats.add("saved_prompt_tokens", usage.prompt_tokens)
        stats.add("saved_completion_tokens", usage.completion_tokens)
        out[i] = result
    if not misses:
        return [result for result in out if result is not None]
    sent_keys = list(misses)

    def keep(position: int, result: Result, usage: Usage) -> None:
        entry = codec.encode(result, usage)
        if cache is not None and entry is not None:
            cache.put(sent_keys[position], backend, entry)
            stats.add("cache_stored")

    sent = [items[indices[0]] for indices in misses.values()]
    fresh = ask(sent, keep)
    if len(fresh) != len(sent):
        raise TipqaError(f"{backend}: {len(fresh)} results for {len(sent)} inputs")
    for indices, result in zip(misses.values(), fresh, strict=True):
        out[indices[0]] = result
        for i in indices[1:]:
            out[i] = codec.attribute(result, items[i])
    return [result for result in out if result is not None]
