"""Evaluate a real model on a built split: make its predictions, then score them.

Writes, under the evaluation folder (`tipqa.core.layout.EvaluationLayout`), the predictions and
their stats (resumable, see `tipqa.evaluate.predict`), then the scorer's `scored.jsonl`,
figures, `report.md`, `scores.json` and, last, `evaluate.stats.json`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from tipqa.core.errors import ConfigError
from tipqa.core.fingerprint import StepRecord
from tipqa.core.layout import EvaluationLayout
from tipqa.core.stats import StepStats
from tipqa.evaluate.confidence import ConfidenceSettings, RatedAnswer, method_measures
from tipqa.evaluate.gold import load_gold
from tipqa.evaluate.predict import make_predictions
from tipqa.evaluate.refusal import RefusalDetector
from tipqa.evaluate.sampling import rate, write_confidences
from tipqa.evaluate.score import ScoringSettings, score_file, write_evaluation
from tipqa.llm.answerers.base import Answerer
from tipqa.llm.answerers.llm import LLMAnswerer


def evaluate_model(
    gold_source: str | os.PathLike[str],
    split: str,
    answerer: Answerer,
    detector: RefusalDetector,
    scoring: ScoringSettings,
    folder: EvaluationLayout,
    *,
    predictions_record: StepRecord | None = None,
    record: StepRecord | None = None,
    confidence: ConfidenceSettings | None = None,
    fit_on: Sequence[RatedAnswer] | None = None,
) -> dict[str, Any]:
    """Answer every question of the split, score the answers, write it all under `folder`.

    The answerer's answers, samples and P(True) replies go through its LLM cache, when it was
    made with one (`tipqa.llm.cached_chat`). `predictions_record` and `record` are the build
    plan's records of the predictions and of the evaluation (their fingerprints go into the stats
    files); without them the predictions' fingerprint is made from what the answerer says of
    itself. `confidence` asks for sampled answers and P(True) (`confidence.jsonl`, the methods
    side by side in `scores.json`); with `fit_on` (another split's confidences) each probability
    is also temperature-scaled.
    """
    confidence = confidence or ConfidenceSettings()
    if confidence.active and not isinstance(answerer, LLMAnswerer):
        raise ConfigError("sampled answers and P(True) need an LLM answerer")
    gold = load_gold(gold_source, split)
    make_predictions(gold, answerer, folder, record=predictions_record)
    result, scored = score_file(gold, folder.predictions, detector, scoring)
    stats = StepStats("confidence")
    if isinstance(answerer, LLMAnswerer):
        questions = [q.question for q in gold.questions]
        rated, rows = rate(scored, questions, answerer, confidence, scoring.seed, stats)
    else:
        rated = [
            RatedAnswer(
                s.id, s.correct, s.label == "answerable", {"sequence_probability": s.confidence}
            )
            for s in scored
        ]
        rows = [{"id": r.id, "correct": r.correct, "known": r.known, **r.values} for r in rated]
    write_confidences(folder.confidence, rows)
    result["confidence_methods"] = method_measures(rated, scoring.bins, fit_on)
    result["confidence_settings"] = confidence.to_dict()
    result["confidence_counts"] = {"counts": dict(stats.counts), "errors": dict(stats.errors)}
    result["model"] = {
        "backend": answerer.backend,
        "model": answerer.model,
        "prompt": answerer.template.name,
        "decoding": answerer.decoding(),
    }
    write_evaluation(result, scored, folder.root, record=record)
    return result
