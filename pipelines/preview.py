"""PreviewCost: what the judge will be sent, known before any judging."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import luigi

from pipelines.base import Step
from pipelines.inputs import PrepareQuestions
from pipelines.shard_steps import TokenSearch
from tipqa import steps
from tipqa.assemble import token_index
from tipqa.cost import preview_pool
from tipqa.fingerprint import StepRecord
from tipqa.inputs import shard_count


class PreviewCost(Step):
    """Count prompts and estimate tokens of a pool's judging from its token candidates."""

    pool = luigi.Parameter()

    def requires(self) -> luigi.Task:
        return PrepareQuestions(pool=self.pool)

    def record(self) -> StepRecord:
        return self.plan.cost_preview(self.pool)

    def stats_path(self) -> Path:
        return self.layout.pool(self.pool).cost_preview

    def dynamic_requires(self) -> list[luigi.Task]:
        count = shard_count(self.layout.pool(self.pool))
        return [TokenSearch(pool=self.pool, shard=i) for i in range(count)]

    def run(self) -> Any:
        yield self.dynamic_requires()
        pool = self.layout.pool(self.pool)
        preview = preview_pool(
            steps.pool_shards(pool, shard_count(pool)),
            token_index(self.config, self.plan).get,
            self.plan.preview_inputs(self.pool),
            self.stats_path(),
        )
        print(json.dumps(preview, indent=2))
