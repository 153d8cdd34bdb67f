"""The vLLM answerer: settings everywhere, the real engine (tiny random model) in .venv-vllm.

The tiny model's answers are nonsense; what is checked is the plumbing: batching and order,
chat and plain prompts, the chosen tokens' logprobs as confidence, the cache, and scoring.
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest
from support.evaluate_support import labeled, write_split

from tipqa.core.errors import ConfigError, MissingExtraError
from tipqa.core.layout import EvaluationLayout
from tipqa.evaluate.gold import load_gold
from tipqa.evaluate.pipeline import evaluate_model
from tipqa.evaluate.refusal import RefusalDetector, RefusalSettings
from tipqa.evaluate.score import ScoringSettings
from tipqa.llm.answerers.base import ANSWERERS
from tipqa.llm.answerers.vllm import VLLMAnswerer, VLLMAnswererSettings
from tipqa.llm.cache import LLMCache

HAVE_VLLM = importlib.util.find_spec("vllm") is not None
needs_vllm = pytest.mark.skipif(
    not HAVE_VLLM, reason="vllm is not installed: these tests run in .venv-vllm (see .ci/run)"
)
# The same engine arguments as the judge's tests, so that one engine serves both in a session.
ENGINE = {"max_model_len": 1024, "enforce_eager": True, "dtype": "float32", "seed": 0}
QUESTIONS = [
    "Who painted the harbour wall blue?",
    "How many comets did the astronomer count?",
    "Where did my grandmother open a bookshop?",
    "Which ship sank in 1912?",
    "What did the village choir sing about?",
    "Who trained pigeons to carry notes?",
    "What grew on the roof of the town hall?",
]


def test_settings_are_checked_and_knobs_not_fingerprinted() -> None:
    with pytest.raises(ConfigError, match="max_tokens"):
        VLLMAnswererSettings(max_tokens=0)
    with pytest.raises(ConfigError, match="batch_size"):
        VLLMAnswererSettings(batch_size=0)
    identity = VLLMAnswererSettings().identity()
    assert "batch_size" not in identity and "model" in identity
    assert VLLMAnswererSettings(model="m", **ENGINE).engine_config().max_model_len == 1024
    assert "prompt_sha256" in identity
    with pytest.raises(ConfigError, match="takes VLLMAnswererSettings"):
        ANSWERERS.create("vllm", RefusalSettings())
    assert isinstance(ANSWERERS.create("vllm", VLLMAnswererSettings(model="m")), VLLMAnswerer)


def test_no_questions_start_no_engine() -> None:
    assert VLLMAnswerer(VLLMAnswererSettings(model="some/model")).answer([]) == []


@pytest.mark.skipif(HAVE_VLLM, reason="vllm is installed here")
def test_missing_vllm_names_the_extra() -> None:
    with pytest.raises(MissingExtraError, match=r"tipqa\[vllm\]"):
        VLLMAnswerer(VLLMAnswererSettings(model="some/model")).answer(["Who?"])


def answerer(model: str, cache: LLMCache | None = None, **changes) -> VLLMAnswerer:
    options = {"model": model, "max_tokens": 8, "batch_size": 3, "chat": True, **ENGINE}
    return VLLMAnswerer(VLLMAnswererSettings(**{**options, **changes}), cache=cache)


@pytest.mark.vllm
@needs_vllm
def test_batches_keep_order_and_confidence_is_the_sequence_probability(model_path: str) -> None:
    chat = answerer(model_path)
    answers = chat.answer(QUESTIONS)
    assert len(answers) == len(QUESTIONS) and all(a.ok for a in answers)
    assert chat.stats.counts["batches"] == 3  # 7 questions in batches of 3
    for answer in answers:
        assert answer.token_logprobs is not None and 1 <= len(answer.token_logprobs) <= 8
        assert answer.confidence == pytest.approx(math.exp(sum(answer.token_logprobs)))
        assert 0.0 < answer.confidence <= 1.0
    again = answerer(model_path, batch_size=7).answer(QUESTIONS)
    assert [a.text for a in again] == [a.text for a in answers]  # greedy: batching changes nothing
    plain = answerer(model_path, chat=False).answer(QUESTIONS[:2])
    assert all(a.ok for a in plain)
    prompts = chat.prompts(QUESTIONS[:1])[0]
    assert len(prompts) > len(answerer(model_path, chat=False).prompts(QUESTIONS[:1])[0])
    silent = answerer(model_path, logprobs=False).answer(QUESTIONS[:1])
    assert silent[0].confidence is None


@pytest.mark.vllm
@needs_vllm
def test_predictions_and_scores_on_a_split(model_path: str, tmp_path: Path) -> None:
    rows = [
        labeled(f"q{i}", "answerable" if i % 2 else "unanswerable", "lighthouse", question=q)
        for i, q in enumerate(QUESTIONS)
    ]
    split = write_split(tmp_path, rows)
    detector = RefusalDetector(RefusalSettings(embedding=False))
    scoring = ScoringSettings(bootstrap=20)
    cache = tmp_path / "llm-cache"
    out = EvaluationLayout(tmp_path / "out")
    first = evaluate_model(
        split, "test", answerer(model_path, cache=LLMCache(cache)), detector, scoring, out
    )
    assert first["metrics"]["questions"] == len(QUESTIONS)
    assert first["confidence"]["predictions_with_confidence"] >= 1
    assert sum(first["metrics"]["counts"].values()) == len(QUESTIONS)
    assert len(LLMCache(cache)) == len(QUESTIONS)
    out.predictions.unlink()
    again = answerer(model_path, cache=LLMCache(cache))
    second = evaluate_model(split, "test", again, detector, scoring, out)
    assert again.stats.counts["batches"] == 0  # every answer came from the cache
    assert second["metrics"] == first["metrics"]
    assert load_gold(split).ids == [row.id for row in rows]
