"""The partition of each question pool into answerable / unanswerable / undetermined."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import luigi

from pipelines.base import StepTask
from pipelines.inputs import PrepareQuestions
from pipelines.shard_steps import VectorJudge
from tipqa.build.inputs import pool_shards, shard_count
from tipqa.core.fingerprint import StepRecord
from tipqa.dataset.partition import write_partition
from tipqa.dataset.provenance import pool_provenance


class Partition(StepTask):
    """Collect a pool's shard decisions into answerable / unanswerable / ... files."""

    pool = luigi.Parameter()

    def requires(self) -> luigi.Task:
        return PrepareQuestions(pool=self.pool)

    def record(self) -> StepRecord:
        return self.plan.partition(self.pool)

    def stats_path(self) -> Path:
        return self.layout.pool(self.pool).partition_stats

    def dynamic_requires(self) -> list[luigi.Task]:
        count = shard_count(self.layout.pool(self.pool))
        return [VectorJudge(pool=self.pool, shard=i) for i in range(count)]

    def run(self) -> Any:
        yield self.dynamic_requires()
        pool = self.layout.pool(self.pool)
        count = shard_count(pool)
        build = pool_provenance(self.layout, self.pool, count)
        write_partition(pool_shards(pool, count), pool.partition_files, self.record(), build)
