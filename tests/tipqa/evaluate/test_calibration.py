"""ECE, reliability bins, Brier, AUROC and the equal error rate on examples worked by hand."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tipqa.evaluate.calibration import (
    auroc,
    brier_score,
    equal_error,
    expected_calibration_error,
    interpolated_eer,
    reliability_bins,
    roc_curve,
    roc_points,
)

CONFIDENCE = np.array([0.05, 0.15, 0.15, 0.85, 0.95, 0.95, 1.0])
CORRECT = np.array([0, 0, 1, 1, 1, 0, 1])


def test_ece_equal_width_worked_example() -> None:
    # Ten bins of width 0.1; four are filled:
    #   [0.0, 0.1): 0.05          acc 0     conf 0.05   |0 - 0.05| * 1 = 0.05
    #   [0.1, 0.2): 0.15, 0.15    acc 1/2   conf 0.15   |0.5 - 0.15| * 2 = 0.70
    #   [0.8, 0.9): 0.85          acc 1     conf 0.85   |1 - 0.85| * 1 = 0.15
    #   [0.9, 1.0]: 0.95 .95 1.0  acc 2/3   conf 2.9/3  |2 - 2.9| = 0.90 (1.0 is in the last bin)
    # ECE = (0.05 + 0.70 + 0.15 + 0.90) / 7 = 1.8 / 7
    assert expected_calibration_error(CONFIDENCE, CORRECT, 10, "width") == pytest.approx(1.8 / 7)
    bins = reliability_bins(CONFIDENCE, CORRECT, 10, "width")
    assert [b.count for b in bins] == [1, 2, 0, 0, 0, 0, 0, 0, 1, 3]
    assert bins[9].accuracy == pytest.approx(2 / 3)
    assert bins[9].confidence == pytest.approx(2.9 / 3)
    assert bins[2].accuracy is None


def test_ece_equal_mass_keeps_ties_together() -> None:
    # Three bins over seven sorted confidences; a value goes to the bin of its first rank
    # (rank * 3 // 7): 0.05 -> 0, 0.15 (rank 1) -> 0, 0.85 (rank 3) -> 1, 0.95 (rank 4) -> 1,
    # 1.0 (rank 6) -> 2. Bins {0.05, 0.15, 0.15}: |1 - 0.35| = 0.65; {0.85, 0.95, 0.95}:
    # |2 - 2.75| = 0.75; {1.0}: 0. ECE = 1.4 / 7 = 0.2
    assert expected_calibration_error(CONFIDENCE, CORRECT, 3, "mass") == pytest.approx(0.2)
    bins = reliability_bins(CONFIDENCE, CORRECT, 3, "mass")
    assert [(b.low, b.high, b.count) for b in bins] == [
        (0.05, 0.15, 3),
        (0.85, 0.95, 3),
        (1.0, 1.0, 1),
    ]
    shuffled = np.random.default_rng(1).permutation(len(CONFIDENCE))
    same = expected_calibration_error(CONFIDENCE[shuffled], CORRECT[shuffled], 3, "mass")
    assert same == pytest.approx(0.2)


def test_ece_of_nothing_and_of_perfect_calibration() -> None:
    assert expected_calibration_error(np.array([]), np.array([])) is None
    assert expected_calibration_error(np.array([1.0, 0.0]), np.array([1, 0])) == 0.0


def test_brier() -> None:
    # ((0.9 - 1)^2 + (0.2 - 0)^2) / 2 = (0.01 + 0.04) / 2
    assert brier_score(np.array([0.9, 0.2]), np.array([1, 0])) == pytest.approx(0.025)
    assert brier_score(np.array([]), np.array([])) is None


def test_auroc_with_ties() -> None:
    # positive-negative pairs: (0.8, 0.5) 1, (0.8, 0.2) 1, (0.5, 0.5) tie 1/2, (0.5, 0.2) 1
    scores = np.array([0.8, 0.5, 0.5, 0.2])
    positive = np.array([True, True, False, False])
    assert auroc(scores, positive) == pytest.approx(3.5 / 4)
    assert auroc(np.array([0.3, 0.3]), np.array([True, False])) == 0.5
    assert auroc(np.array([0.3, 0.4]), np.array([True, True])) is None


def test_eer_at_an_exact_crossing() -> None:
    # known 0.9 0.8 0.4, unknown 0.7 0.3 0.2. At threshold 0.7: TPR 2/3 (FNR 1/3), FPR 1/3.
    scores = np.array([0.9, 0.8, 0.4, 0.7, 0.3, 0.2])
    positive = np.array([True, True, True, False, False, False])
    result = equal_error(scores, positive)
    assert result is not None
    assert result.eer == pytest.approx(1 / 3)
    assert result.threshold == 0.7
    # known when >= 0.7: {0.9, 0.8 | 0.7}: TP 2, FP 1, FN 1 -> F1 of the known class 2/3
    assert result.f1 == pytest.approx(2 / 3)
    assert interpolated_eer(scores, positive) == pytest.approx(1 / 3)


def test_kuq_takes_the_nearest_roc_point_where_interpolation_would_cross() -> None:
    # known 0.9 0.5, unknown 0.5 0.1. ROC: (0, 0) -> 0.9: (FPR 0, TPR 1/2) -> 0.5: (1/2, 1).
    # FNR - FPR goes from 1/2 to -1/2 between the last two: halfway, FPR = 1/4 = FNR.
    scores = np.array([0.9, 0.5, 0.5, 0.1])
    positive = np.array([True, True, False, False])
    assert [p[1:] for p in roc_points(scores, positive)] == [
        (0.0, 0.0),
        (0.0, 0.5),
        (0.5, 1.0),
        (1.0, 1.0),
    ]
    assert interpolated_eer(scores, positive) == pytest.approx(0.25)
    # |FNR - FPR| is 1/2 at both 0.9 and 0.5: KUQ's argmin takes the first point, 0.9
    result = equal_error(scores, positive)
    assert result is not None
    assert (result.eer, result.threshold) == (0.0, 0.9)
    assert result.f1 == pytest.approx(2 / 3)  # TP 1, FP 0, FN 1
    assert equal_error(scores, np.array([True] * 4)) is None
    assert interpolated_eer(scores, np.array([False] * 4)) is None


def kuq_recipe(
    sklearn_metrics: Any, scores: np.ndarray, known: np.ndarray
) -> tuple[float, float, float]:
    """KUQ's published recipe on scikit-learn's roc_curve (the reference implementation)."""
    fpr, tpr, thresholds = sklearn_metrics.roc_curve(known.astype(int), scores)
    index = np.nanargmin(np.abs((1 - tpr) - fpr))
    predicted = scores >= thresholds[index]
    tp = int((predicted & known).sum())
    fp = int((predicted & ~known).sum())
    fn = int((~predicted & known).sum())
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return float(fpr[index]), float(thresholds[index]), f1


def test_eer_and_f1_equal_kuqs_recipe_on_random_sets_with_ties() -> None:
    sklearn_metrics = pytest.importorskip("sklearn.metrics")  # the annotation extra
    rng = np.random.default_rng(7)
    for trial in range(300):
        size = int(rng.integers(2, 60))
        levels = int(rng.integers(2, 12)) if trial % 2 else 10_000  # half with many ties
        scores = rng.integers(0, levels, size) / levels
        known = rng.random(size) < rng.uniform(0.1, 0.9)
        if known.all() or not known.any():
            known[0] = not known[0]
        ours = equal_error(scores, known)
        assert ours is not None
        eer, threshold, f1 = kuq_recipe(sklearn_metrics, scores, known)
        assert abs(ours.eer - eer) <= 1e-12 and abs(ours.f1 - f1) <= 1e-12
        assert ours.threshold == threshold
        reference = sklearn_metrics.roc_curve(known.astype(int), scores)
        for mine, theirs in zip(roc_curve(scores, known), reference, strict=True):
            np.testing.assert_allclose(mine, theirs, rtol=0, atol=1e-12)
