"""Evaluate a real model on a built split: `luigi --module pipelines Evaluate --local-scheduler`.

`--model-backend openai` (an OpenAI-compatible server) or `vllm` (the offline engine);
`--split-name test`. Writes `<run>/evaluation/<backend>-<model>/<split>/` (predictions, scores,
report, figures); a rerun after a failure asks only for the questions still unanswered.

Settings come from `[evaluate]` (refusal detection and scoring: `threshold`, `phrases`,
`embedding`, `boxed`, `bins`, `min_bin_count`, `bootstrap`, `trials`, `seed`) and from
`[evaluate.openai]` / `[evaluate.vllm]` (the answerer's `OpenAIAnswererSettings` /
`VLLMAnswererSettings`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import luigi

from pipelines.publish import MakeSplits
from tipqa.embedders.base import Embedder
from tipqa.evaluate.answerers import ANSWERER_SETTINGS, make_answerer
from tipqa.evaluate.pipeline import SCORES, evaluate_model
from tipqa.evaluate.refusal import RefusalDetector, RefusalSettings
from tipqa.evaluate.score import ScoringSettings
from tipqa.settings import Settings, parse

BACKENDS = ("openai", "vllm")


@dataclass(frozen=True)
class EvaluateInputs:
    """What one Evaluate run needs from the build: places, settings, the build's embedder."""

    run_root: Path
    splits: Path
    llm_cache: Path
    refusal: RefusalSettings
    scoring: ScoringSettings
    answerer: Settings
    embedder: Callable[[], Embedder]


def _section(name: str) -> dict[str, Any]:
    config = luigi.configuration.get_config()
    return dict(config.items(name)) if config.has_section(name) else {}


def evaluate_inputs(backend: str) -> EvaluateInputs:
    """The run's folders, `[evaluate]` and `[evaluate.<backend>]` parsed strictly, the embedder."""
    # wiring: lead
    from pipelines.config import build, embedder
    from tipqa.components import make_embedder

    general = _section("evaluate")
    refusal_keys, scoring_keys = RefusalSettings.keys(), ScoringSettings.keys()
    answerer_section = f"evaluate.{backend}"
    layout = build().layout()
    return EvaluateInputs(
        run_root=layout.root,
        splits=layout.splits,
        llm_cache=layout.llm_cache,
        refusal=parse(RefusalSettings, "evaluate", general, ignore=scoring_keys),
        scoring=parse(ScoringSettings, "evaluate", general, ignore=refusal_keys),
        answerer=parse(ANSWERER_SETTINGS[backend], answerer_section, _section(answerer_section)),
        embedder=lambda: make_embedder(embedder().settings()),
    )


def model_slug(model: str) -> str:
    """A folder name for a model id or path (`owner/name` becomes `owner--name`)."""
    return model.strip("/").replace("/", "--") or "model"


class Evaluate(luigi.Task):
    """Answer the split's questions with a real model, then score the answers."""

    model_backend = luigi.ChoiceParameter(choices=BACKENDS, default="openai")
    # Not `split`: luigi's command line accepts any unique prefix of a flag, and `--split` is a
    # prefix of the [splits] section's `--splits-...` flags: luigi rejects it as ambiguous.
    split_name = luigi.Parameter(default="test", description="the split to evaluate on")

    def requires(self) -> luigi.Task:
        return MakeSplits()

    def folder(self) -> Path:
        """Where this evaluation's files go."""
        inputs = evaluate_inputs(self.model_backend)
        model = str(getattr(inputs.answerer, "model", "model"))
        name = f"{self.model_backend}-{model_slug(model)}"
        return inputs.run_root / "evaluation" / name / self.split_name

    def output(self) -> luigi.LocalTarget:
        return luigi.LocalTarget(self.folder() / SCORES)

    def run(self) -> None:
        inputs = evaluate_inputs(self.model_backend)
        evaluate_model(
            inputs.splits,
            self.split_name,
            make_answerer(self.model_backend, inputs.answerer),
            RefusalDetector(
                inputs.refusal, inputs.embedder() if inputs.refusal.embedding else None
            ),
            inputs.scoring,
            self.folder(),
            cache_path=inputs.llm_cache,
        )
