"""The paired approximate randomization test (Riezler and Maxwell, 2005), as the paper uses it.

For two systems scored on the same questions, each trial swaps the two systems' outcomes on each
question with probability 1/2 and recomputes the difference of the metric; the p-value is
(1 + trials whose absolute difference is at least the observed one) / (1 + trials). A metric is
given as additive per-question features and a function of their sums, so trials run as one
matrix product: EM-F1 from the five cell counts, PM-F1 from the sum of per-question scores.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from tipqa.evaluate.bootstrap import one_hot_cells
from tipqa.evaluate.metrics import Scored, cell_vector, honesty_scores

CHUNK = 500
TOLERANCE = 1e-12

Aggregate = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class Metric:
    """A metric as per-question features and a function of their column sums (vectorised)."""

    name: str
    features: Callable[[Sequence[Scored]], np.ndarray]
    aggregate: Aggregate


def _cells(scored: Sequence[Scored]) -> np.ndarray:
    """Per-question cell indicators, whose sums are the cell counts."""
    return one_hot_cells(cell_vector(scored)).astype(float)


def _pm(scored: Sequence[Scored]) -> np.ndarray:
    """Per-question PM scores divided by the count, so that their sum is PM-F1."""
    return np.array([[item.pm / len(scored)] for item in scored], dtype=float)


METRICS = (
    Metric("em_f1", _cells, lambda sums: np.asarray(honesty_scores(sums)[2])),
    Metric("pm_f1", _pm, lambda sums: sums[..., 0]),
)


@dataclass(frozen=True)
class TestResult:
    """The observed difference (A minus B) of a metric and its randomization p-value."""

    metric: str
    difference: float
    p_value: float
    trials: int


def randomization_test(
    features_a: np.ndarray,
    features_b: np.ndarray,
    aggregate: Aggregate,
    trials: int,
    seed: int,
) -> tuple[float, float]:
    """(observed A minus B, p-value) of a paired approximate randomization test."""
    if features_a.shape != features_b.shape:
        raise ValueError("both systems must be scored on the same questions")
    if trials < 1:
        raise ValueError(f"trials must be at least 1, got {trials}")
    sum_a, sum_b = features_a.sum(axis=0), features_b.sum(axis=0)
    observed = float(aggregate(sum_a) - aggregate(sum_b))
    delta = features_a - features_b
    rng = np.random.default_rng(seed)
    at_least, done = 0, 0
    while done < trials:
        size = min(CHUNK, trials - done)
        swaps = rng.integers(0, 2, size=(size, len(delta))).astype(float)
        moved = swaps @ delta
        differences = np.abs(aggregate(sum_a - moved) - aggregate(sum_b + moved))
        at_least += int((differences >= abs(observed) - TOLERANCE).sum())
        done += size
    return observed, (at_least + 1) / (trials + 1)


def compare_pair(
    scored_a: Sequence[Scored], scored_b: Sequence[Scored], trials: int, seed: int
) -> list[TestResult]:
    """EM-F1 and PM-F1 tests of system A against system B (same questions, same order)."""
    if [item.id for item in scored_a] != [item.id for item in scored_b]:
        raise ValueError("both systems must be scored on the same questions in the same order")
    results = []
    for metric in METRICS:
        difference, p_value = randomization_test(
            metric.features(scored_a), metric.features(scored_b), metric.aggregate, trials, seed
        )
        results.append(TestResult(metric.name, difference, p_value, trials))
    return results
