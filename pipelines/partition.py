"""The partition of each question pool into answerable / unanswerable / undetermined."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import luigi

from pipelines.base import StepTask
from pipelines.inputs import PrepareQuestions
from pipelines.shard_steps import VectorJudge
from tipqa.build.inputs import shard_count
from tipqa.build.partition import partition_pool
from tipqa.build.step_inputs import PartitionInputs


class Partition(StepTask):
    """Collect a pool's shard decisions into answerable / unanswerable / ... files."""

    pool = luigi.Parameter()

    def requires(self) -> luigi.Task:
        return PrepareQuestions(pool=self.pool)

    def inputs(self) -> PartitionInputs:
        return self.plan.partition(self.pool)

    def stats_path(self) -> Path:
        return self.layout.pool(self.pool).partition_stats

    def dynamic_requires(self) -> list[luigi.Task]:
        count = shard_count(self.layout.pool(self.pool))
        return [VectorJudge(pool=self.pool, shard=i) for i in range(count)]

    def run(self) -> Iterator[list[luigi.Task]]:
        yield self.dynamic_requires()
        partition_pool(self.inputs(), self.layout)
