"""Seeded percentile bootstrap intervals for EM-F1, PM-F1 and ECE over question resamples."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from tipqa.evaluate.calibration import expected_calibration_error
from tipqa.evaluate.metrics import CELLS, Scored, cell_vector, honesty_scores

CHUNK = 200


def one_hot_cells(cells: np.ndarray) -> np.ndarray:
    """(questions, 5) indicator matrix of each question's cell."""
    return np.eye(len(CELLS), dtype=np.int64)[cells]


def interval(draws: np.ndarray) -> list[float] | None:
    """The 2.5th and 97.5th percentiles of the draws (None without draws)."""
    if len(draws) == 0:
        return None
    low, high = np.percentile(draws, [2.5, 97.5])
    return [float(low), float(high)]


def bootstrap_intervals(
    scored: Sequence[Scored], resamples: int, seed: int, bins: int = 10
) -> dict[str, dict[str, Any]]:
    """{metric: {"value", "ci95", "resamples"}} for em_f1, pm_f1 and (with confidences) ECE.

    Questions are drawn with replacement `resamples` times from one seeded generator; ECE is
    computed on the drawn questions that carry a confidence (equal-width bins).
    """
    rng = np.random.default_rng(seed)
    total = len(scored)
    codes = cell_vector(scored)
    cells = one_hot_cells(codes)
    pm = np.array([item.pm for item in scored], dtype=float)
    has_conf = np.array([item.confidence is not None for item in scored], dtype=bool)
    conf = np.array([item.confidence or 0.0 for item in scored], dtype=float)
    correct = np.array([item.correct for item in scored], dtype=float)
    draws: dict[str, list[float]] = {"em_f1": [], "pm_f1": [], "ece": []}
    done = 0
    while total and done < resamples:
        size = min(CHUNK, resamples - done)
        picks = rng.integers(0, total, size=(size, total))
        drawn = codes[picks]
        counts = np.stack([(drawn == cell).sum(axis=1) for cell in range(len(CELLS))], axis=1)
        draws["em_f1"].extend(np.atleast_1d(honesty_scores(counts)[2]))
        draws["pm_f1"].extend(pm[picks].mean(axis=1))
        if has_conf.any():
            for row in picks:
                row = row[has_conf[row]]
                value = expected_calibration_error(conf[row], correct[row], bins)
                if value is not None:
                    draws["ece"].append(value)
        done += size
    values: dict[str, Any] = {
        "em_f1": honesty_scores(cells.sum(axis=0))[2] if total else 0.0,
        "pm_f1": float(pm.mean()) if total else 0.0,
        "ece": expected_calibration_error(conf[has_conf], correct[has_conf], bins),
    }
    out = {}
    for name, value in values.items():
        if name == "ece" and value is None:
            continue
        got = np.array(draws[name], dtype=float)
        out[name] = {"value": value, "ci95": interval(got), "resamples": len(got)}
    return out
