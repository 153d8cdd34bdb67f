"""Seeded bootstrap intervals."""

from __future__ import annotations

from support.evaluate_support import labeled

from tipqa.evaluate.bootstrap import bootstrap_intervals
from tipqa.evaluate.metrics import score_question, summary
from tipqa.evaluate.refusal import Reading


def outcomes(count: int = 40) -> list:
    gold = [
        labeled(f"q{i}", "answerable" if i % 3 else "unanswerable", "Paris") for i in range(count)
    ]
    answers = ["Paris" if i % 4 else "Rome" for i in range(count)]
    return [
        score_question(q, Reading(a, False), confidence=(i % 10) / 10)
        for i, (q, a) in enumerate(zip(gold, answers, strict=True))
    ]


def test_seeded_and_around_the_value() -> None:
    scored = outcomes()
    first = bootstrap_intervals(scored, 300, seed=5)
    assert bootstrap_intervals(scored, 300, seed=5) == first
    assert bootstrap_intervals(scored, 300, seed=6) != first
    assert first["em_f1"]["value"] == summary(scored)["em_f1"]
    for name in ("em_f1", "pm_f1", "ece"):
        low, high = first[name]["ci95"]
        assert low <= first[name]["value"] <= high
        assert low < high
        assert first[name]["resamples"] == 300


def test_constant_outcomes_give_a_point_interval() -> None:
    gold = [labeled(f"q{i}", "answerable", "Paris") for i in range(10)]
    scored = [score_question(q, Reading("Paris", False)) for q in gold]
    result = bootstrap_intervals(scored, 50, seed=0)
    assert result["em_f1"] == {"value": 1.0, "ci95": [1.0, 1.0], "resamples": 50}
    assert "ece" not in result
    assert bootstrap_intervals(scored, 0, seed=0)["pm_f1"]["ci95"] is None
