"""Temperature scaling of a confidence: one scalar T fitted on held-out questions (Guo et al.).

A confidence p in [0, 1] is read as the sigmoid of a logit z = log(p / (1 - p)); the scaled
confidence is sigmoid(z / T). T is the value that minimises the negative log-likelihood of
correctness on the fitting set (the validation split), found by golden-section search on log T
in [1e-2, 1e2]: the NLL of one scalar is unimodal in log T for these data (a flat NLL, when
every logit is 0, gives T = 1). Confidences of exactly 0 or 1 are clipped to `CLIP` and 1 -
`CLIP` so that their logits are finite. T > 1 softens an overconfident score, T < 1 sharpens.
"""

from __future__ import annotations

import math

import numpy as np

CLIP = 1e-6
LOG_T_RANGE = (math.log(1e-2), math.log(1e2))
TOLERANCE = 1e-7


def logits(confidence: np.ndarray) -> np.ndarray:
    """The logit of each confidence (clipped to [CLIP, 1 - CLIP] first)."""
    p = np.clip(np.asarray(confidence, dtype=float), CLIP, 1 - CLIP)
    return np.log(p) - np.log1p(-p)


def scale(confidence: np.ndarray, temperature: float) -> np.ndarray:
    """The confidences with their logits divided by `temperature`."""
    return 0.5 * (1.0 + np.tanh(logits(confidence) / (2.0 * temperature)))


def nll(z: np.ndarray, correct: np.ndarray, temperature: float) -> float:
    """Mean negative log-likelihood of `correct` under sigmoid(z / temperature)."""
    scaled = z / temperature
    # log(1 + exp(-s)) for the correct, log(1 + exp(s)) for the wrong, computed stably
    signed = np.where(correct, -scaled, scaled)
    return float(np.mean(np.logaddexp(0.0, signed)))


def fit_temperature(confidence: np.ndarray, correct: np.ndarray) -> float | None:
    """The T minimising the NLL of `correct` (None without both a correct and a wrong one)."""
    correct = np.asarray(correct, dtype=bool)
    if len(correct) == 0 or correct.all() or not correct.any():
        return None
    z = logits(confidence)
    if not np.any(z):
        return 1.0
    low, high = LOG_T_RANGE
    ratio = (math.sqrt(5) - 1) / 2
    a, b = high - ratio * (high - low), low + ratio * (high - low)
    fa, fb = nll(z, correct, math.exp(a)), nll(z, correct, math.exp(b))
    while high - low > TOLERANCE:
        if fa <= fb:
            high, b, fb = b, a, fa
            a = high - ratio * (high - low)
            fa = nll(z, correct, math.exp(a))
        else:
            low, a, fa = a, b, fb
            b = low + ratio * (high - low)
            fb = nll(z, correct, math.exp(b))
    return math.exp((low + high) / 2)
