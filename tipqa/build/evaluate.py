"""The Evaluate step: answer a built split with a configured model, then score the answers."""

from __future__ import annotations

from typing import Any

from tipqa.build.components import make_embedder
from tipqa.build.plan import Plan
from tipqa.config import Config
from tipqa.core.layout import EvaluationLayout
from tipqa.evaluate.pipeline import evaluate_model
from tipqa.evaluate.refusal import RefusalDetector
from tipqa.evaluate.sampling import read_rated
from tipqa.llm.answerers import ANSWERERS
from tipqa.llm.settings import LLMSettings

VALIDATION = "validation"
"""The split whose confidences fit the temperatures of `[evaluate] temperature_scaling`."""


def evaluation_layout(config: Config, backend: str, split: str) -> EvaluationLayout:
    """Where the evaluation of the configured `backend` model on `split` goes."""
    settings = config.answerer(backend).settings
    assert isinstance(settings, LLMSettings)
    return config.layout().evaluation(backend, settings.model, split)


def evaluate(config: Config, plan: Plan, backend: str, split: str) -> dict[str, Any]:
    """The Evaluate step: answer a built split with the configured model, then score the answers.

    The answerer is `[evaluate.<backend>]`'s, refusals are read with `[evaluate]`'s rules and the
    build's own embedder, and both fingerprints come from the plan, so that a changed answerer
    redoes the predictions while a changed threshold only rescores them. With
    `temperature_scaling` the validation split is evaluated first (or found done) and its
    confidences fit the temperatures applied to this split's.
    """
    fit_on = None
    if config.evaluate.temperature_scaling and split != VALIDATION:
        evaluate(config, plan, backend, VALIDATION)
        fit_on = read_rated(evaluation_layout(config, backend, VALIDATION).confidence)
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
            confidence=config.evaluate.confidence(),
            fit_on=fit_on,
        )
    finally:
        answerer.close()
