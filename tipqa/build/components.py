"""Build each seam's backend from its configured `Choice` (backend name and typed settings)."""

from __future__ import annotations

from pathlib import Path
from typing import cast

from tipqa.config import Choice
from tipqa.indexes.embedders.base import EMBEDDERS, Embedder
from tipqa.indexes.place import IndexPlace
from tipqa.indexes.token_index.base import TOKEN_INDEXES, TokenIndex
from tipqa.indexes.vector_index.base import VECTOR_INDEXES, EmbedsOnDemand, VectorIndex
from tipqa.llm.judges.base import JUDGES, CacheableJudge, RelevanceJudge
from tipqa.llm.keywords.base import KEYWORD_EXTRACTORS, CacheableExtractor, KeywordExtractor


def make_token_index(choice: Choice, place: IndexPlace) -> TokenIndex:
    """The token index of `choice`, at `place` (a folder, or the Elasticsearch cluster)."""
    return TOKEN_INDEXES.create(choice.backend, choice.settings, place=place)


def make_embedder(choice: Choice) -> Embedder:
    """The embedder of `choice` (loads its model)."""
    return EMBEDDERS.create(choice.backend, choice.settings)


def make_vector_index(
    choice: Choice, place: IndexPlace, embedder: Embedder
) -> VectorIndex | EmbedsOnDemand:
    """The vector index of `choice`, sized to the embedder's vectors."""
    return VECTOR_INDEXES.create(
        choice.backend,
        choice.settings,
        place=place,
        dimension=embedder.dimension,
        similarity=embedder.similarity,
    )


def make_keyword_extractor(choice: Choice, cache: Path | None) -> KeywordExtractor:
    """The keyword extractor of `choice`; an LLM one has its answers cached at `cache`."""
    extractor: KeywordExtractor = KEYWORD_EXTRACTORS.create(choice.backend, choice.settings)
    if cache is None or not KEYWORD_EXTRACTORS.has(choice.backend, "cacheable"):
        return extractor
    from tipqa.llm.cache import LLMCache
    from tipqa.llm.keywords.cached import CachedKeywordExtractor

    return CachedKeywordExtractor(cast(CacheableExtractor, extractor), LLMCache(cache))


def make_judge(choice: Choice, cache: Path | None) -> RelevanceJudge:
    """The relevance judge of `choice`; an LLM one has its answers cached at `cache`."""
    judge: RelevanceJudge = JUDGES.create(choice.backend, choice.settings)
    if cache is None or not JUDGES.has(choice.backend, "cacheable"):
        return judge
    from tipqa.llm.cache import LLMCache
    from tipqa.llm.judges.cached import CachedJudge

    return CachedJudge(cast(CacheableJudge, judge), LLMCache(cache))
