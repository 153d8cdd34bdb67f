"""Confidence measures: calibration (ECE, Brier) and known-vs-unknown separation (AUROC, EER).

`confidence` is read as the probability that the response is a correct answer; the target of
ECE and Brier is therefore `correct` (an exact match; a refusal is never correct). AUROC, the
equal error rate and the F1 at its threshold measure how well confidence separates answerable
(known, the positive class) from unanswerable questions, the known/unknown classification of
KUQ, computed by KUQ's recipe (`equal_error`: scikit-learn's ROC curve with its defaults, the
point nearest FNR = FPR); `interpolated_eer` is the crossing of the ROC polyline instead.

Bins. Equal-width: [0, 0.1), [0.1, 0.2), ..., [0.9, 1.0] (1.0 in the last). Equal-mass: the
confidences sorted and cut into bins of (nearly) equal counts, ties kept together in the lower
bin, so the bins do not depend on the order of the input. ECE = sum over bins of
(bin count / total) * |accuracy in the bin - mean confidence in the bin|.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

Scheme = Literal["width", "mass"]


@dataclass(frozen=True)
class Bin:
    """One reliability bin: its range, size, mean confidence and accuracy (None when empty)."""

    low: float
    high: float
    count: int
    confidence: float | None
    accuracy: float | None


def bin_index(confidence: np.ndarray, bins: int, scheme: Scheme) -> np.ndarray:
    """Each confidence's bin under the scheme (see the module docstring)."""
    confidence = np.asarray(confidence, dtype=float)
    if scheme == "width":
        return np.minimum((confidence * bins).astype(np.int64), bins - 1)
    total = len(confidence)
    values, inverse = np.unique(confidence, return_inverse=True)
    first_rank = np.concatenate([[0], np.cumsum(np.bincount(inverse, minlength=len(values)))])
    return (first_rank[inverse] * bins) // max(total, 1)


def reliability_bins(
    confidence: np.ndarray, correct: np.ndarray, bins: int = 10, scheme: Scheme = "width"
) -> list[Bin]:
    """The reliability bins: all `bins` of them for equal width, the non-empty ones for mass."""
    confidence = np.asarray(confidence, dtype=float)
    correct = np.asarray(correct, dtype=float)
    index = bin_index(confidence, bins, scheme)
    out = []
    for b in range(bins):
        members = index == b
        count = int(members.sum())
        if scheme == "width":
            low, high = b / bins, (b + 1) / bins
        elif count:
            low, high = float(confidence[members].min()), float(confidence[members].max())
        else:
            continue
        mean_conf = float(confidence[members].mean()) if count else None
        accuracy = float(correct[members].mean()) if count else None
        out.append(Bin(low, high, count, mean_conf, accuracy))
    return out


def expected_calibration_error(
    confidence: np.ndarray, correct: np.ndarray, bins: int = 10, scheme: Scheme = "width"
) -> float | None:
    """ECE under the scheme; None without any confidence."""
    confidence = np.asarray(confidence, dtype=float)
    correct = np.asarray(correct, dtype=float)
    total = len(confidence)
    if total == 0:
        return None
    index = bin_index(confidence, bins, scheme)
    conf_sum = np.bincount(index, weights=confidence, minlength=bins)
    hits = np.bincount(index, weights=correct, minlength=bins)
    return float(np.abs(hits - conf_sum).sum() / total)


def brier_score(confidence: np.ndarray, correct: np.ndarray) -> float | None:
    """Mean squared difference of confidence and correctness; None without any confidence."""
    confidence = np.asarray(confidence, dtype=float)
    if len(confidence) == 0:
        return None
    return float(np.mean((confidence - np.asarray(correct, dtype=float)) ** 2))


