"""Build each seam's backend from its configured `Choice` (backend name and typed settings)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tipqa.config import Choice
from tipqa.indexes.embedders.base import EMBEDDERS, Embedder
from tipqa.indexes.place import IndexPlace
from tipqa.indexes.token_index.base import TOKEN_INDEXES, TokenIndex
from tipqa.indexes.vector_index.base import VECTOR_INDEXES, EmbedsOnDemand, VectorIndex
from tipqa.llm.answerers.base import ANSWERERS, Answerer
from tipqa.llm.cache import LLMCache
from tipqa.llm.judges.base import JUDGES, RelevanceJudge
from tipqa.llm.keywords.base import KEYWORD_EXTRACTORS, KeywordExtractor


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


def _cache(cache: Path | None, cacheable: bool) -> dict[str, Any]:
    """The `cache` argument of an LLM backend whose answers go to the LLM cache at `cache`."""
    return {"cache": LLMCache(cache)} if cache is not None and cacheable else {}


def make_keyword_extractor(choice: Choice, cache: Path | None) -> KeywordExtractor:
    """The keyword extractor of `choice`; an LLM one asks through the LLM cache at `cache`."""
    cacheable = KEYWORD_EXTRACTORS.has(choice.backend, "cacheable")
    return KEYWORD_EXTRACTORS.create(choice.backend, choice.settings, **_cache(cache, cacheable))


def make_judge(choice: Choice, cache: Path | None) -> RelevanceJudge:
    """The relevance judge of `choice`; an LLM one asks through the LLM cache at `cache`."""
    cacheable = JUDGES.has(choice.backend, "cacheable")
    return JUDGES.create(choice.backend, choice.settings, **_cache(cache, cacheable))


def make_answerer(choice: Choice, cache: Path | None) -> Answerer:
    """The model under evaluation of `choice`, asked through the LLM cache at `cache`."""
    return ANSWERERS.create(choice.backend, choice.settings, **_cache(cache, True))
