"""Evaluate a real model on a built split: make its predictions, then score them.

Writes, under the evaluation folder (`tipqa.layout.EvaluationLayout`), the predictions and
their stats (resumable, see `tipqa.evaluate.predict`), then the scorer's `scored.jsonl`,
figures, `report.md`, `scores.json` and, last, `evaluate.stats.json`.
"""

from __future__ import annotations

import os
from typing import Any

from tipqa.evaluate.answerers.base import Answerer
from tipqa.evaluate.gold import load_gold
from tipqa.evaluate.predict import make_predictions
from tipqa.evaluate.refusal import RefusalDetector
from tipqa.evaluate.score import ScoringSettings, score_file, write_evaluation
from tipqa.fingerprint import StepRecord
from tipqa.layout import EvaluationLayout
from tipqa.llm.cache import LLMCache


def evaluate_model(
    gold_source: str | os.PathLike[str],
    split: str,
    answerer: Answerer,
    detector: RefusalDetector,
    scoring: ScoringSettings,
    folder: EvaluationLayout,
    *,
    cache_path: str | os.PathLike[str] | None = None,
    predictions_record: StepRecord | None = None,
    record: StepRecord | None = None,
) -> dict[str, Any]:
    """Answer every question of the split, score the answers, write it all under `folder`.

    `predictions_record` and `record` are the build plan's records of the predictions and of
    the evaluation (their fingerprints go into the stats files); without them the predictions'
    fingerprint is made from what the answerer says of itself.
    """
    gold = load_gold(gold_source, split)
    cache = LLMCache(cache_path) if cache_path is not None else None
    try:
        make_predictions(gold, answerer, folder, record=predictions_record, cache=cache)
    finally:
        if cache is not None:
            cache.close()
    result, scored = score_file(gold, folder.predictions, detector, scoring)
    result["model"] = {
        "backend": answerer.backend,
        "model": answerer.model,
        "prompt": answerer.template.name,
        "decoding": answerer.decoding(),
    }
    write_evaluation(result, scored, folder.root, record=record)
    return result
