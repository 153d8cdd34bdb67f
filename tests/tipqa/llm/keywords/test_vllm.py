"""Keyword extraction on vLLM's offline engine: settings everywhere, the real engine in .venv-vllm.

The tiny random model's keywords are nonsense; what is checked is the plumbing: the few-shot
prompt through the chat template, batching and order, counting, and the cache.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tipqa.builder.components import make_keyword_extractor
from tipqa.config import Choice
from tipqa.core.errors import ConfigError
from tipqa.core.records import Question
from tipqa.llm.cached_chat import CachedChatModel
from tipqa.llm.keywords.base import KEYWORD_EXTRACTORS
from tipqa.llm.keywords.vllm import VLLMKeywordExtractor, VLLMKeywordSettings
from tipqa.llm.settings import LLMSettings

HAVE_VLLM = importlib.util.find_spec("vllm") is not None
needs_vllm = pytest.mark.skipif(
    not HAVE_VLLM, reason="vllm is not installed: these tests run in .venv-vllm (see .ci/run)"
)
# The same engine arguments as the judge's tests, so that one engine serves both in a session.
ENGINE = {"max_model_len": 1024, "enforce_eager": True, "dtype": "float32", "seed": 0}
QUESTIONS = [
    Question("q0", "Who painted the harbour wall of Marlow Bay?", "a", ["a"]),
    Question("q1", "Which ship sank near Lisbon in 1912?", "b", ["b"]),
    Question("q2", "What did the choir of Saint Albans sing?", "c", ["c"]),
]


def test_settings_are_checked_and_registered() -> None:
    with pytest.raises(ConfigError, match="max_tokens"):
        VLLMKeywordSettings(max_tokens=0)
    identity = VLLMKeywordSettings().identity()
    assert "batch_size" not in identity and "prompt_sha256" in identity
    assert KEYWORD_EXTRACTORS.resolve("vllm") is VLLMKeywordExtractor
    assert isinstance(VLLMKeywordSettings(), LLMSettings)  # so made behind the LLM cache
    assert VLLMKeywordExtractor(VLLMKeywordSettings(model="m")).extract([]) == []


@pytest.mark.vllm
@needs_vllm
def test_keywords_on_the_engine_batched_and_cached(model_path: str, tmp_path: Path) -> None:
    settings = VLLMKeywordSettings(model=model_path, max_tokens=6, batch_size=2, **ENGINE)
    extractor = make_keyword_extractor(Choice("vllm", settings), tmp_path / "llm-cache")
    assert isinstance(extractor, VLLMKeywordExtractor)
    assert isinstance(extractor.chat, CachedChatModel)
    results = extractor.extract(QUESTIONS)
    assert [k.question_id for k in results] == ["q0", "q1", "q2"]
    for keywords in results:
        assert (keywords.error is None) == bool(keywords.keywords)
        assert keywords.raw or keywords.error
    stats = extractor.stats
    assert stats.counts["batches"] == 2 and stats.counts["questions"] == 3
    assert stats.counts["prompt_tokens"] > 3 * 50  # the few-shot examples went through
    again = extractor.extract(QUESTIONS)
    stored = {k.question_id for k in results if k.error is None}
    assert {k.question_id for k in again if k.cached} == stored
    assert [k.keywords for k in again] == [k.keywords for k in results]


def test_structured_outputs_reach_the_decoding_and_the_identity() -> None:
    plain = VLLMKeywordSettings(model="m")
    constrained = VLLMKeywordSettings(model="m", structured_outputs={"regex": "which, who"})
    assert plain.decoding().extra == {}
    assert constrained.decoding().extra == {"structured_outputs": {"regex": "which, who"}}
    assert constrained.identity() != plain.identity()


@pytest.mark.vllm
@needs_vllm
def test_a_constrained_answer_gives_the_questions_own_words(model_path: str) -> None:
    settings = VLLMKeywordSettings(
        model=model_path, max_tokens=8, structured_outputs={"regex": "which, who"}, **ENGINE
    )
    results = VLLMKeywordExtractor(settings).extract(QUESTIONS[:2])
    assert [k.raw for k in results] == ["which, who", "which, who"]
    assert [k.keywords for k in results] == [["who"], ["which"]]
    assert results[0].error is None
