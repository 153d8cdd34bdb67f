"""The `Evaluate` step of a build: the configured model on a built split, scored.

The answerer is `[evaluate.<backend>]`'s, refusals are read with `[evaluate]`'s rules and the
build's own embedder (`[embedder]`), and the fingerprints come from the build plan, so that a
changed answerer redoes the predictions while a changed threshold only rescores them.
"""

from __future__ import annotations

from typing import Any

from tipqa.components import make_embedder
from tipqa.config import Config
from tipqa.evaluate.answerers import ANSWERERS
from tipqa.evaluate.pipeline import evaluate_model
from tipqa.evaluate.refusal import RefusalDetector
from tipqa.layout import EvaluationLayout
from tipqa.plan import Plan


def evaluation_layout(config: Config, backend: str, split: str) -> EvaluationLayout:
    """Where the evaluation of the configured `backend` model on `split` goes."""
    model = str(getattr(config.answerer(backend).settings, "model", "model"))
    return config.layout().evaluation(backend, model, split)


def run_evaluation(config: Config, plan: Plan, backend: str, split: str) -> dict[str, Any]:
    """Answer the split's questions with the configured model, then score the answers."""
    layout = config.layout()
    choice = config.answerer(backend)
    refusal = config.evaluate.refusal()
    embedder = make_embedder(config.embedder) if refusal.embedding else None
    answerer = ANSWERERS.create(backend, choice.settings)
    try:
        return evaluate_model(
            layout.splits,
            split,
            answerer,
            RefusalDetector(refusal, embedder),
            config.evaluate.scoring(),
            evaluation_layout(config, backend, split),
            cache_path=layout.llm_cache,
            predictions_record=plan.predictions(backend, split),
            record=plan.evaluate(backend, split),
        )
    finally:
        answerer.close()
