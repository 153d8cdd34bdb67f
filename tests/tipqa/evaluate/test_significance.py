"""The paired approximate randomization test against a brute-force enumeration."""

from __future__ import annotations

import itertools

import pytest
from support.evaluate_support import labeled

from tipqa.evaluate.metrics import CELLS, Scored, score_question, summary
from tipqa.evaluate.refusal import RefusalDetector
from tipqa.evaluate.significance import compare_pair

GOLD = [
    labeled("a1", "answerable", "Paris"),
    labeled("a2", "answerable", "Nile"),
    labeled("a3", "answerable", "George Washington"),
    labeled("a4", "answerable", "Jupiter"),
    labeled("u1", "unanswerable", "Oslo"),
    labeled("u2", "unanswerable", "Rome"),
    labeled("u3", "unanswerable", "Lima"),
    labeled("u4", "unanswerable", "Bern"),
]
SYSTEM_A = ["Paris", "Nile", "Washington", "Saturn", "I don't know", "I don't know", "Rome", ""]
SYSTEM_B = ["Paris", "I don't know", "George Washington", "Mars", "Oslo", "Rome", "Lima", "Bern"]


def scored(detector: RefusalDetector, responses: list[str]) -> list[Scored]:
    readings = detector.read(responses, [None] * len(responses))
    return [score_question(q, r) for q, r in zip(GOLD, readings, strict=True)]


def exact_p_value(a: list[Scored], b: list[Scored], metric: str) -> float:
    """Every one of the 2^8 ways to swap the systems' outcomes, scored from scratch."""
    observed = abs(summary(a)[metric] - summary(b)[metric])
    hits = 0
    for swaps in itertools.product((False, True), repeat=len(a)):
        first = [y if s else x for x, y, s in zip(a, b, swaps, strict=True)]
        second = [x if s else y for x, y, s in zip(a, b, swaps, strict=True)]
        hits += abs(summary(first)[metric] - summary(second)[metric]) >= observed - 1e-12
    return hits / 2 ** len(a)


def test_p_values_approach_the_exact_ones(rules_detector: RefusalDetector) -> None:
    a, b = scored(rules_detector, SYSTEM_A), scored(rules_detector, SYSTEM_B)
    assert summary(a)["counts"] != summary(b)["counts"]
    results = {r.metric: r for r in compare_pair(a, b, trials=20_000, seed=3)}
    for metric in ("em_f1", "pm_f1"):
        exact = exact_p_value(a, b, metric)
        assert 0.05 < exact < 0.95
        # 20,000 trials: the standard error of the estimate is at most 0.0036
        assert results[metric].p_value == pytest.approx(exact, abs=0.015)
        assert results[metric].difference == pytest.approx(summary(a)[metric] - summary(b)[metric])


def test_identical_systems_and_seeds(rules_detector: RefusalDetector) -> None:
    a = scored(rules_detector, SYSTEM_A)
    same = compare_pair(a, a, trials=100, seed=0)
    assert all(r.difference == 0 and r.p_value == 1.0 for r in same)
    b = scored(rules_detector, SYSTEM_B)
    once = compare_pair(a, b, trials=500, seed=7)
    assert compare_pair(a, b, trials=500, seed=7) == once
    assert len(CELLS) == 5


def test_a_clear_difference_is_significant(rules_detector: RefusalDetector) -> None:
    many = GOLD * 6
    right = [q.answer if q.label == "answerable" else "I don't know" for q in many]
    wrong = ["Atlantis"] * len(many)
    a = [
        score_question(q, r)
        for q, r in zip(many, rules_detector.read(right, [None] * 48), strict=True)
    ]
    b = [
        score_question(q, r)
        for q, r in zip(many, rules_detector.read(wrong, [None] * 48), strict=True)
    ]
    results = compare_pair(a, b, trials=2000, seed=0)
    assert all(r.p_value < 0.001 for r in results)
    with pytest.raises(ValueError, match="same questions"):
        compare_pair(a, b[:-1], trials=10, seed=0)
