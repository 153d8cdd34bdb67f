"""The knowledge boundary over training time: the training stream's index, and each pool's
split as of every checkpoint. They run only when `[training_order]` is configured."""

from __future__ import annotations

from pathlib import Path

import luigi

from pipelines.base import OfTheRun, StepTask
from pipelines.indexes import BuildTokenIndex
from pipelines.partition import Partition
from tipqa.builder.assemble import training_index_place
from tipqa.builder.boundary import date_pool, index_training_stream
from tipqa.builder.step_inputs import BoundaryInputs, TrainingIndexInputs
from tipqa.core.errors import ConfigError


def boundary_tasks(task: OfTheRun, pools: list[str]) -> list[luigi.Task]:
    """The pools' Boundary tasks when the boundary is built in `task`'s run, else none."""
    return [Boundary(pool=pool) for pool in pools] if task.plan.training_order else []


class BuildTrainingIndex(StepTask):
    """The one streaming pass over the training stream (resumable; reused by every build)."""

    def inputs(self) -> TrainingIndexInputs:
        inputs = self.plan.training_index
        if inputs is None:
            raise ConfigError("this [training_order] backend keeps no index of a training stream")
        return inputs

    def stats_path(self) -> Path:
        return training_index_place(self.inputs(), self.layout).stats

    def outputs(self) -> list[Path]:
        return [training_index_place(self.inputs(), self.layout).root]

    def run(self) -> None:
        index_training_stream(self.inputs(), self.layout)


class Boundary(StepTask):
    """Date a pool's answerable questions; write its split as of every checkpoint."""

    pool = luigi.Parameter()

    def requires(self) -> list[luigi.Task]:
        index = [BuildTrainingIndex()] if self.inputs().training_index is not None else []
        return [Partition(pool=self.pool), BuildTokenIndex(), *index]

    def inputs(self) -> BoundaryInputs:
        return self.plan.boundary(self.pool)

    def stats_path(self) -> Path:
        return self.layout.pool(self.pool).boundary.stats

    def outputs(self) -> list[Path]:
        boundary = self.layout.pool(self.pool).boundary
        return [boundary.first_seen, boundary.shares]

    def run(self) -> None:
        date_pool(self.inputs(), self.layout)