def average_ranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks of the values, ties sharing their mean rank."""
    _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)
    mean_rank = ends - (counts - 1) / 2
    return mean_rank[inverse]


def auroc(scores: np.ndarray, positive: np.ndarray) -> float | None:
    """Area under the ROC curve (a tie between a positive and a negative counts one half)."""
    scores = np.asarray(scores, dtype=float)
    positive = np.asarray(positive, dtype=bool)
    n_pos, n_neg = int(positive.sum()), int((~positive).sum())
    if n_pos == 0 or n_neg == 0:
        return None
    rank_sum = average_ranks(scores)[positive].sum()
    return float((rank_sum - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def roc_points(scores: np.ndarray, positive: np.ndarray) -> list[tuple[float, float, float]]:
    """(threshold, FPR, TPR) for "positive when score >= threshold", thresholds descending.

    The first point has threshold +inf (nothing predicted positive).
    """
    scores = np.asarray(scores, dtype=float)
    positive = np.asarray(positive, dtype=bool)
    n_pos, n_neg = max(int(positive.sum()), 1), max(int((~positive).sum()), 1)
    points = [(float("inf"), 0.0, 0.0)]
    for threshold in np.unique(scores)[::-1]:
        predicted = scores >= threshold
        tpr = float((predicted & positive).sum() / n_pos)
        fpr = float((predicted & ~positive).sum() / n_neg)
        points.append((float(threshold), fpr, tpr))
    return points


def roc_curve(scores: np.ndarray, positive: np.ndarray) -> tuple[np.ndarray, ...]:
    """(FPR, TPR, thresholds) as scikit-learn's `roc_curve` gives them with its defaults.

    Thresholds are the distinct scores, descending, after a first +inf (nothing positive);
    points that would not show on the plotted curve (collinear with their neighbours: both
    counts change at a constant rate across them) are dropped, as `drop_intermediate=True`
    does. A question is positive at a threshold when its score is at or above it.
    """
    scores = np.asarray(scores, dtype=float)
    positive = np.asarray(positive, dtype=bool)
    order = np.argsort(-scores, kind="mergesort")
    ranked, hits = scores[order], positive[order]
    last_of_run = np.r_[np.flatnonzero(np.diff(ranked)), len(ranked) - 1]
    tps = np.cumsum(hits)[last_of_run].astype(float)
    fps = (last_of_run + 1) - tps
    thresholds = ranked[last_of_run]
    if len(tps) > 2:
        kept = np.r_[True, (np.diff(fps, 2) != 0) | (np.diff(tps, 2) != 0), True]
        tps, fps, thresholds = tps[kept], fps[kept], thresholds[kept]
    tps, fps = np.r_[0.0, tps], np.r_[0.0, fps]
    thresholds = np.r_[np.inf, thresholds]
    with np.errstate(invalid="ignore", divide="ignore"):
        fpr = fps / fps[-1] if fps[-1] > 0 else np.full_like(fps, np.nan)
        tpr = tps / tps[-1] if tps[-1] > 0 else np.full_like(tps, np.nan)
    return fpr, tpr, thresholds


@dataclass(frozen=True)
class EqualError:
    """KUQ's equal error rate, the threshold of its ROC point, and the Known class's F1 there."""

    eer: float
    threshold: float
    f1: float


def _f1(tp: int, fp: int, fn: int) -> float:
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def equal_error(scores: np.ndarray, positive: np.ndarray) -> EqualError | None:
    """KUQ's recipe: the ROC point (`roc_curve`) with the smallest |FNR - FPR|, the first on a
    tie; its FPR is the EER; questions scored at or above its threshold are Known, and the F1
    is that of the Known class (the positives). None when one class is absent.
    """
    scores = np.asarray(scores, dtype=float)
    positive = np.asarray(positive, dtype=bool)
    if positive.all() or not positive.any():
        return None
    fpr, tpr, thresholds = roc_curve(scores, positive)
    index = int(np.nanargmin(np.abs((1 - tpr) - fpr)))
    threshold = float(thresholds[index])
    known = scores >= threshold
    tp, fp = int((known & positive).sum()), int((known & ~positive).sum())
    fn = int((~known & positive).sum())
    return EqualError(float(fpr[index]), threshold, _f1(tp, fp, fn))


def interpolated_eer(scores: np.ndarray, positive: np.ndarray) -> float | None:
    """The FPR where FNR = FPR on the ROC polyline, linear between the two points around it.

    Not KUQ's figure (`equal_error` is): between ROC points this is the rate a randomised
    threshold would reach. None when one class is absent.
    """
    scores = np.asarray(scores, dtype=float)
    positive = np.asarray(positive, dtype=bool)
    if positive.all() or not positive.any():
        return None
    points = roc_points(scores, positive)
    gaps = [(1 - tpr) - fpr for _, fpr, tpr in points]
    crossing = next(i for i, gap in enumerate(gaps) if gap <= 0)
    if gaps[crossing] == 0 or crossing == 0:
        return points[crossing][1]
    before, after = gaps[crossing - 1], gaps[crossing]
    share = before / (before - after)
    fpr_before, fpr_after = points[crossing - 1][1], points[crossing][1]
    return float(fpr_before + share * (fpr_after - fpr_before))
