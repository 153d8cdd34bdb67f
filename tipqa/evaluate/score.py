"""Score one system's predictions on a gold split, and compare several systems.

`score_predictions` reads every response (refusal detection), scores every question, and gathers
the metrics, the confidence measures, bootstrap intervals and breakdowns into one JSON-ready
dict; `write_evaluation` writes it with the per-question outcomes, the Markdown report and the
figures. `compare_systems` scores several prediction files on the same gold and runs the paired
randomization test between each pair.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from tipqa.core.errors import ConfigError
from tipqa.core.fingerprint import StepRecord
from tipqa.core.jsonl import atomic_open, write_json
from tipqa.core.layout import EvaluationLayout
from tipqa.core.settings import Settings, setting
from tipqa.core.stats import StepStats
from tipqa.core.steps import Step
from tipqa.evaluate.bootstrap import bootstrap_intervals
from tipqa.evaluate.breakdown import by_matches, by_stage
from tipqa.evaluate.calibration import (
    Bin,
    Scheme,
    auroc,
    brier_score,
    equal_error,
    expected_calibration_error,
    interpolated_eer,
    reliability_bins,
)
from tipqa.evaluate.gold import GoldSet
from tipqa.evaluate.metrics import Scored, score_question, summary
from tipqa.evaluate.predictions import PredictionSet, read_predictions
from tipqa.evaluate.refusal import Reading, RefusalDetector
from tipqa.evaluate.significance import compare_pair
from tipqa.evaluate.uabench import score_responses

SCHEMES: tuple[Scheme, ...] = ("width", "mass")
DEFAULT_TRIALS = 10_000
SCORER_VERSION = 2
"""Raised whenever the same predictions and settings would score differently: it is in the
`evaluate` fingerprint, so a finished evaluation is scored again."""


@dataclass(frozen=True)
class ScoringSettings(Settings):
    """Bins of the calibration measures, and the bootstrap."""

    bins: int = setting(10, doc="calibration bins (equal width, and equal mass)")
    min_bin_count: int = setting(30, doc="bins with fewer predictions are marked")
    bootstrap: int = setting(1000, doc="bootstrap resamples of the 95% intervals (0: none)")
    seed: int = setting(0, doc="seed of the bootstrap (and of the sampled answers)")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.bins < 1:
            raise ConfigError(f"bins must be at least 1, got {self.bins}")
        if self.bootstrap < 0:
            raise ConfigError(f"bootstrap must be 0 or more, got {self.bootstrap}")


def score_all(gold: GoldSet, predictions: PredictionSet, detector: RefusalDetector) -> list[Scored]:
    """Every gold question scored, in gold order; a missing prediction is a refusal."""
    present = [q for q in gold.questions if q.id in predictions.by_id]
    entries = [predictions.by_id[q.id] for q in present]
    readings = detector.read([p.prediction for p in entries], [p.refused for p in entries])
    by_id = {q.id: (r, p.confidence) for q, r, p in zip(present, readings, entries, strict=True)}
    missing = (Reading("", True, "missing"), None)
    return [score_question(q, *by_id.get(q.id, missing)) for q in gold.questions]


def confidence_measures(scored: Sequence[Scored], settings: ScoringSettings) -> dict[str, Any]:
    """ECE (both binnings), Brier, AUROC, KUQ's EER and F1 on the questions with a confidence."""
    rated = [item for item in scored if item.confidence is not None]
    out: dict[str, Any] = {"predictions_with_confidence": len(rated)}
    if not rated:
        return out
    confidence = np.array([item.confidence for item in rated], dtype=float)
    correct = np.array([item.correct for item in rated], dtype=float)
    known = np.array([item.label == "answerable" for item in rated], dtype=bool)
    for scheme in SCHEMES:
        out[f"ece_equal_{scheme}"] = expected_calibration_error(
            confidence, correct, settings.bins, scheme
        )
    out["brier"] = brier_score(confidence, correct)
    out["auroc_known_unknown"] = auroc(confidence, known)
    eer = equal_error(confidence, known)
    out["eer"] = None if eer is None else eer.eer
    out["f1"] = None if eer is None else eer.f1
    out["eer_threshold"] = None if eer is None else eer.threshold
    out["eer_interpolated"] = interpolated_eer(confidence, known)
    out["reliability"] = {
        scheme: [vars(b) for b in reliability_bins(confidence, correct, settings.bins, scheme)]
        for scheme in SCHEMES
    }
    return out


def evaluate(
    gold: GoldSet,
    predictions: PredictionSet,
    detector: RefusalDetector,
    settings: ScoringSettings,
) -> tuple[dict[str, Any], list[Scored]]:
    """The evaluation (JSON-ready) of one system, and its per-question outcomes."""
    scored = score_all(gold, predictions, detector)
    result = {
        "gold": {
            "source": gold.source,
            "split": gold.split,
            "schema_version": gold.schema_version,
            "questions": len(gold.questions),
        },
        "predictions": {
            "path": predictions.path,
            "given": len(predictions.by_id),
            "missing_scored_as_refusals": len(predictions.missing),
        },
        "settings": {"refusal": detector.settings.to_dict(), "scoring": settings.to_dict()},
        "metrics": summary(scored),
        "intervals": bootstrap_intervals(scored, settings.bootstrap, settings.seed, settings.bins),
        "confidence": confidence_measures(scored, settings),
        "uabench": score_responses(
            gold,
            {qid: p.prediction for qid, p in predictions.by_id.items()},
            predictions.path,
        ),
        "breakdowns": {"stage": by_stage(scored), "matches": by_matches(scored)},
        "warnings": split_warnings(gold),
    }
    return result, scored


