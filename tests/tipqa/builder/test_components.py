"""Building each seam's backend from its configured choice (backend name and typed settings)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tipqa.builder.components import (
    make_answerer,
    make_judge,
    make_keyword_extractor,
    make_token_index,
    make_vector_index,
)
from tipqa.config import read_config
from tipqa.indexes.place import IndexPlace
from tipqa.indexes.token_index.tantivy import TantivyTokenIndex
from tipqa.llm.answerers.openai import OpenAIAnswerer
from tipqa.llm.cached_chat import CachedChatModel
from tipqa.llm.judges.openai import OpenAIJudge
from tipqa.llm.judges.rules import RuleJudge
from tipqa.llm.keywords.openai import OpenAIKeywordExtractor
from tipqa.llm.keywords.rules import RuleKeywordExtractor

LOCAL = "http://127.0.0.1:9/v1"


@pytest.fixture(autouse=True)
def _no_openai_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def config(**sections: dict[str, str]):
    """The configuration of these sections (the rest default)."""
    return read_config(sections)


def llm_judge(**extra: str) -> dict[str, str]:
    return {"backend": "openai", "model": "judge-model", "base_url": LOCAL, **extra}


def test_rules_judge_is_not_wrapped(tmp_path: Path) -> None:
    judge = make_judge(config().judge, tmp_path / "cache.sqlite")
    assert type(judge) is RuleJudge
    assert not (tmp_path / "cache.sqlite").exists()


@pytest.mark.needs("openai")
def test_llm_judge_asks_through_the_cache(tmp_path: Path) -> None:
    judge = make_judge(config(judge=llm_judge()).judge, tmp_path / "cache")
    assert isinstance(judge, OpenAIJudge)
    assert isinstance(judge.chat, CachedChatModel) and judge.chat.chat is judge.transport
    assert judge.chat.cache.path == tmp_path / "cache"
    assert judge.model == "judge-model"
    assert judge.transport.client.base_url == LOCAL
    judge.chat.cache.put("k", "test", {"text": "yes"})
    assert judge.chat.cache.files()
    judge.close()
    assert judge.transport.client._client.is_closed()
    assert judge.chat.cache._files._own is None, "the cache's connection is closed"


@pytest.mark.needs("openai")
def test_llm_judge_without_cache_path_is_bare() -> None:
    judge = make_judge(config(judge=llm_judge()).judge, None)
    assert type(judge) is OpenAIJudge and judge.chat is judge.transport


@pytest.mark.needs("openai")
def test_keyword_extractors_and_answerers(tmp_path: Path) -> None:
    rules = make_keyword_extractor(config().keywords, tmp_path / "c")
    assert type(rules) is RuleKeywordExtractor
    llm = config(keywords={"backend": "openai", "model": "m", "base_url": LOCAL}).keywords
    extractor = make_keyword_extractor(llm, tmp_path / "c")
    assert isinstance(extractor, OpenAIKeywordExtractor)
    assert isinstance(extractor.chat, CachedChatModel)
    answerer = make_answerer(
        config(**{"evaluate.openai": {"base_url": LOCAL}}).answerer("openai"), tmp_path / "c"
    )
    assert isinstance(answerer, OpenAIAnswerer) and isinstance(answerer.chat, CachedChatModel)


def test_token_index_lives_at_its_place(tmp_path: Path) -> None:
    index = make_token_index(config().token_index, IndexPlace(tmp_path / "token"))
    assert isinstance(index, TantivyTokenIndex)
    assert index.path == tmp_path / "token"


class Dims:
    """The two embedder attributes a vector index is sized by."""

    dimension = 8
    similarity = "dot_product"


def test_vector_index_is_sized_to_the_embedder(tmp_path: Path) -> None:
    choice = config(vector_index={"backend": "faiss", "kind": "flat"}).vector_index
    index = make_vector_index(choice, IndexPlace(tmp_path / "vec"), Dims())
    assert index.dimension == 8
    assert index.similarity == "dot_product"
