"""PreviewCost: what the judge will be sent, known before any judging."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import luigi

from pipelines.base import Step
from pipelines.inputs import PrepareQuestions
from pipelines.shard_steps import TokenSearch
from tipqa import steps
from tipqa.assemble import token_index
from tipqa.components import window_settings
from tipqa.cost import preview_pool
from tipqa.embedders.base import KnowsSequenceLength
from tipqa.errors import ConfigError
from tipqa.fingerprint import StepRecord
from tipqa.inputs import shard_count
from tipqa.judges.base import JUDGES, Prompted
from tipqa.llm.prompts import load_template
from tipqa.text import word_count


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
        config = self.config
        pool = self.layout.pool(self.pool)
        count = shard_count(pool)
        embedder = config.embedder.settings
        if not isinstance(embedder, KnowsSequenceLength):
            raise ConfigError(f"embedder {config.embedder.backend!r} cannot tell its chunk size")
        judge = config.judge.settings
        prompted = JUDGES.has(config.judge.backend, "prompted")
        prompt = load_template(cast(Prompted, judge).prompt).text if prompted else ""
        preview = preview_pool(
            steps.pool_shards(pool, count),
            token_index(config, self.plan).get,
            window_settings(config.windows, config.judge),
            config.build.k1,
            config.build.k2,
            word_count(prompt),
            embedder.max_seq_length(),
            self.stats_path(),
            self.record(),
            judge_all=config.boundary.judge_all_candidates,
        )
        print(json.dumps(preview, indent=2))
