"""Making predictions with a real answerer: cached, resumable, nothing answered is lost."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from evaluate_support import labeled, table_rule, write_split
from openai_server import FakeOpenAIServer

from tipqa.errors import TipqaError
from tipqa.evaluate.answerers.openai import OpenAIAnswerer, OpenAIAnswererSettings
from tipqa.evaluate.gold import load_gold
from tipqa.evaluate.predict import make_predictions, partial_path, stats_path
from tipqa.evaluate.predictions import read_predictions
from tipqa.jsonl import read_json
from tipqa.llm.cache import LLMCache

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


def answerer(server: FakeOpenAIServer) -> OpenAIAnswerer:
    options = OpenAIAnswererSettings(model="table", base_url=server.base_url, max_retries=0)
    return OpenAIAnswerer(options, progress=False)


def test_a_rerun_asks_only_for_what_failed(tmp_path: Path, gold) -> None:
    out = tmp_path / "run" / "predictions.jsonl"
    cache = LLMCache(tmp_path / "cache.sqlite")
    with FakeOpenAIServer(table_rule(TABLE)) as server:
        with pytest.raises(TipqaError, match=r"2 of 5 questions got no answer \(http_500: 2\)"):
            make_predictions(gold, answerer(server), out, cache=cache, batch=2)
        assert not out.exists() and not stats_path(out).exists()
        kept = partial_path(out).read_text().splitlines()
        assert len(kept) == 3
        assert server.calls == 5
        server.reset()
        stats = make_predictions(gold, answerer(server), out, cache=cache, batch=2)
        assert server.calls == 2
    assert not partial_path(out).exists()
    predictions = read_predictions(out, gold.ids)
    assert [p.id for p in predictions.by_id.values()] == gold.ids
    assert predictions.by_id["a1"].confidence == pytest.approx(0.8)
    assert predictions.by_id["a3"].confidence == pytest.approx(0.81)
    assert predictions.by_id["a2"].prediction == "Shakespeare"
    assert predictions.by_id["u1"].prediction == "I don't know"
    assert predictions.by_id["u1"].confidence is None
    assert stats.counts["resumed"] == 3 and stats.counts["answered"] == 2
    recorded = read_json(stats_path(out))
    assert isinstance(recorded, dict)
    assert recorded["info"]["prompt"] == "answer-v1" and recorded["info"]["model"] == "table"
    assert recorded["counts"]["predictions"] == 5


def test_finished_and_cached_answers_cost_nothing(tmp_path: Path, gold) -> None:
    out = tmp_path / "predictions.jsonl"
    cache = LLMCache(tmp_path / "cache.sqlite")
    with FakeOpenAIServer(table_rule(TABLE)) as server:
        with pytest.raises(TipqaError):
            make_predictions(gold, answerer(server), out, cache=cache)
        make_predictions(gold, answerer(server), out, cache=cache)
        server.reset()
        make_predictions(gold, answerer(server), out, cache=cache)
        assert server.calls == 0
        first = out.read_bytes()
        out.unlink()
        stats = make_predictions(gold, answerer(server), out, cache=cache)
        assert server.calls == 0
        assert stats.counts["cache_hits"] == 5
    assert out.read_bytes() == first
    assert len(cache) == 5


def test_a_line_cut_by_a_crash_is_skipped_and_redone(tmp_path: Path, gold) -> None:
    out = tmp_path / "predictions.jsonl"
    partial_path(out).write_text(
        '{"id": "a1", "prediction": "Paris", "confidence": 0.8}\n{"id": "a3", "predic'
    )
    with FakeOpenAIServer(table_rule(TABLE)) as server:
        with pytest.raises(TipqaError, match="2 of 5 questions got no answer"):
            make_predictions(gold, answerer(server), out, cache=None)
        asked = [body["messages"][0]["content"] for body in server.bodies]
        lines = partial_path(out).read_text().splitlines()
        stats = make_predictions(gold, answerer(server), out, cache=None)
    assert not any(QUESTIONS["a1"] in text for text in asked)
    assert sum(QUESTIONS["a3"] in text for text in asked) == 1
    assert len(lines) == 4 and lines[1].endswith('"predic')
    assert stats.errors["resume_bad_line"] == 1
    predictions = read_predictions(out, gold.ids).by_id
    assert predictions["a1"].confidence == 0.8
    assert predictions["a3"].prediction == "The Nile"
