"""Making predictions with a real answerer: cached, resumable, nothing answered is lost."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from support.evaluate_support import labeled, table_rule, write_split
from support.openai_server import FakeOpenAIServer

from tipqa.core.errors import TipqaError
from tipqa.core.jsonl import read_json
from tipqa.core.layout import EvaluationLayout
from tipqa.evaluate.gold import load_gold
from tipqa.evaluate.predict import make_predictions
from tipqa.evaluate.predictions import read_predictions
from tipqa.llm.answerers.base import Answer
from tipqa.llm.answerers.openai import OpenAIAnswerer, OpenAIAnswererSettings
from tipqa.llm.cache import LLMCache

pytestmark = pytest.mark.needs("openai")

QUESTIONS = {
    "a1": "What is the capital of France?",
    "a2": "Who wrote Hamlet? [[500:1]]",
    "a3": "Which river is longest?",
    "u1": "Who was the first mayor of Atlantis?",
    "u2": "What colour is the seventh moon? [[500:1]]",
}
TABLE = {
    "What is the capital of France?": ("Paris", [math.log(0.8)]),
    "Who wrote Hamlet? [[500:1]]": ("Shakespeare", [math.log(0.7)]),
    "Which river is longest?": ("The Nile", [math.log(0.9), math.log(0.9)]),
}


@pytest.fixture
def gold(tmp_path: Path):
    rows = [
        labeled(qid, "answerable" if qid.startswith("a") else "unanswerable", "x", question=text)
        for qid, text in QUESTIONS.items()
    ]
    return load_gold(write_split(tmp_path, rows))


def answerer(server: FakeOpenAIServer, cache: LLMCache | None = None, **changes) -> OpenAIAnswerer:
    options = OpenAIAnswererSettings(
        model="table", base_url=server.base_url, max_retries=0, **changes
    )
    return OpenAIAnswerer(options, cache=cache, progress=False)


def test_a_rerun_asks_only_for_what_failed(tmp_path: Path, gold) -> None:
    folder = EvaluationLayout(tmp_path / "run")
    cache = LLMCache(tmp_path / "cache")
    with FakeOpenAIServer(table_rule(TABLE)) as server:
        with pytest.raises(TipqaError, match=r"2 of 5 questions got no answer \(http_500: 2\)"):
            make_predictions(gold, answerer(server, cache), folder, batch=2)
        assert not folder.predictions.exists() and not folder.predictions_stats.exists()
        assert len(cache) == 3
        assert server.calls == 5
        server.reset()
        stats = make_predictions(gold, answerer(server, cache), folder, batch=2)
        assert server.calls == 2
    predictions = read_predictions(folder.predictions, gold.ids)
    assert [p.id for p in predictions.by_id.values()] == gold.ids
    assert predictions.by_id["a1"].confidence == pytest.approx(0.8)
    assert predictions.by_id["a3"].confidence == pytest.approx(0.81)
    assert predictions.by_id["a2"].prediction == "Shakespeare"
    assert predictions.by_id["u1"].prediction == "I don't know"
    assert predictions.by_id["u1"].confidence is None
    assert stats.counts["backend.cache_hits"] == 3 and stats.counts["answered"] == 5
    recorded = read_json(folder.predictions_stats)
    assert isinstance(recorded, dict)
    assert recorded["info"]["prompt"] == "answer-v1" and recorded["info"]["model"] == "table"
    assert recorded["counts"]["predictions"] == 5
    assert recorded["provenance"]["settings"]["answerer"]["max_tokens"] == 64


def test_finished_and_cached_answers_cost_nothing(tmp_path: Path, gold) -> None:
    folder = EvaluationLayout(tmp_path)
    out = folder.predictions
    cache = LLMCache(tmp_path / "cache")
    with FakeOpenAIServer(table_rule(TABLE)) as server:
        with pytest.raises(TipqaError):
            make_predictions(gold, answerer(server, cache), folder)
        make_predictions(gold, answerer(server, cache), folder)
        server.reset()
        make_predictions(gold, answerer(server, cache), folder)
        assert server.calls == 0
        first = out.read_bytes()
        out.unlink()
        stats = make_predictions(gold, answerer(server, cache), folder)
        assert server.calls == 0
        assert stats.counts["backend.cache_hits"] == 5
    assert out.read_bytes() == first
    assert len(cache) == 5


def test_predictions_of_other_settings_are_not_reused(tmp_path: Path, gold) -> None:
    folder = EvaluationLayout(tmp_path)
    with FakeOpenAIServer(table_rule(TABLE)) as server:
        with pytest.raises(TipqaError):
            make_predictions(gold, answerer(server), folder)
        make_predictions(gold, answerer(server), folder)
        server.reset()
        stats = make_predictions(gold, answerer(server, max_tokens=8), folder)
        assert server.calls == 5 and stats.counts["resumed"] == 0
        assert server.bodies[0]["max_tokens"] == 8
        server.reset()
        assert make_predictions(gold, answerer(server, max_tokens=8), folder).counts["resumed"] == 5
        assert server.calls == 0
    recorded = read_json(folder.predictions_stats)
    assert isinstance(recorded, dict)
    assert recorded["provenance"]["settings"]["answerer"]["max_tokens"] == 8


def test_each_answer_is_committed_as_it_arrives(tmp_path: Path) -> None:
    questions = ["What is the capital of France?", "Which river is longest?"]
    heard: list[int] = []

    def stop_at_the_second(index: int, answer: Answer) -> None:
        heard.append(index)
        if len(heard) == 2:
            raise KeyboardInterrupt  # as a kill would, while the batch is not done

    with FakeOpenAIServer(table_rule(TABLE)) as server, LLMCache(tmp_path / "c") as cache:
        stopped = answerer(server, cache)
        with pytest.raises(KeyboardInterrupt):
            stopped.answer(questions, stop_at_the_second)
        assert len(cache) == 1 and stopped.stats.counts["cache_stored"] == 1
        server.reset()
        again = answerer(server, cache).answer(questions)
        assert server.calls == 1 and [a.cached for a in again].count(True) == 1
