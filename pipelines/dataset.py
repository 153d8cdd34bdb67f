"""The partition of each question pool, and CreateDataset, the main entry point."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import luigi

from pipelines.base import Step
from pipelines.config import current
from pipelines.inputs import PrepareQuestions
from pipelines.stages import VectorJudge
from pipelines.summary import announce
from tipqa import steps
from tipqa.errors import UndeterminedError
from tipqa.fingerprint import StepRecord
from tipqa.inputs import shard_count
from tipqa.partition import write_partition
from tipqa.provenance import pool_provenance
from tipqa.summary import undetermined_count, write_summary


class Partition(Step):
    """Collect a pool's shard decisions into answerable / unanswerable / ... files."""

    pool = luigi.Parameter()

    def requires(self) -> luigi.Task:
        return PrepareQuestions(pool=self.pool)

    def record(self) -> StepRecord:
        return self.plan.partition(self.pool)

    def stats_path(self) -> Path:
        return self.layout.pool(self.pool).partition_stats

    def run(self) -> Any:
        pool = self.layout.pool(self.pool)
        count = shard_count(pool)
        yield [VectorJudge(pool=self.pool, shard=i) for i in range(count)]
        build = pool_provenance(self.layout, self.pool, count)
        write_partition(steps.pool_shards(pool, count), pool.partition, self.record(), build)


class CreateDataset(luigi.Task):
    """Build the whole benchmark: `luigi --module pipelines CreateDataset --local-scheduler`.

    Every pool's partition (and, with a `[training_order]`, its split as of each checkpoint),
    the splits, the Hub-ready folder and the report; then a summary
    of what was built (printed, and in `<run>/summary.md`). It runs every time, so the
    summary is printed every time; the steps behind it rerun only when their settings or
    inputs changed. Publishing is a separate task (PublishDataset). A build that leaves
    questions undetermined fails (a non-zero exit) unless `--accept-undetermined` is given.
    """

    accept_undetermined = luigi.BoolParameter(
        significant=False,
        description="finish with a zero exit code even when questions are undetermined",
    )

    def requires(self) -> list[luigi.Task]:
        from pipelines.boundary import boundary_tasks
        from pipelines.publish import BuildHubFolder, BuildReport

        names = current().pool_names
        pools = [Partition(pool=name) for name in names]
        return [*pools, *boundary_tasks(names), BuildHubFolder(), BuildReport()]

    def complete(self) -> bool:
        return False

    def run(self) -> None:
        config = current()
        layout, pools = config.layout(), config.pool_names
        dated = config.training_order is not None
        announce(write_summary(layout, pools, os.environ.get("LUIGI_CONFIG_PATH"), dated))
        undetermined = undetermined_count(layout, pools)
        if undetermined and not self.accept_undetermined:
            raise UndeterminedError(undetermined, str(layout.summary))
