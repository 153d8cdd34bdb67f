"""Building each seam's backend from a configuration section."""

from __future__ import annotations

from pathlib import Path

import pytest

from tipqa.components import (
    make_judge,
    make_keyword_extractor,
    make_token_index,
    make_vector_index,
    window_settings,
)
from tipqa.errors import ConfigError
from tipqa.judges.cached import CachedJudge, CachedKeywordExtractor
from tipqa.judges.openai import OpenAIJudge
from tipqa.judges.rules import RuleJudge
from tipqa.keywords.openai import OpenAIKeywordExtractor
from tipqa.keywords.rules import RuleKeywordExtractor
from tipqa.llm.cache import LLMCache
from tipqa.token_index.tantivy import TantivyTokenIndex
from tipqa.windows import DEFAULT_MAX_WORDS, WindowSettings

LOCAL = "http://127.0.0.1:9/v1"


@pytest.fixture(autouse=True)
def _no_openai_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def judge_settings(backend: str) -> dict:
    return {
        "backend": backend, "model": "judge-model", "base_url": LOCAL, "prompt": "judge-v1",
        "max_retries": 0, "timeout": 5.0, "max_words": 100, "max_windows": 3, "cache": True,
        "batch_size": 8, "mode": "logprobs", "max_model_len": None,
    }  # fmt: skip


def test_rules_judge_is_not_wrapped(tmp_path: Path) -> None:
    judge = make_judge(judge_settings("rules"), tmp_path / "cache.sqlite")
    assert type(judge) is RuleJudge
    assert not (tmp_path / "cache.sqlite").exists()


def test_llm_judge_is_wrapped_in_the_cache(tmp_path: Path) -> None:
    judge = make_judge(judge_settings("openai"), tmp_path / "cache.sqlite")
    assert isinstance(judge, CachedJudge)
    assert isinstance(judge.inner, OpenAIJudge)
    assert judge.inner.model == "judge-model"
    assert judge.inner.client.base_url == LOCAL


def test_llm_judge_without_cache_path_is_bare(tmp_path: Path) -> None:
    assert type(make_judge(judge_settings("openai"), None)) is OpenAIJudge


def test_unknown_judge_lists_known_ones() -> None:
    with pytest.raises(ConfigError, match="known: openai, rules, vllm"):
        make_judge(judge_settings("oracle"), None)


def test_keyword_extractors(tmp_path: Path) -> None:
    settings = {"backend": "rules", "model": "m", "base_url": LOCAL, "prompt": "keywords-v1"}
    assert type(make_keyword_extractor(settings, tmp_path / "c.sqlite")) is RuleKeywordExtractor
    wrapped = make_keyword_extractor({**settings, "backend": "openai"}, tmp_path / "c.sqlite")
    assert isinstance(wrapped, CachedKeywordExtractor)
    assert isinstance(wrapped.inner, OpenAIKeywordExtractor)


class ShortContextJudge(RuleJudge):
    """A judge that knows how many words its context holds, as the vLLM judge does."""

    def window_words(self) -> int:
        return 1234


def test_window_settings_from_max_words() -> None:
    settings = judge_settings("rules")
    expected = WindowSettings(max_words=100, max_windows=3)
    assert window_settings(settings, RuleJudge()) == expected
    assert window_settings(settings, ShortContextJudge()) == expected


@pytest.mark.parametrize("unset", [0, None])
def test_window_settings_from_the_judge_context(tmp_path: Path, unset: int | None) -> None:
    settings = {**judge_settings("rules"), "max_words": unset}
    assert window_settings(settings, RuleJudge()).max_words == DEFAULT_MAX_WORDS
    assert window_settings(settings, ShortContextJudge()).max_words == 1234
    cached = CachedJudge(ShortContextJudge(), LLMCache(tmp_path / "c.sqlite"))
    assert window_settings(settings, cached) == WindowSettings(max_words=1234, max_windows=3)


def test_token_index_path_defaults_under_the_run(tmp_path: Path) -> None:
    settings = {"backend": "tantivy", "path": "", "heap_mb": 64, "threads": 1, "url": ""}
    index = make_token_index(settings, tmp_path / "default")
    assert isinstance(index, TantivyTokenIndex)
    assert index.path == tmp_path / "default"
    own = make_token_index({**settings, "path": str(tmp_path / "own")}, tmp_path / "unused")
    assert own.path == tmp_path / "own"


class Dims:
    """The two embedder attributes a vector index is sized by."""

    dimension = 8
    similarity = "dot_product"


def test_vector_index_is_sized_to_the_embedder(tmp_path: Path) -> None:
    settings = {"backend": "faiss", "path": "", "kind": "flat", "dimension": 3}
    index = make_vector_index(settings, Dims(), tmp_path / "vec")
    assert index.dimension == 8
    assert index.similarity == "dot_product"
