"""`Evaluate` end to end: the demo build, then a model on a local OpenAI-compatible server."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path
from typing import Any

import pytest
from support import openai_server as fake
from support.evaluate_support import ANSWER_LAYOUT
from support.seed_support import DemoBuilds, seed_run
from support.tests_support import luigi_config, run_luigi

from tipqa.core.jsonl import read_json, read_records
from tipqa.core.layout import RunLayout
from tipqa.core.records import LabeledQuestion

pytestmark = pytest.mark.slow

REFUSAL = "Honestly, I have no clue about that one."


class SplitPlayingModel:
    """Answers the gold answer to answerable questions and a paraphrased refusal otherwise;
    the first ask of every third question fails with HTTP 500."""

    def __init__(self, split: Path) -> None:
        self.split = split
        self.rows: dict[str, LabeledQuestion] = {}

    def __call__(self, body: dict[str, Any], attempt: int, headers: dict[str, str]) -> fake.Reply:
        if not self.rows:
            self.rows = {r.question: r for r in read_records(self.split, LabeledQuestion)}
        match = ANSWER_LAYOUT.search(fake.last_user_message(body))
        row = self.rows[match.group(1).strip()] if match else None
        if row is None:
            return fake.Reply(status=400, message="not the answer prompt")
        if attempt == 1 and sorted(self.rows).index(row.question) % 3 == 0:
            return fake.Reply(status=500, message="injected")
        text = row.answer if row.label == "answerable" else REFUSAL
        return fake.Reply(text=text, token_logprobs=[(text, math.log(0.75))])


@pytest.mark.needs("openai")
def test_evaluate_scores_a_model_and_resumes(tmp_path: Path, demo_builds: DemoBuilds) -> None:
    run = RunLayout(tmp_path / "outputs" / "t")
    model = SplitPlayingModel(run.splits / "test" / "questions.jsonl")
    folder = run.evaluation("openai", "table", "test")
    with fake.FakeOpenAIServer(model) as server:
        answerer = {"model": "table", "base_url": server.base_url, "max_retries": "0"}
        sections = {"evaluate": {"bootstrap": "50"}, "evaluate.openai": answerer}
        config = luigi_config(tmp_path, **sections)
        seed_run(tmp_path, demo_builds())
        task = ("Evaluate", "--model-backend", "openai", "--split", "test")
        first = run_luigi(config, *task)
        assert first.returncode == 30, first.stderr[-3000:]
        assert "got no answer" in first.stderr
        assert not folder.predictions.exists() and not folder.stats.exists()
        questions = read_records(run.splits / "test" / "questions.jsonl", LabeledQuestion)
        failed = sum(1 for i in range(len(questions)) if i % 3 == 0)
        assert server.statuses[500] == failed
        server.reset()
        second = run_luigi(config, *task)
        assert second.returncode == 0, second.stderr[-3000:]
        assert server.calls == failed
        server.reset()
        third = run_luigi(config, *task)
        assert third.returncode == 0 and server.calls == 0
        scores = read_json(folder.scores)
        stats = read_json(folder.stats)
        rescored = luigi_config(tmp_path, **{**sections, "evaluate": {"threshold": "0.99"}})
        fourth = run_luigi(rescored, *task)
        assert fourth.returncode == 0, fourth.stderr[-3000:]
        assert server.calls == 0  # a new threshold rescores the same predictions
    assert isinstance(scores, dict) and isinstance(stats, dict)
    answerable = sum(q.label == "answerable" for q in questions)
    metrics = scores["metrics"]
    assert metrics["counts"] == {
        "TP": answerable,
        "FP_a": 0,
        "FP_u": 0,
        "FN": 0,
        "TN": len(questions) - answerable,
    }
    assert metrics["em_f1"] == 1.0 and metrics["pm_f1"] == 1.0
    assert metrics["refusals_by_kind"]["embedding"] == len(questions) - answerable
    assert scores["confidence"]["predictions_with_confidence"] == len(questions)
    assert scores["model"]["backend"] == "openai" and scores["model"]["model"] == "table"
    assert len(folder.predictions.read_text().splitlines()) == len(questions)
    assert folder.report.is_file() and folder.figure("reliability").is_file()
    assert not list(folder.root.glob("*.partial.jsonl"))
    assert stats["provenance"]["settings"]["evaluate"]["bootstrap"] == 50
    rescore = read_json(folder.stats)
    assert isinstance(rescore, dict) and rescore["fingerprint"] != stats["fingerprint"]
    assert rescore["provenance"]["inputs"] == stats["provenance"]["inputs"]
    strict = read_json(folder.scores)
    assert isinstance(strict, dict) and strict["settings"]["refusal"]["threshold"] == 0.99
    assert strict["metrics"]["counts"]["FP_u"] == len(questions) - answerable


@pytest.mark.vllm
@pytest.mark.skipif(
    importlib.util.find_spec("vllm") is None,
    reason="vllm is not installed: this test runs in .venv-vllm (see .ci/run)",
)
def test_evaluate_on_the_vllm_engine_with_the_tiny_model(
    tmp_path: Path, vllm_environment: Path, tiny_model: Path
) -> None:
    engine = {
        "model": str(tiny_model),
        "chat": "true",
        "max_tokens": "8",
        "max_model_len": "1024",
        "enforce_eager": "true",
        "dtype": "float32",
    }
    config = luigi_config(
        tmp_path, evaluate={"bootstrap": "20", "embedding": "false"}, **{"evaluate.vllm": engine}
    )
    done = run_luigi(config, "Evaluate", "--model-backend", "vllm")
    assert done.returncode == 0, done.stderr[-3000:]
    run = RunLayout(tmp_path / "outputs" / "t")
    questions = read_records(run.splits / "test" / "questions.jsonl", LabeledQuestion)
    folder = run.evaluation("vllm", str(tiny_model), "test")
    assert folder.root.parent.name.startswith(f"vllm-{tiny_model.name}-")
    scores = read_json(folder.scores)
    assert isinstance(scores, dict)
    assert scores["metrics"]["questions"] == len(questions)
    assert sum(scores["metrics"]["counts"].values()) == len(questions)
    assert scores["confidence"]["predictions_with_confidence"] >= 1
    stats = read_json(folder.predictions_stats)
    assert isinstance(stats, dict)
    assert stats["counts"]["backend.batches"] >= 1
