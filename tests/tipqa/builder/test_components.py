"""Building each seam's backend from its configured choice (backend name and typed settings)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import openai_server as fake
from support.judge_support import judge_request

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
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "HTTP_PROXY", "http_proxy"):
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


def two_models(body, attempt, headers):
    """A server of two judges: "yes-man" says yes to everything, the other judges right."""
    if body["model"] == "yes-man":
        return fake.Reply(text="yes")
    return fake.judge_rule(body, attempt, headers)


@pytest.mark.needs("openai")
def test_a_second_judges_answers_never_mix_with_the_build_judges(tmp_path: Path) -> None:
    requests = [
        judge_request(text, i, question="Who built the mill?", answer="Fenwick", keywords=[])
        for i, text in enumerate(["Fenwick built the mill.", "The mill is old."])
    ]
    with fake.FakeOpenAIServer(two_models) as server:
        url = {"base_url": server.base_url, "mode": "plain"}
        sections = {
            "judge": {"backend": "openai", "model": "yes-man", **url},
            "judge.confirm": {"model": "right"},
        }

        def labels() -> dict[str, list[str | None]]:
            configured = config(**sections)
            assert configured.confirm_judge is not None
            judges = {
                "build": make_judge(configured.judge, tmp_path / "cache"),
                "confirm": make_judge(configured.confirm_judge, tmp_path / "cache"),
            }
            return {
                name: [j.label for j in judge.judge(requests)] for name, judge in judges.items()
            }

        assert labels() == {"build": ["yes", "yes"], "confirm": ["yes", "no"]}
        assert server.calls == 4
        server.reset()
        assert labels() == {"build": ["yes", "yes"], "confirm": ["yes", "no"]}
        assert server.calls == 0, "both judges' answers come from the one cache, apart"
