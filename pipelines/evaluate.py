"""Evaluate: `luigi --module pipelines Evaluate --model-backend openai --split test`.

The model is `[evaluate.openai]`'s (an OpenAI-compatible server) or `[evaluate.vllm]`'s (the
offline engine); refusal detection and scoring are `[evaluate]`'s. Writes
`<run>/evaluate/<backend>-<model>/<split>/` (predictions, scores, report, figures); a rerun
after a failure asks only for the questions still unanswered. With `[evaluate]
temperature_scaling` the validation split is evaluated first (its confidences fit the
temperatures).
"""

from __future__ import annotations

from pathlib import Path

import luigi

from pipelines.base import StepTask
from pipelines.publish import MakeSplits
from tipqa.builder.evaluate import evaluate, evaluation_layout
from tipqa.builder.step_inputs import EvaluateInputs
from tipqa.llm.answerers.base import ANSWERERS


class Evaluate(StepTask):
    """Answer a built split's questions with a real model, then score the answers."""

    model_backend = luigi.ChoiceParameter(
        choices=ANSWERERS.names, default="openai", description="the answerer's backend"
    )
    split = luigi.Parameter(default="test", description="the split to evaluate on")

    def requires(self) -> list[luigi.Task]:
        fit_on = self.inputs().fit_on
        if fit_on is None:
            return [MakeSplits()]
        return [
            MakeSplits(),
            Evaluate(model_backend=self.model_backend, split=fit_on.predictions.split),
        ]

    def inputs(self) -> EvaluateInputs:
        return self.plan.evaluate(self.model_backend, self.split)

    def stats_path(self) -> Path:
        return evaluation_layout(self.inputs(), self.layout).stats

    def outputs(self) -> list[Path]:
        folder = evaluation_layout(self.inputs(), self.layout)
        return [folder.predictions, folder.scores, folder.report]

    def run(self) -> None:
        evaluate(self.inputs(), self.layout)
