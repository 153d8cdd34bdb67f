"""Tasks that bring the inputs in: the demo world and the question pools."""

from __future__ import annotations

from pathlib import Path

import luigi

from pipelines.base import StepTask
from tipqa.builder.inputs import make_world, prepare_questions
from tipqa.builder.step_inputs import QuestionsInputs, WorldInputs


class MakeDemoWorld(StepTask):
    """Generate the synthetic demo world (corpus files, questions, expected labels)."""

    def inputs(self) -> WorldInputs:
        return self.plan.world

    def stats_path(self) -> Path:
        return self.layout.world.stats

    def outputs(self) -> list[Path]:
        world = self.layout.world
        return [world.corpus, world.questions, world.expected]

    def run(self) -> None:
        make_world(self.inputs(), self.layout)


class PrepareQuestions(StepTask):
    """Load one pool's questions; write them as one file and one file per shard."""

    pool = luigi.Parameter()

    def requires(self) -> list[luigi.Task]:
        return world_requirements(self)

    def inputs(self) -> QuestionsInputs:
        return self.plan.questions(self.pool)

    def stats_path(self) -> Path:
        return self.layout.pool(self.pool).questions_stats

    def outputs(self) -> list[Path]:
        return [self.layout.pool(self.pool).questions]

    def run(self) -> None:
        prepare_questions(self.inputs(), self.layout)


def world_requirements(task: StepTask) -> list[luigi.Task]:
    """The demo world, when a question pool or the corpus of `task`'s run come from it."""
    return [MakeDemoWorld()] if task.plan.uses_demo else []
