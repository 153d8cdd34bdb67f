"""Build each seam's backend from its configured `Choice` (backend name and typed settings).

An LLM backend (its settings an `LLMSettings`) gets the run's LLM cache, opened here; its
settings put the transport behind it (`LLMSettings.chat_model`). Close what these make.
"""

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
from tipqa.llm.settings import LLMSettings


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


def _llm(choice: Choice, cache: Path | None) -> dict[str, Any]:
    """The LLM cache at `cache` for a backend that asks an LLM (none for the others)."""
    asks = isinstance(choice.settings, LLMSettings)
    return {"cache": LLMCache(cache)} if asks and cache is not None else {}


def make_keyword_extractor(choice: Choice, cache: Path | None) -> KeywordExtractor:
    """The keyword extractor of `choice`; an LLM one asks through the LLM cache at `cache`."""
    return KEYWORD_EXTRACTORS.create(choice.backend, choice.settings, **_llm(choice, cache))


def make_judge(choice: Choice, cache: Path | None) -> RelevanceJudge:
    """The relevance judge of `choice`; an LLM one asks through the LLM cache at `cache`."""
    return JUDGES.create(choice.backend, choice.settings, **_llm(choice, cache))


def make_answerer(choice: Choice, cache: Path | None) -> Answerer:
    """The model under evaluation of `choice`, asked through the LLM cache at `cache`."""
    return ANSWERERS.create(choice.backend, choice.settings, **_llm(choice, cache))
