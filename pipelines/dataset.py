"""The partition of each question pool, and CreateDataset, the main entry point."""

from __future__ import annotations

import luigi

from pipelines.config import build, questions, run_info
from pipelines.inputs import PrepareQuestions
from pipelines.stages import VectorJudge
from tipqa import steps
from tipqa.partition import write_partition


class Partition(luigi.Task):
    """Collect a pool's shard decisions into answerable / unanswerable / ... files."""

    pool = luigi.Parameter()

    def requires(self) -> luigi.Task:
        return PrepareQuestions(pool=self.pool)

    def output(self) -> luigi.LocalTarget:
        return luigi.LocalTarget(build().layout().pool(self.pool).partition / "stats.json")

    def run(self):
        pool = build().layout().pool(self.pool)
        size = build().shard_size
        count = steps.shard_count(pool.questions, size)
        yield [VectorJudge(pool=self.pool, shard=i) for i in range(count)]
        write_partition(
            steps.pool_shards(pool, size), pool.partition, {"pool": self.pool, **run_info()}
        )


class CreateDataset(luigi.WrapperTask):
    """Build the whole benchmark: `luigi --module pipelines CreateDataset --local-scheduler`.

    Every pool's partition, the splits, the Hub-ready folder and the report; publishing is a
    separate task (PublishDataset).
    """

    def requires(self) -> list[luigi.Task]:
        from pipelines.publish import BuildHubFolder, BuildReport

        pools = [Partition(pool=name) for name in questions().pools]
        return [*pools, BuildHubFolder(), BuildReport()]
