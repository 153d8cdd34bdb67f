"""The Evaluate step: answer a built split with a configured model, then score the answers."""

from __future__ import annotations

from typing import Any

from tipqa.builder.assemble import llm_cache
from tipqa.builder.components import make_answerer, make_embedder
from tipqa.builder.step_inputs import EvaluateInputs
from tipqa.core.errors import ConfigError
from tipqa.core.layout import EvaluationLayout, RunLayout
from tipqa.core.stats import recorded_fingerprint
from tipqa.evaluate.pipeline import evaluate_model
from tipqa.evaluate.refusal import RefusalDetector
from tipqa.evaluate.sampling import read_rated
from tipqa.llm.settings import LLMSettings


def evaluation_layout(inputs: EvaluateInputs, layout: RunLayout) -> EvaluationLayout:
    """Where the evaluation of `inputs` goes: a folder per answerer, model and split."""
    answerer = inputs.predictions.answerer
    if not isinstance(answerer.settings, LLMSettings):
        raise ConfigError(f"answerer {answerer.backend!r} names no model")
    return layout.evaluation(answerer.backend, answerer.settings.model, inputs.predictions.split)


def evaluate(inputs: EvaluateInputs, layout: RunLayout) -> dict[str, Any]:
    """Evaluate: answer the split with the answerer of `inputs`, then score the answers.

    Refusals are read with `[evaluate]`'s rules and the build's own embedder; the predictions'
    and the scores' fingerprints come from the plan, so that a changed answerer redoes the
    predictions while a changed threshold only rescores them. With temperature scaling
    (`fit_on`) the validation split is evaluated first, unless it is done, and its confidences
    fit the temperatures applied to this split's.
    """
    fit_on = None
    if inputs.fit_on is not None:
        validation = evaluation_layout(inputs.fit_on, layout)
        if recorded_fingerprint(validation.stats) != inputs.fit_on.fingerprint:
            evaluate(inputs.fit_on, layout)
        fit_on = read_rated(validation.confidence)
    settings = inputs.evaluate
    refusal = settings.refusal()
    embedder = make_embedder(inputs.embedder) if inputs.embedder is not None else None
    predictions = inputs.predictions
    answerer = make_answerer(predictions.answerer, llm_cache(predictions, layout))
    try:
        return evaluate_model(
            layout.splits,
            predictions.split,
            answerer,
            RefusalDetector(refusal, embedder),
            settings.scoring(),
            evaluation_layout(inputs, layout),
            predictions_record=predictions.record,
            record=inputs.record,
            confidence=settings.confidence(),
            fit_on=fit_on,
        )
    finally:
        answerer.close()
