"""Confidence beyond the sequence probability: sampled-answer agreement, semantic entropy, P(True).

The sequence probability of a free-form answer splits its mass over paraphrases ("Paris", "It
is Paris"); the measures here do not:

- **agreement**: of n answers sampled at `sample_temperature`, the share in the cluster of the
  greedy answer (the prediction). Answers are clustered by an answer equivalence, by default
  tipqa's own (`normalized`: equal TriviaQA normal forms, the alias match of the scorer); an
  NLI equivalence (bidirectional entailment, as Kuhn et al.'s semantic entropy uses) can be
  registered in `ANSWER_EQUIVALENCE` under another name.
- **semantic entropy**: the entropy (natural log) of the share of the samples in each cluster,
  the discrete variant of Farquhar et al. (no sequence probabilities needed). As a confidence
  it is read as 1 - H / log(n) (1: all samples agree; 0: all differ), a monotone map whose ECE
  is that of a score, not of a probability.
- **P(True)** (Kadavath et al.): the model is shown the question and its own greedy answer and
  asked whether the answer is correct; the confidence is P(yes) / (P(yes) + P(no)) read from
  the log-probabilities of the reply's first answer token (`tipqa.llm.chat.p_yes`).

Each has its AUROC of correctness (does the confidence rank right answers above wrong ones),
its AUROC answerable-vs-unanswerable (KUQ's separation), ECE and reliability bins; with
`temperature_scaling`, each probability is also scaled by a temperature fitted on the
validation split (`tipqa.evaluate.temperature`) and its test ECE given before and after.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from tipqa.core.errors import ConfigError
from tipqa.core.registry import Registry
from tipqa.core.settings import Settings, setting
from tipqa.evaluate.calibration import (
    Scheme,
    auroc,
    expected_calibration_error,
    reliability_bins,
)
from tipqa.evaluate.matching import normalize_answer
from tipqa.evaluate.temperature import fit_temperature, scale

METHODS: tuple[str, ...] = ("sequence_probability", "agreement", "semantic_entropy", "p_true")
PROBABILITIES: tuple[str, ...] = ("sequence_probability", "agreement", "p_true")
"""The methods whose values are probabilities of being correct (temperature-scaled)."""


@dataclass(frozen=True)
class ConfidenceSettings(Settings):
    """Sampled answers, P(True), and temperature scaling of the confidences."""

    samples: int = setting(0, doc="answers sampled per question for agreement (0: none)")
    sample_temperature: float = setting(1.0, doc="temperature of the sampled answers")
    sample_max_tokens: int = setting(64, doc="tokens of a sampled answer at most")
    equivalence: str = setting("normalized", doc="how sampled answers are clustered")
    p_true: bool = setting(False, doc="ask the model whether its answer is true (P(True))")
    temperature_scaling: bool = setting(
        False, doc="fit a temperature per confidence on the validation split, apply to test"
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.samples < 0 or self.samples == 1:
            raise ConfigError(f"samples must be 0 (none) or at least 2, got {self.samples}")
        if self.sample_temperature <= 0:
            raise ConfigError(f"sample_temperature must be above 0, got {self.sample_temperature}")
        if self.sample_max_tokens < 1:
            raise ConfigError(f"sample_max_tokens must be >= 1, got {self.sample_max_tokens}")
        if self.equivalence not in ANSWER_EQUIVALENCE.names:
            known = ", ".join(ANSWER_EQUIVALENCE.names)
            raise ConfigError(f"equivalence {self.equivalence!r} is not one of {known}")

    @property
    def active(self) -> bool:
        """True when any measure beyond the sequence probability is asked for."""
        return bool(self.samples or self.p_true)


class Equivalence(Protocol):
    """Clusters answers: equal ids for answers that say the same."""

    def clusters(self, answers: Sequence[str]) -> list[int]:
        """One cluster id per answer, in order (ids count up from 0 by first appearance)."""
        ...


@dataclass(frozen=True)
class EquivalenceSettings(Settings):
    """An answer equivalence's settings (the normalised match has none)."""


class NormalizedMatch:
    """Answers are equivalent when their TriviaQA normal forms are equal (the alias match)."""

    def __init__(self, settings: EquivalenceSettings | None = None) -> None:
        self.settings = settings or EquivalenceSettings()

    def clusters(self, answers: Sequence[str]) -> list[int]:
        """Cluster ids by normal form, in order of first appearance."""
        ids: dict[str, int] = {}
        return [ids.setdefault(normalize_answer(a), len(ids)) for a in answers]


