"""Confidence beyond the sequence probability: agreement, semantic entropy, P(True), scaling."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from support import openai_server as fake
from support.evaluate_support import ANSWER_LAYOUT, labeled, write_split
from support.partition_fixtures import build_splits

from tipqa.builder.evaluate import evaluate
from tipqa.builder.plan import Plan
from tipqa.config import read_config
from tipqa.core.errors import ConfigError
from tipqa.core.layout import EvaluationLayout
from tipqa.evaluate.confidence import (
    ConfidenceSettings,
    NormalizedMatch,
    agreement,
    semantic_entropy,
)
from tipqa.evaluate.pipeline import evaluate_model
from tipqa.evaluate.refusal import RefusalDetector
from tipqa.evaluate.sampling import read_rated
from tipqa.evaluate.score import ScoringSettings
from tipqa.evaluate.settings import EvaluateSettings
from tipqa.evaluate.temperature import fit_temperature, scale
from tipqa.llm.answerers.openai import OpenAIAnswerer, OpenAIAnswererSettings
from tipqa.llm.cache import LLMCache

SAME = NormalizedMatch()


def test_agreement_and_entropy_over_normalised_clusters() -> None:
    samples = ["Paris", "paris.", "The Paris", "Lyon"]
    assert agreement("PARIS", samples, SAME) == 0.75
    assert semantic_entropy(samples, SAME) == pytest.approx(
        -(0.75 * math.log(0.75) + 0.25 * math.log(0.25))
    )
    assert semantic_entropy(["a b", "A B!"], SAME) == 0.0
    assert agreement("x", [], SAME) is None and semantic_entropy([], SAME) is None


@pytest.mark.parametrize("temperature", [0.5, 2.5])
def test_temperature_scaling_recovers_a_known_temperature(temperature: float) -> None:
    rng = np.random.default_rng(3)
    logits = rng.normal(0.0, 3.0, 40_000)
    correct = rng.random(len(logits)) < 1 / (1 + np.exp(-logits / temperature))
    confidence = 1 / (1 + np.exp(-logits))  # the model states sigmoid(z): miscalibrated by T
    fitted = fit_temperature(confidence, correct)
    assert fitted == pytest.approx(temperature, rel=0.05)
    recalibrated = scale(confidence, fitted)
    assert abs(recalibrated.mean() - correct.mean()) < 0.01
    assert fit_temperature(confidence, np.ones(len(logits), dtype=bool)) is None


def test_settings_are_checked_and_fingerprinted() -> None:
    with pytest.raises(ConfigError, match="samples"):
        ConfidenceSettings(samples=1)
    with pytest.raises(ConfigError, match="equivalence"):
        ConfidenceSettings(equivalence="nli")
    identity = EvaluateSettings(samples=4, p_true=True).identity()
    assert identity["samples"] == 4 and identity["p_true"] is True
    assert "temperature_scaling" in identity and "sample_temperature" in identity


# question -> (greedy answer, the four samples by seed, P(yes), P(no) of the P(True) reply)
SCRIPT: dict[str, tuple[str, list[str], float, float]] = {
    "Capital of France?": ("Paris", ["Paris", "paris.", "The Paris", "Paris"], 0.8, 0.2),
    "Who wrote Hamlet?": (
        "Shakespeare", ["Marlowe", "Shakespeare", "Bacon", "shakespeare"], 0.3, 0.6,
    ),
    "First mayor of Atlantis?": ("I don't know", ["Zeus", "Hera", "Zeus", "Apollo"], 0.5, 0.5),
}  # fmt: skip


def scripted(body: dict[str, Any], attempt: int, headers: dict[str, str]) -> fake.Reply:
    """Greedy answers at temperature 0, the seed's sample above it, P(True) by its prompt."""
    content = fake.last_user_message(body)
    if "Proposed answer:" in content:
        question = content.split("Question: ")[1].split("\n")[0]
        yes, no = SCRIPT[question][2:]
        top = [{"token": "yes", "logprob": math.log(yes)}, {"token": "no", "logprob": math.log(no)}]
        return fake.Reply(text="yes", top_logprobs=top)
    match = ANSWER_LAYOUT.search(content)
    assert match is not None
    greedy, samples, _, _ = SCRIPT[match.group(1).strip()]
    if body.get("temperature", 0) == 0:
        return fake.Reply(text=greedy, token_logprobs=[(greedy, math.log(0.5))])
    return fake.Reply(text=samples[body["seed"]])


