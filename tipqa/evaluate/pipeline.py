"""Evaluate a real model on a built split: make its predictions, then score them.

Writes, under the output folder, `predictions.jsonl` (with `.stats.json`; resumable, see
`tipqa.evaluate.predict`), then the scorer's `scored.jsonl`, figures, `report.md` and, last,
`scores.json`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tipqa.evaluate.answerers.base import Answerer
from tipqa.evaluate.gold import load_gold
from tipqa.evaluate.predict import make_predictions
from tipqa.evaluate.refusal import RefusalDetector
from tipqa.evaluate.score import ScoringSettings, score_file, write_evaluation
from tipqa.llm.cache import LLMCache

PREDICTIONS = "predictions.jsonl"
SCORES = "scores.json"


def evaluate_model(
    gold_source: str | os.PathLike[str],
    split: str,
    answerer: Answerer,
    detector: RefusalDetector,
    scoring: ScoringSettings,
    out: str | os.PathLike[str],
    *,
    cache_path: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """Answer every question of the split, score the answers, write it all under `out`."""
    gold = load_gold(gold_source, split)
    folder = Path(out)
    predictions = folder / PREDICTIONS
    cache = LLMCache(cache_path) if cache_path is not None else None
    try:
        make_predictions(gold, answerer, predictions, cache=cache)
    finally:
        if cache is not None:
            cache.close()
    result, scored = score_file(gold, predictions, detector, scoring)
    result["model"] = {
        "backend": answerer.backend,
        "model": answerer.model,
        "prompt": answerer.template.name,
        "decoding": answerer.decoding(),
    }
    write_evaluation(result, scored, folder)
    return result
