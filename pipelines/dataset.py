"""The partition of all shards, and CreateDataset, the main entry point."""

from __future__ import annotations

import luigi

from pipelines.config import build, run_info
from pipelines.inputs import PrepareQuestions
from pipelines.stages import VectorJudge
from tipqa import steps
from tipqa.partition import write_partition


class Partition(luigi.Task):
    """Collect every shard's decisions into the answerable / unanswerable / ... splits."""

    def requires(self) -> luigi.Task:
        return PrepareQuestions()

    def output(self) -> luigi.LocalTarget:
        return luigi.LocalTarget(build().layout().dataset / "stats.json")

    def run(self):
        layout = build().layout()
        count = steps.shard_count(layout.questions, build().shard_size)
        yield [VectorJudge(shard=i) for i in range(count)]
        shards = [
            (steps.shard_questions(layout.questions, i, build().shard_size), layout.shard(i))
            for i in range(count)
        ]
        write_partition(shards, layout.dataset, run_info())


class CreateDataset(luigi.WrapperTask):
    """Build the whole benchmark: `luigi --module pipelines CreateDataset --local-scheduler`."""

    def requires(self) -> luigi.Task:
        return Partition()
