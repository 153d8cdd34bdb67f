"""The partition of each question pool into answerable / unanswerable / undetermined."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import luigi

from pipelines.base import StepTask
from pipelines.indexes import BuildTokenIndex, BuildVectorIndex
from pipelines.inputs import PrepareQuestions, world_requirements
from pipelines.shard_steps import ExtractKeywords, TokenJudge, VectorJudge
from tipqa.builder.inputs import shard_count
from tipqa.builder.partition import partition_pool
from tipqa.builder.step_inputs import PartitionInputs
from tipqa.core.records import LABELS


class Partition(StepTask):
    """Collect a pool's shard decisions into answerable / unanswerable / ... files."""

    pool = luigi.Parameter()

    def requires(self) -> luigi.Task:
        return PrepareQuestions(pool=self.pool)

    def inputs(self) -> PartitionInputs:
        return self.plan.partition(self.pool)

    def stats_path(self) -> Path:
        return self.layout.pool(self.pool).partition_stats

    def outputs(self) -> list[Path]:
        files = self.layout.pool(self.pool).partition_files
        return [*(files.labelled(label) for label in LABELS), files.instances]

    def dynamic_requires(self) -> list[luigi.Task]:
        """Every shard's steps whose files the partition reads (keywords, the token and the
        vector stage's decisions), so that a file deleted by hand is made again; and the steps
        whose stats the partition's provenance is read from (the index builds, the demo world),
        upstream of the shards already: a stats file that a build which failed removed is made
        again before the partition reads it."""
        count = shard_count(self.layout.pool(self.pool))
        read = (ExtractKeywords, TokenJudge, VectorJudge)
        shards = [step(pool=self.pool, shard=i) for i in range(count) for step in read]
        return [*shards, *world_requirements(self), BuildTokenIndex(), BuildVectorIndex()]

    def run(self) -> Iterator[list[luigi.Task]]:
        yield self.dynamic_requires()
        partition_pool(self.inputs(), self.layout)