def split_warnings(gold: GoldSet) -> list[str]:
    """What makes the scores of this split say little: a label with no question at all."""
    answerable = sum(question.label == "answerable" for question in gold.questions)
    where = f"split {gold.split!r} of {gold.source}"
    if not answerable:
        return [
            f"{where} has no answerable question: EM-F1, PM-F1, precision, recall and the "
            "accuracy are 0 whatever the model answers (a build with the offline rules judge "
            "finds little evidence in real text)"
        ]
    if answerable == len(gold.questions):
        return [
            f"{where} has no unanswerable question: the refusal rate on unanswerable questions "
            "is undefined and a model that never refuses loses nothing"
        ]
    return []


def score_file(
    gold: GoldSet,
    path: str | os.PathLike[str],
    detector: RefusalDetector,
    settings: ScoringSettings,
    *,
    allow_missing: bool = False,
) -> tuple[dict[str, Any], list[Scored]]:
    """Read a predictions file (strictly) and evaluate it."""
    predictions = read_predictions(path, gold.ids, allow_missing=allow_missing)
    return evaluate(gold, predictions, detector, settings)


def write_evaluation(
    result: dict[str, Any],
    scored: Sequence[Scored],
    out: str | os.PathLike[str],
    *,
    record: StepRecord | None = None,
) -> StepStats:
    """Write `scored.jsonl`, the figures, `report.md`, `scores.json`, then the stats file.

    The stats file (with `record`'s provenance: the `Evaluate` step's fingerprint) is removed
    first and written last, so that it never vouches for files of other settings.
    """
    from tipqa.evaluate.figures import breakdown_png, reliability_png
    from tipqa.evaluate.report import render_report

    folder = EvaluationLayout(Path(out))
    provenance = record.provenance() if record is not None else None
    info = {"gold": result["gold"], **result["predictions"]}
    stats = StepStats(Step.EVALUATE, info=info, provenance=provenance)
    folder.stats.unlink(missing_ok=True)
    with atomic_open(folder.scored) as handle:
        for item in scored:
            handle.write(orjson.dumps(vars(item)) + b"\n")
    figures = []
    reliability = result["confidence"].get("reliability")
    if reliability:
        diagrams: dict[str, Sequence[Bin]] = {
            scheme: [Bin(**b) for b in bins] for scheme, bins in reliability.items()
        }
        minimum = result["settings"]["scoring"]["min_bin_count"]
        reliability_png(folder.figure("reliability"), diagrams, minimum, "Reliability")
        figures.append(folder.figure("reliability").name)
    methods = result.get("confidence_methods") or {}
    if methods:
        panels: dict[str, Sequence[Bin]] = {}
        for method, block in methods.items():
            panels[method] = [Bin(**b) for b in block["reliability"]]
            if block.get("reliability_scaled"):
                panels[f"{method}, temperature-scaled"] = [
                    Bin(**b) for b in block["reliability_scaled"]
                ]
        if len(panels) > 1:  # one panel would repeat reliability.png
            minimum = result["settings"]["scoring"]["min_bin_count"]
            reliability_png(folder.figure("reliability-methods"), panels, minimum, "Confidence")
            figures.append(folder.figure("reliability-methods").name)
    for name, rows, xlabel in (
        ("stage", result["breakdowns"]["stage"], "stage that decided the label"),
        ("matches", result["breakdowns"]["matches"], "documents with all keywords and an alias"),
    ):
        if rows:
            figure = folder.figure(f"breakdown-{name}")
            breakdown_png(figure, rows, xlabel, f"Scores by {name}")
            figures.append(figure.name)
    with atomic_open(folder.report) as handle:
        handle.write(render_report(result, figures).encode())
    write_json(folder.scores, result)
    for cell, count in result["metrics"]["counts"].items():
        stats.add(cell, count)
    stats.add("figures", len(figures))
    stats.write(folder.stats)
    return stats


def compare_systems(
    gold: GoldSet,
    paths: Sequence[str | os.PathLike[str]],
    detector: RefusalDetector,
    settings: ScoringSettings,
    *,
    trials: int = DEFAULT_TRIALS,
    allow_missing: bool = False,
) -> dict[str, Any]:
    """A table of every system's scores and the randomization tests between each pair."""
    if len(paths) < 2:
        raise ConfigError("compare needs at least two prediction files")
    if trials < 1:
        raise ConfigError(f"trials must be at least 1, got {trials}")
    names = system_names(paths)
    systems: dict[str, dict[str, Any]] = {}
    outcomes: dict[str, list[Scored]] = {}
    for name, path in zip(names, paths, strict=True):
        result, scored = score_file(gold, path, detector, settings, allow_missing=allow_missing)
        keys = ("precision", "recall", "em_f1", "pm_f1", "accuracy_answerable")
        row = {key: result["metrics"][key] for key in keys}
        row["refusal_rate_unanswerable"] = result["metrics"]["refusal_rate_unanswerable"]
        row["ece_equal_width"] = result["confidence"].get("ece_equal_width")
        row["path"] = str(path)
        systems[name], outcomes[name] = row, scored
    tests = []
    for first, second in itertools.combinations(names, 2):
        for test in compare_pair(outcomes[first], outcomes[second], trials, settings.seed):
            tests.append({"a": first, "b": second, **vars(test)})
    return {
        "gold": {"source": gold.source, "split": gold.split, "questions": len(gold.questions)},
        "systems": systems,
        "tests": tests,
        "settings": {
            "refusal": detector.settings.to_dict(),
            "scoring": settings.to_dict(),
            "trials": trials,
        },
    }


def system_names(paths: Sequence[str | os.PathLike[str]]) -> list[str]:
    """Short unique names for prediction files: the file stem, or the path where stems clash."""
    stems = [Path(path).stem for path in paths]
    if len(set(stems)) == len(stems):
        return stems
    return [str(path) for path in paths]