@pytest.mark.slow  # two evaluations with their figures
@pytest.mark.needs("openai")
def test_a_scripted_model_gives_exact_agreement_entropy_and_p_true(tmp_path: Path) -> None:
    rows = [
        labeled("a1", "answerable", "Paris", question="Capital of France?"),
        labeled("a2", "answerable", "Shakespeare", question="Who wrote Hamlet?"),
        labeled("u1", "unanswerable", "Poseidon", question="First mayor of Atlantis?"),
    ]
    gold = write_split(tmp_path, rows)
    settings = ConfidenceSettings(samples=4, p_true=True)
    folder = EvaluationLayout(tmp_path / "eval")
    with fake.FakeOpenAIServer(scripted) as server:
        options = OpenAIAnswererSettings(model="s", base_url=server.base_url, max_retries=0)

        def run() -> dict[str, Any]:
            return evaluate_model(
                gold,
                "test",
                OpenAIAnswerer(options, cache=LLMCache(tmp_path / "cache"), progress=False),
                RefusalDetector(EvaluateSettings(embedding=False).refusal()),
                ScoringSettings(bootstrap=0),
                folder,
                confidence=settings,
                fit_on=read_rated(folder.confidence) if folder.root.exists() else None,
            )

        result = run()
        temperatures = {body.get("temperature", 0) for body in server.bodies}
        assert temperatures == {0, 1.0}
        assert server.calls == 3 + 3 * 4 + 2  # greedy, samples, P(True) of the two answers
        server.reset()
        rescored = run()  # every answer, sample and P(True) comes from the cache
        assert server.calls == 0
    by_id = {row["id"]: row for row in map(json.loads, folder.confidence.open())}
    assert by_id["a1"]["agreement"] == 1.0 and by_id["a1"]["semantic_entropy"] == 0.0
    assert by_id["a2"]["agreement"] == 0.5
    assert by_id["a2"]["semantic_entropy"] == pytest.approx(1.5 * math.log(2))
    assert by_id["u1"]["agreement"] == 0.0
    assert by_id["u1"]["semantic_entropy_confidence"] == pytest.approx(
        1 - 1.5 * math.log(2) / math.log(4)
    )
    assert by_id["a1"]["p_true"] == pytest.approx(0.8)
    assert by_id["a2"]["p_true"] == pytest.approx(1 / 3)
    assert by_id["u1"]["p_true"] is None  # a refusal is not asked
    methods = result["confidence_methods"]
    assert methods["agreement"]["auroc_correct"] == 1.0
    assert methods["agreement"]["auroc_known_unknown"] == 1.0
    assert methods["p_true"]["questions"] == 2
    assert result["confidence_counts"]["counts"]["p_true_refusals_skipped"] == 1
    assert result["confidence_counts"]["counts"]["cache_stored"] == 3 * 4 + 2
    assert rescored["confidence_counts"]["counts"]["cache_hits"] == 3 * 4 + 2
    # the rerun fitted temperatures on the first run's confidences (the same split here)
    assert "temperature" in rescored["confidence_methods"]["sequence_probability"]
    report = (folder.root / "report.md").read_text()
    assert "Confidence methods side by side" in report and "reliability-methods.png" in report


def half_right(body: dict[str, Any], attempt: int, headers: dict[str, str]) -> fake.Reply:
    """The right answer to every even-numbered question of the authored splits, else a wrong one."""
    match = ANSWER_LAYOUT.search(fake.last_user_message(body))
    assert match is not None
    number = int(match.group(1).split()[1])
    text = f"Answer {number}" if number % 2 == 0 else "Nowhere"
    return fake.Reply(text=text, token_logprobs=[(text, math.log(0.9 if number % 3 else 0.6))])


@pytest.mark.slow  # two evaluations with their figures
@pytest.mark.needs("openai")
def test_the_step_fits_temperatures_on_the_validation_split(tmp_path: Path) -> None:
    run = build_splits(tmp_path / "outputs" / "t")
    with fake.FakeOpenAIServer(half_right) as server:
        config = read_config(
            {
                "build": {"name": "t", "output_root": str(tmp_path / "outputs")},
                "pool.dev": {"source": "demo"},
                "pool.train": {"source": "demo"},
                "splits": {"test_pool": "dev", "train_pool": "train", "validation_per_label": "3"},
                "evaluate": {"temperature_scaling": "true", "embedding": "false", "bootstrap": "0"},
                "evaluate.openai": {"model": "half", "base_url": server.base_url},
            }
        )
        result = evaluate(Plan(config).evaluate("openai", "test"), config.layout())
    validation = run.evaluation("openai", "half", "validation")
    assert validation.stats.is_file() and validation.confidence.is_file()
    block = result["confidence_methods"]["sequence_probability"]
    assert block["fitted_on_questions"] == 6 and block["temperature"] > 0
    assert block["ece_equal_width_scaled"] is not None
