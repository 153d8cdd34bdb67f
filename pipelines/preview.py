"""PreviewCost: what the judge will be sent, known before the corpus's index is built."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import luigi

from pipelines.base import StepTask
from pipelines.inputs import PrepareQuestions, world_requirements
from pipelines.shard_steps import ExtractKeywords
from tipqa.builder.inputs import shard_count
from tipqa.builder.preview import preview_sample_pool
from tipqa.builder.step_inputs import PreviewInputs


class PreviewCost(StepTask):
    """Estimate a pool's judge prompts and tokens from a token index of a corpus sample.

    The sample is `[build] cost_sample` of the corpus's documents (seed `cost_seed`), indexed
    into `<run>/index/token-sample`; the pool's questions are searched there with their
    keywords and the judge's windows of their hits counted, then scaled to the whole corpus.
    """

    pool = luigi.Parameter()

    def requires(self) -> list[luigi.Task]:
        return [PrepareQuestions(pool=self.pool), *world_requirements(self)]

    def inputs(self) -> PreviewInputs:
        return self.plan.cost_preview(self.pool)

    def stats_path(self) -> Path:
        return self.layout.pool(self.pool).cost_preview

    def outputs(self) -> list[Path]:
        return []  # the stats file is the preview

    def dynamic_requires(self) -> list[luigi.Task]:
        count = shard_count(self.layout.pool(self.pool))
        return [ExtractKeywords(pool=self.pool, shard=i) for i in range(count)]

    def run(self) -> Iterator[list[luigi.Task]]:
        yield self.dynamic_requires()
        print(json.dumps(preview_sample_pool(self.inputs(), self.layout), indent=2))
