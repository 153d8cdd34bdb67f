"""Tasks that bring the inputs in: the demo world and the question pools."""

from __future__ import annotations

from pathlib import Path

import luigi

from pipelines.base import StepTask
from pipelines.config import current
from tipqa.build.inputs import make_world, prepare_questions
from tipqa.core.fingerprint import StepRecord


class MakeDemoWorld(StepTask):
    """Generate the synthetic demo world (corpus files, questions, expected labels)."""

    def record(self) -> StepRecord:
        return self.plan.world

    def stats_path(self) -> Path:
        return self.layout.world.stats

    def run(self) -> None:
        make_world(self.plan.world_inputs, self.layout)


def world_requirements() -> list[luigi.Task]:
    """The demo world, when a question pool or the corpus come from it."""
    return [MakeDemoWorld()] if current().uses_demo else []


class PrepareQuestions(StepTask):
    """Load one pool's questions; write them as one file and one file per shard."""

    pool = luigi.Parameter()

    def requires(self) -> list[luigi.Task]:
        return world_requirements()

    def record(self) -> StepRecord:
        return self.plan.questions(self.pool)

    def stats_path(self) -> Path:
        return self.layout.pool(self.pool).questions_stats

    def run(self) -> None:
        prepare_questions(self.plan.questions_inputs(self.pool), self.layout)