ANSWER_EQUIVALENCE: Registry[Equivalence] = Registry("answer equivalence")
ANSWER_EQUIVALENCE.add(
    "normalized",
    "tipqa.evaluate.confidence:NormalizedMatch",
    settings="tipqa.evaluate.confidence:EquivalenceSettings",
)


def agreement(answer: str, samples: Sequence[str], equivalence: Equivalence) -> float | None:
    """The share of `samples` equivalent to `answer` (None without samples)."""
    if not samples:
        return None
    ids = equivalence.clusters([answer, *samples])
    return sum(1 for cluster in ids[1:] if cluster == ids[0]) / len(samples)


def semantic_entropy(samples: Sequence[str], equivalence: Equivalence) -> float | None:
    """The entropy (nats) of the samples' cluster shares (None without samples)."""
    if not samples:
        return None
    sizes = Counter(equivalence.clusters(samples)).values()
    n = len(samples)
    return -math.fsum(size / n * math.log(size / n) for size in sizes)


def entropy_confidence(entropy: float, n: int) -> float:
    """1 - H / log(n): 1 when every sample agrees, 0 when all differ (n >= 2)."""
    return 1.0 - entropy / math.log(n)


def sample_confidences(
    answer: str, samples: Sequence[str], equivalence: Equivalence
) -> dict[str, float | None]:
    """Agreement, semantic entropy and its confidence of one question's samples."""
    entropy = semantic_entropy(samples, equivalence)
    return {
        "agreement": agreement(answer, samples, equivalence),
        "semantic_entropy": entropy,
        "semantic_entropy_confidence": (
            None if entropy is None else entropy_confidence(entropy, len(samples))
        ),
    }


def measures(
    confidence: np.ndarray,
    correct: np.ndarray,
    known: np.ndarray,
    bins: int,
) -> dict[str, Any]:
    """AUROC of correctness and of known-vs-unknown, ECE (both binnings), reliability bins."""
    schemes: tuple[Scheme, ...] = ("width", "mass")
    return {
        "questions": len(confidence),
        "auroc_correct": auroc(confidence, correct.astype(bool)),
        "auroc_known_unknown": auroc(confidence, known),
        **{
            f"ece_equal_{scheme}": expected_calibration_error(confidence, correct, bins, scheme)
            for scheme in schemes
        },
        "reliability": [vars(b) for b in reliability_bins(confidence, correct, bins, "width")],
    }


@dataclass(frozen=True)
class RatedAnswer:
    """One question's confidences by method, with its correctness and whether it is known."""

    id: str
    correct: bool
    known: bool
    values: Mapping[str, float | None]


def _arrays(rated: Sequence[RatedAnswer], method: str) -> tuple[np.ndarray, ...]:
    kept = [r for r in rated if r.values.get(method) is not None]
    return (
        np.array([r.values[method] for r in kept], dtype=float),
        np.array([r.correct for r in kept], dtype=float),
        np.array([r.known for r in kept], dtype=bool),
    )


def method_measures(
    rated: Sequence[RatedAnswer],
    bins: int,
    fitted_on: Sequence[RatedAnswer] | None = None,
) -> dict[str, Any]:
    """Every method's measures side by side; with `fitted_on`, the temperature-scaled ones too.

    A method's value is its confidence (semantic entropy through `entropy_confidence`).
    """
    out: dict[str, Any] = {}
    for method in METHODS:
        confidence, correct, known = _arrays(rated, method)
        if not len(confidence):
            continue
        block = measures(confidence, correct, known, bins)
        if fitted_on is not None and method in PROBABILITIES:
            fit_conf, fit_correct, _ = _arrays(fitted_on, method)
            temperature = fit_temperature(fit_conf, fit_correct.astype(bool))
            block["temperature"] = temperature
            block["fitted_on_questions"] = len(fit_conf)
            if temperature is not None:
                scaled = scale(confidence, temperature)
                block["ece_equal_width_scaled"] = expected_calibration_error(
                    scaled, correct, bins, "width"
                )
                block["ece_equal_mass_scaled"] = expected_calibration_error(
                    scaled, correct, bins, "mass"
                )
                block["reliability_scaled"] = [
                    vars(b) for b in reliability_bins(scaled, correct, bins, "width")
                ]
        out[method] = block
    return out
