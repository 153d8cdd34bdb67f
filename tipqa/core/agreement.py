"""Agreement statistics of two raters of yes/no labels: Cohen's kappa and a percentile
bootstrap interval over resampled items (the annotation's agreement with people, and the judge
audit's agreement of two judges, `tipqa.annotation.agreement` and `tipqa.audit.judge_audit`)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

LABELS = ["yes", "no"]
T = TypeVar("T")


def kappa(first: list[str], second: list[str]) -> float | None:
    """Cohen's kappa (scikit-learn); None where it is undefined."""
    from sklearn.metrics import cohen_kappa_score

    if not first:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = cohen_kappa_score(first, second, labels=LABELS)
    return None if np.isnan(value) else float(value)


def bootstrap(
    rated: list[T],
    statistics: dict[str, Callable[[list[T]], float | None]],
    resamples: int,
    seed: int,
) -> dict[str, dict[str, Any]]:
    """Each statistic's value and percentile 95% interval over item resamples (items of any
    kind: rated items here, the judge audit's pairs of labels)."""
    values = {name: fn(rated) for name, fn in statistics.items()}
    draws: dict[str, list[float]] = {name: [] for name in statistics}
    if rated and resamples > 0:
        rng = np.random.default_rng(seed)
        for _ in range(resamples):
            picked = [rated[i] for i in rng.integers(0, len(rated), len(rated))]
            for name, fn in statistics.items():
                value = fn(picked)
                if value is not None:
                    draws[name].append(value)
    out = {}
    for name in statistics:
        got = draws[name]
        ci = (
            [float(v) for v in np.percentile(got, [2.5, 97.5])]
            if got and values[name] is not None
            else None
        )
        out[name] = {
            "value": values[name],
            "ci95": ci,
            "undefined_resamples": resamples - len(got) if rated else 0,
        }
    return out
