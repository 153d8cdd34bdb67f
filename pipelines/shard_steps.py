"""Per-shard tasks of Algorithm 1: keywords, token search and judging, vector search and judging."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import luigi

from pipelines.base import StepTask
from pipelines.gpus import on_gpu, step_gpus
from pipelines.indexes import BuildTokenIndex, BuildVectorIndex
from pipelines.inputs import PrepareQuestions
from tipqa.builder.shard_steps import (
    extract_shard_keywords,
    judge_shard_tokens,
    judge_shard_vectors,
    search_shard_tokens,
    search_shard_vectors,
)
from tipqa.builder.step_inputs import (
    AsksLLM,
    KeywordsInputs,
    TokenJudgeInputs,
    TokenSearchInputs,
    VectorJudgeInputs,
    VectorSearchInputs,
)
from tipqa.core.steps import Step


class ShardTask(StepTask):
    """A step over one block of questions of a pool."""

    pool = luigi.Parameter()
    shard = luigi.IntParameter()
    step = ""
    writes: ClassVar[tuple[str, ...]] = ()
    """The shard's files (`ShardLayout.data` names) the step writes: its main outputs."""

    def as_input(self) -> str:
        """The pool's fingerprint of this step: later steps record that one, not the shard's."""
        return self.plan.pool_step(self.pool, self.step).fingerprint

    def stats_path(self) -> Path:
        return self.layout.pool(self.pool).shard(self.shard).stats(self.step)

    def outputs(self) -> list[Path]:
        shard = self.layout.pool(self.pool).shard(self.shard)
        return [shard.data(name) for name in self.writes]

    def previous(self, task: type[ShardTask]) -> ShardTask:
        """The same shard's task of an earlier step."""
        return task(pool=self.pool, shard=self.shard)


class LLMShardTask(ShardTask):
    """A shard step that asks an LLM: it takes GPUs (the `gpu` resource) when its backend is
    vLLM's offline engine, whose engine then starts on a free GPU slot (`pipelines.gpus`)."""

    def inputs(self) -> AsksLLM:
        raise NotImplementedError

    @property
    def resources(self) -> dict[str, int]:  # type: ignore[override]
        """The GPUs of its engine, when it is vLLM's offline engine (`pipelines.gpus`)."""
        return step_gpus(lambda: self.inputs().llm)


class ExtractKeywords(LLMShardTask):
    """Keywords of the shard's questions."""

    step = Step.KEYWORDS
    writes = ("keywords",)

    def requires(self) -> luigi.Task:
        return PrepareQuestions(pool=self.pool)

    def inputs(self) -> KeywordsInputs:
        return self.plan.keywords(self.pool).at(self.shard)

    def run(self) -> None:
        inputs = self.inputs()
        with on_gpu(inputs.llm, self.layout):
            extract_shard_keywords(inputs, self.layout)


class TokenSearch(ShardTask):
    """Token search: the first k1 documents with all keywords and any alias, and the total."""

    step = Step.TOKEN_SEARCH
    writes = ("token_candidates",)

    def requires(self) -> list[luigi.Task]:
        return [self.previous(ExtractKeywords), BuildTokenIndex()]

    def inputs(self) -> TokenSearchInputs:
        return self.plan.token_search(self.pool).at(self.shard)

    def run(self) -> None:
        search_shard_tokens(self.inputs(), self.layout)


class TokenJudge(LLMShardTask):
    """Judge token candidates with early exit; decide answerable, discarded or on to vectors."""

    step = Step.TOKEN_JUDGE
    writes = ("token_judgments", "token_decisions")

    def requires(self) -> luigi.Task:
        return self.previous(TokenSearch)

    def inputs(self) -> TokenJudgeInputs:
        return self.plan.token_judge(self.pool).at(self.shard)

    def run(self) -> None:
        inputs = self.inputs()
        with on_gpu(inputs.llm, self.layout):
            judge_shard_tokens(inputs, self.layout)


class VectorSearch(ShardTask):
    """Vector search for the questions the token stage could not settle."""

    step = Step.VECTOR_SEARCH
    writes = ("vector_candidates",)

    def requires(self) -> list[luigi.Task]:
        tokens = [BuildTokenIndex()] if self.inputs().tokens is not None else []
        return [self.previous(TokenJudge), BuildVectorIndex(), *tokens]

    def inputs(self) -> VectorSearchInputs:
        return self.plan.vector_search(self.pool).at(self.shard)

    def run(self) -> None:
        search_shard_vectors(self.inputs(), self.layout)


class VectorJudge(LLMShardTask):
    """Judge every vector candidate; decide answerable or unanswerable."""

    step = Step.VECTOR_JUDGE
    writes = ("vector_judgments", "vector_decisions", "instances")

    def requires(self) -> luigi.Task:
        return self.previous(VectorSearch)

    def inputs(self) -> VectorJudgeInputs:
        return self.plan.vector_judge(self.pool).at(self.shard)

    def run(self) -> None:
        inputs = self.inputs()
        with on_gpu(inputs.llm, self.layout):
            judge_shard_vectors(inputs, self.layout)
