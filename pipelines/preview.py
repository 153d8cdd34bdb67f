"""PreviewCost: what the judge will be sent, known before the corpus's index is built."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import luigi

from pipelines.base import StepTask
from pipelines.inputs import PrepareQuestions, world_requirements
from pipelines.shard_steps import ExtractKeywords
from tipqa.build.inputs import open_corpus, pool_shards, shard_count
from tipqa.build.preview import preview_sample_pool
from tipqa.core.fingerprint import StepRecord


class PreviewCost(StepTask):
    """Estimate a pool's judge prompts and tokens from a token index of a corpus sample.

    The sample is `[build] cost_sample` of the corpus's documents (seed `cost_seed`), indexed
    into `<run>/index/token-sample`; the pool's questions are searched there with their
    keywords and the judge's windows of their hits counted, then scaled to the whole corpus.
    """

    pool = luigi.Parameter()

    def requires(self) -> list[luigi.Task]:
        return [PrepareQuestions(pool=self.pool), *world_requirements()]

    def record(self) -> StepRecord:
        return self.plan.cost_preview(self.pool)

    def stats_path(self) -> Path:
        return self.layout.pool(self.pool).cost_preview

    def dynamic_requires(self) -> list[luigi.Task]:
        count = shard_count(self.layout.pool(self.pool))
        return [ExtractKeywords(pool=self.pool, shard=i) for i in range(count)]

    def run(self) -> Any:
        yield self.dynamic_requires()
        pool = self.layout.pool(self.pool)
        preview = preview_sample_pool(
            pool_shards(pool, shard_count(pool)),
            open_corpus(self.config.corpus, self.layout),
            self.layout.cost_sample_index,
            self.plan.cost_preview_inputs(self.pool),
            self.stats_path(),
        )
        print(json.dumps(preview, indent=2))
