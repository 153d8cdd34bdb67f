"""Per-shard tasks of Algorithm 1: keywords, token search and judging, vector search and judging."""

from __future__ import annotations

from pathlib import Path

import luigi

from pipelines.base import Step
from pipelines.gpus import GPU, configured_gpus, engine_gpus, on_gpu
from pipelines.indexes import BuildTokenIndex, BuildVectorIndex
from pipelines.inputs import PrepareQuestions
from tipqa import layout as names
from tipqa import steps
from tipqa.assemble import token_index, vector_index
from tipqa.components import make_judge, make_keyword_extractor, window_settings
from tipqa.config import Choice
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


class LLMShardTask(ShardTask):
    """A shard step that asks an LLM: it takes GPUs (the `gpu` resource) when its backend is
    vLLM's offline engine, whose engine then starts on a free GPU slot (`pipelines.gpus`)."""

    def llm(self) -> Choice:
        """The seam whose backend this step asks."""
        raise NotImplementedError

    @property
    def resources(self) -> dict[str, int]:  # type: ignore[override]
        """`tensor_parallel_size` of the `gpu` resource, where `[resources] gpu` is set (else
        none: one process needs no sharing, and parallel workers are refused an engine)."""
        gpus = engine_gpus(self.llm())
        return {GPU: gpus} if gpus and configured_gpus() is not None else {}


class ExtractKeywords(LLMShardTask):
    """Keywords of the shard's questions."""

    step = names.KEYWORDS

    def requires(self) -> luigi.Task:
        return PrepareQuestions(pool=self.pool)

    def llm(self) -> Choice:
        return self.config.keywords

    def run(self) -> None:
        extractor = make_keyword_extractor(self.config.keywords, self.cache())
        with on_gpu(self.config, self.llm()):
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


class TokenJudge(LLMShardTask):
    """Judge token candidates with early exit; decide answerable, discarded or on to vectors."""

    step = names.TOKEN_JUDGE

    def requires(self) -> luigi.Task:
        return self.previous(TokenSearch)

    def llm(self) -> Choice:
        return self.config.judge

    def run(self) -> None:
        config = self.config
        with on_gpu(config, self.llm()):
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


class VectorJudge(LLMShardTask):
    """Judge every vector candidate; decide answerable or unanswerable."""

    step = names.VECTOR_JUDGE

    def requires(self) -> luigi.Task:
        return self.previous(VectorSearch)

    def llm(self) -> Choice:
        return self.config.judge

    def run(self) -> None:
        judge = make_judge(self.config.judge, self.cache())
        fetch = token_index(self.config, self.plan).get
        with on_gpu(self.config, self.llm()):
            steps.vector_judge(self.questions(), judge, self.shard_layout(), self.record(), fetch)
