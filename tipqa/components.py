"""Build each seam's backend from a settings mapping (one configuration section per seam)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tipqa.embedders.base import EMBEDDERS, Embedder
from tipqa.judges.base import JUDGES, RelevanceJudge
from tipqa.keywords.base import KEYWORD_EXTRACTORS, KeywordExtractor
from tipqa.token_index.base import TOKEN_INDEXES, TokenIndex
from tipqa.vector_index.base import VECTOR_INDEXES, VectorIndex
from tipqa.windows import DEFAULT_MAX_WORDS, WindowSettings

OFFLINE_BACKENDS = {"rules"}


def make_token_index(settings: dict[str, Any], default_path: Path) -> TokenIndex:
    """The token index named by settings["backend"]; an embedded one lives at `default_path`."""
    options = {**settings, "path": settings.get("path") or str(default_path)}
    return TOKEN_INDEXES.create_from(settings["backend"], options)


def make_embedder(settings: dict[str, Any]) -> Embedder:
    """The embedder named by settings["backend"]."""
    return EMBEDDERS.create_from(settings["backend"], settings)


def make_vector_index(
    settings: dict[str, Any], embedder: Embedder, default_path: Path
) -> VectorIndex:
    """The vector index named by settings["backend"], sized to the embedder's vectors."""
    options = {
        **settings,
        "path": settings.get("path") or str(default_path),
        "dimension": embedder.dimension,
        "similarity": embedder.similarity,
    }
    return VECTOR_INDEXES.create_from(settings["backend"], options)


def _llm_cache(path: Path | None) -> Any:
    from tipqa.llm.cache import LLMCache

    return LLMCache(path) if path is not None else None


def make_keyword_extractor(settings: dict[str, Any], cache: Path | None) -> KeywordExtractor:
    """The keyword extractor named by settings["backend"], its calls cached at `cache`."""
    extractor = KEYWORD_EXTRACTORS.create_from(settings["backend"], settings)
    if cache is None or settings["backend"] in OFFLINE_BACKENDS:
        return extractor
    from tipqa.judges.cached import CachedKeywordExtractor

    return CachedKeywordExtractor(extractor, _llm_cache(cache))


def make_judge(settings: dict[str, Any], cache: Path | None) -> RelevanceJudge:
    """The relevance judge named by settings["backend"], its calls cached at `cache`.

    `mode` "choice" asks an OpenAI-compatible server for constrained yes/no decoding too.
    """
    options = {**settings, "choice": settings.get("mode") == "choice"}
    judge = JUDGES.create_from(settings["backend"], options)
    if cache is None or settings["backend"] in OFFLINE_BACKENDS:
        return judge
    from tipqa.judges.cached import CachedJudge

    return CachedJudge(judge, _llm_cache(cache))


def window_settings(settings: dict[str, Any], judge: RelevanceJudge) -> WindowSettings:
    """Judge-window limits: `max_words` if set, else what the judge's context holds.

    A judge that knows its context length (the vLLM judge) says how many words fit; others
    get the paper's 30,000 words.
    """
    max_words = settings.get("max_words")
    if not max_words:
        fits = getattr(getattr(judge, "inner", judge), "window_words", None)
        max_words = fits() if callable(fits) else DEFAULT_MAX_WORDS
    return WindowSettings(max_words=max_words, max_windows=settings["max_windows"])
