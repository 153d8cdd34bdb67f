"""Tasks that bring the inputs in: the demo world and the question pools."""

from __future__ import annotations

import luigi

from pipelines.config import build, corpus, demo, questions
from tipqa.inputs import DEMO, check_pool, make_world, prepare_questions


class MakeDemoWorld(luigi.Task):
    """Generate the synthetic demo world (corpus files, questions, expected labels)."""

    def output(self) -> luigi.LocalTarget:
        return luigi.LocalTarget(build().layout().world / "world.stats.json")

    def run(self) -> None:
        make_world(demo().settings(), build().k1, build().layout().world)


def pool_settings(pool: str) -> dict:
    """The source settings of question pool `pool`, checked."""
    pools = questions().settings()["pools"]
    if pool not in pools:
        raise KeyError(f"unknown question pool {pool!r}; configured: {', '.join(pools)}")
    settings = pools[pool]
    check_pool(pool, settings)
    return settings


def world_requirements() -> list[luigi.Task]:
    """The demo world, when a question pool or the corpus come from it."""
    sources = [p.get("source") for p in questions().settings()["pools"].values()]
    uses_demo = DEMO in (*sources, corpus().source)
    return [MakeDemoWorld()] if uses_demo else []


class PrepareQuestions(luigi.Task):
    """Load one pool's questions and write them as one normalised file."""

    pool = luigi.Parameter()

    def requires(self) -> list[luigi.Task]:
        return world_requirements()

    def output(self) -> luigi.LocalTarget:
        path = build().layout().pool(self.pool).questions
        return luigi.LocalTarget(path.with_suffix(".stats.json"))

    def run(self) -> None:
        layout = build().layout()
        prepare_questions(pool_settings(self.pool), layout.world, layout.pool(self.pool).questions)
