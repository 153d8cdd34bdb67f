"""PreviewCost: what the judge will be sent, known before any judging."""

from __future__ import annotations

import json

import luigi

from pipelines.config import build, embedder, judge, token_index
from pipelines.inputs import PrepareQuestions
from pipelines.stages import TokenSearch
from tipqa import steps
from tipqa.components import make_embedder, make_judge, make_token_index, window_settings
from tipqa.cost import preview_pool
from tipqa.llm.prompts import load_template
from tipqa.text import word_count


class PreviewCost(luigi.Task):
    """Count prompts and estimate tokens of a pool's judging from its token candidates."""

    pool = luigi.Parameter()

    def requires(self) -> luigi.Task:
        return PrepareQuestions(pool=self.pool)

    def output(self) -> luigi.LocalTarget:
        return luigi.LocalTarget(build().layout().pool(self.pool).root / "cost_preview.json")

    def run(self):
        pool = build().layout().pool(self.pool)
        size = build().shard_size
        count = steps.shard_count(pool.questions, size)
        yield [TokenSearch(pool=self.pool, shard=i) for i in range(count)]
        settings = judge().settings()
        windows = window_settings(settings, make_judge(settings, None))
        preview = preview_pool(
            steps.pool_shards(pool, size),
            make_token_index(token_index().settings(), build().layout().token_index).get,
            windows,
            build().k1,
            build().k2,
            word_count(load_template(settings["prompt"]).text),
            make_embedder(embedder().settings()).max_seq_length,
            self.output().path,
        )
        print(json.dumps(preview, indent=2))
