"""Tasks that bring the inputs in: the demo world and the run's questions."""

from __future__ import annotations

import luigi

from pipelines.config import build, corpus, demo, questions
from tipqa.inputs import DEMO, make_world, prepare_questions


class MakeDemoWorld(luigi.Task):
    """Generate the synthetic demo world (corpus files, questions, expected labels)."""

    def output(self) -> luigi.LocalTarget:
        return luigi.LocalTarget(build().layout().world / "world.stats.json")

    def run(self) -> None:
        make_world(demo().settings(), build().k1, build().layout().world)


def world_requirements() -> list[luigi.Task]:
    """The demo world, when the questions or the corpus come from it."""
    uses_demo = DEMO in (questions().source, corpus().source)
    return [MakeDemoWorld()] if uses_demo else []


class PrepareQuestions(luigi.Task):
    """Load the configured questions and write them as one normalised file."""

    def requires(self) -> list[luigi.Task]:
        return world_requirements()

    def output(self) -> luigi.LocalTarget:
        return luigi.LocalTarget(build().layout().questions.with_suffix(".stats.json"))

    def run(self) -> None:
        layout = build().layout()
        prepare_questions(questions().settings(), layout.world, layout.questions)
