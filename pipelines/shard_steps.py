"""Per-shard tasks of Algorithm 1: keywords, token search and judging, vector search and judging."""

from __future__ import annotations

from pathlib import Path

import luigi

from pipelines.base import Step
from pipelines.indexes import BuildTokenIndex, BuildVectorIndex
from pipelines.inputs import PrepareQuestions
from tipqa import layout as names
from tipqa import steps
from tipqa.assemble import token_index, vector_index
from tipqa.components import make_judge, make_keyword_extractor, window_settings
from tipqa.fingerprint import StepRecord
from tipqa.layout import ShardLayout
from tipqa.records import Question
from tipqa.vector_index.base import CANDIDATES, EmbedsOnDemand


class ShardTask(Step):
    """A step over one block of questions of a pool."""

    pool = luigi.Parameter()
    shard = luigi.IntParameter()
    step = ""

    def record(self) -> StepRecord:
        return self.plan.shard(self.pool, self.step, self.shard)

    def as_input(self) -> str:
        """The pool's fingerprint of this step: later steps record that one, not the shard's."""
        return self.plan.pool_step(self.pool, self.step).fingerprint

    def stats_path(self) -> Path:
        return self.shard_layout().stats(self.step)

    def shard_layout(self) -> ShardLayout:
        """The shard's files."""
        return self.layout.pool(self.pool).shard(self.shard)

    def questions(self) -> list[Question]:
        """The shard's questions (only this shard's file is read)."""
        return steps.shard_questions(self.shard_layout())

    def previous(self, task: type[ShardTask]) -> ShardTask:
        """The same shard's task of an earlier step."""
        return task(pool=self.pool, shard=self.shard)

    def cache(self) -> Path | None:
        """The LLM cache file, unless caching is off."""
        return self.layout.llm_cache if self.config.windows.cache else None


class ExtractKeywords(ShardTask):
    """Keywords of the shard's questions."""

    step = names.KEYWORDS

    def requires(self) -> luigi.Task:
        return PrepareQuestions(pool=self.pool)

    def run(self) -> None:
        extractor = make_keyword_extractor(self.config.keywords, self.cache())
        steps.extract_keywords(self.questions(), extractor, self.shard_layout(), self.record())


class TokenSearch(ShardTask):
    """Token search: the first k1 documents with all keywords and any alias, and the total."""

    step = names.TOKEN_SEARCH

    def requires(self) -> list[luigi.Task]:
        return [self.previous(ExtractKeywords), BuildTokenIndex()]

    def run(self) -> None:
        index = token_index(self.config, self.plan)
        k1 = self.config.build.k1
        steps.token_search(self.questions(), index, k1, self.shard_layout(), self.record())


class TokenJudge(ShardTask):
    """Judge token candidates with early exit; decide answerable, discarded or on to vectors."""

    step = names.TOKEN_JUDGE

    def requires(self) -> luigi.Task:
        return self.previous(TokenSearch)

    def run(self) -> None:
        config = self.config
        steps.token_judge(
            self.questions(),
            token_index(config, self.plan).get,
            make_judge(config.judge, self.cache()),
            config.build.k1,
            window_settings(config.windows, config.judge),
            self.shard_layout(),
            self.record(),
            judge_all=config.boundary.judge_all_candidates,
        )


class VectorSearch(ShardTask):
    """Vector search for the questions the token stage could not settle."""

    step = names.VECTOR_SEARCH

    def requires(self) -> list[luigi.Task]:
        tokens = [BuildTokenIndex()] if self.config.vector_index.backend == CANDIDATES else []
        return [self.previous(TokenJudge), BuildVectorIndex(), *tokens]

    def run(self) -> None:
        embedder, index = vector_index(self.config, self.plan)
        k2, out, record = self.config.build.k2, self.shard_layout(), self.record()
        tokens = token_index(self.config, self.plan) if isinstance(index, EmbedsOnDemand) else None
        steps.vector_search(self.questions(), embedder, index, k2, out, record, tokens)


class VectorJudge(ShardTask):
    """Judge every vector candidate; decide answerable or unanswerable."""

    step = names.VECTOR_JUDGE

    def requires(self) -> luigi.Task:
        return self.previous(VectorSearch)

    def run(self) -> None:
        judge = make_judge(self.config.judge, self.cache())
        fetch = token_index(self.config, self.plan).get
        steps.vector_judge(self.questions(), judge, self.shard_layout(), self.record(), fetch)
