"""Per-shard tasks of Algorithm 1: keywords, token search and judging, vector search and judging."""

from __future__ import annotations

from pathlib import Path

import luigi

from pipelines.base import StepTask
from pipelines.gpus import GPU, configured_gpus, engine_gpus, on_gpu
from pipelines.indexes import BuildTokenIndex, BuildVectorIndex
from pipelines.inputs import PrepareQuestions
from tipqa.build import shard_steps
from tipqa.build.assemble import judging, llm_cache, token_index, vector_searching
from tipqa.build.components import make_keyword_extractor
from tipqa.build.inputs import shard_questions
from tipqa.build.step_inputs import ShardInputs
from tipqa.config import Choice
from tipqa.core.fingerprint import StepRecord
from tipqa.core.layout import ShardLayout
from tipqa.core.records import Question
from tipqa.core.steps import Step


class ShardTask(StepTask):
    """A step over one block of questions of a pool."""

    pool = luigi.Parameter()
    shard = luigi.IntParameter()
    step = ""

    def inputs(self) -> ShardInputs:
        """What this shard's step reads (from the build plan)."""
        return self.plan.shard_inputs(self.pool, self.step).at(self.shard)

    def record(self) -> StepRecord:
        return self.inputs().record

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
        return shard_questions(self.shard_layout())

    def previous(self, task: type[ShardTask]) -> ShardTask:
        """The same shard's task of an earlier step."""
        return task(pool=self.pool, shard=self.shard)


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

    step = Step.KEYWORDS

    def requires(self) -> luigi.Task:
        return PrepareQuestions(pool=self.pool)

    def llm(self) -> Choice:
        return self.config.keywords

    def run(self) -> None:
        inputs = self.plan.keywords(self.pool).at(self.shard)
        extractor = make_keyword_extractor(inputs.keywords, llm_cache(self.config))
        with on_gpu(self.config, self.llm()):
            shard_steps.extract_keywords(self.questions(), inputs, extractor, self.shard_layout())


class TokenSearch(ShardTask):
    """Token search: the first k1 documents with all keywords and any alias, and the total."""

    step = Step.TOKEN_SEARCH

    def requires(self) -> list[luigi.Task]:
        return [self.previous(ExtractKeywords), BuildTokenIndex()]

    def run(self) -> None:
        inputs = self.plan.token_search(self.pool).at(self.shard)
        index = token_index(self.config, self.plan)
        shard_steps.token_search(self.questions(), inputs, index, self.shard_layout())


class TokenJudge(LLMShardTask):
    """Judge token candidates with early exit; decide answerable, discarded or on to vectors."""

    step = Step.TOKEN_JUDGE

    def requires(self) -> luigi.Task:
        return self.previous(TokenSearch)

    def llm(self) -> Choice:
        return self.config.judge

    def run(self) -> None:
        inputs = self.plan.token_judge(self.pool).at(self.shard)
        backends = judging(inputs.judge, self.config, self.plan)
        with on_gpu(self.config, self.llm()):
            shard_steps.token_judge(self.questions(), inputs, backends, self.shard_layout())


class VectorSearch(ShardTask):
    """Vector search for the questions the token stage could not settle."""

    step = Step.VECTOR_SEARCH

    def requires(self) -> list[luigi.Task]:
        on_demand = self.plan.vector_search(self.pool).token_index is not None
        tokens = [BuildTokenIndex()] if on_demand else []
        return [self.previous(TokenJudge), BuildVectorIndex(), *tokens]

    def run(self) -> None:
        inputs = self.plan.vector_search(self.pool).at(self.shard)
        backends = vector_searching(self.config, self.plan)
        shard_steps.vector_search(self.questions(), inputs, backends, self.shard_layout())


class VectorJudge(LLMShardTask):
    """Judge every vector candidate; decide answerable or unanswerable."""

    step = Step.VECTOR_JUDGE

    def requires(self) -> luigi.Task:
        return self.previous(VectorSearch)

    def llm(self) -> Choice:
        return self.config.judge

    def run(self) -> None:
        inputs = self.plan.vector_judge(self.pool).at(self.shard)
        backends = judging(inputs.judge, self.config, self.plan)
        with on_gpu(self.config, self.llm()):
            shard_steps.vector_judge(self.questions(), inputs, backends, self.shard_layout())
