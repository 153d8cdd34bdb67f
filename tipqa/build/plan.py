"""The build plan: what every step's output is made from, and so its fingerprint.

`Plan(config)` gives, for each step, a `StepRecord`: the settings that decide the step's
output (`settings`, readable, written into its stats file as provenance) and the fingerprints
of what it reads (`inputs`). Computing a plan reads no data and loads no model: raw inputs are
known by file path, size and modification time (corpus files) or by content hash (question
files, which are small). This module is the one table of "which setting affects which step".
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar, cast

from tipqa.build.step_inputs import (
    KeywordsInputs,
    PreviewInputs,
    QuestionsInputs,
    ShardInputs,
    TokenIndexInputs,
    TokenJudgeInputs,
    TokenSearchInputs,
    VectorIndexInputs,
    VectorJudgeInputs,
    VectorSearchInputs,
    WorldInputs,
)
from tipqa.config import Config
from tipqa.config.pools import Pool
from tipqa.core.errors import ConfigError
from tipqa.core.fingerprint import StepRecord, content_hash, file_stat, files_stat
from tipqa.core.steps import Step
from tipqa.dataset.splits import SplitPlan
from tipqa.indexes.vector_index.base import CANDIDATES
from tipqa.sources.corpus.base import ReadsFiles
from tipqa.sources.demo.world import DEMO
from tipqa.sources.questions.base import QUESTION_SOURCES, FromFiles
from tipqa.training_order.base import IndexedOrderSettings, OrderSettings

Inputs = TypeVar("Inputs", bound=ShardInputs)


class Plan:
    """Every step's record for one configuration (each computed once)."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self._memo: dict[tuple[str, ...], StepRecord] = {}
        self._shard_inputs: dict[tuple[str, str], ShardInputs] = {}
        self._questions: dict[str, QuestionsInputs] = {}

    def _once(self, key: tuple[str, ...], make: Callable[[], StepRecord]) -> StepRecord:
        if key not in self._memo:
            self._memo[key] = make()
        return self._memo[key]

    @functools.cached_property
    def world_inputs(self) -> WorldInputs:
        """The demo world: its settings, and k1 (it sizes the discarded cases)."""
        return WorldInputs(self.config.demo, self.config.build.k1)

    @property
    def world(self) -> StepRecord:
        """The demo world's record."""
        return self.world_inputs.record

    @functools.cached_property
    def corpus(self) -> dict[str, Any]:
        """The corpus as an input: the reader's settings and its files (or the demo world)."""
        corpus = self.config.corpus
        if corpus.backend == DEMO:
            return {"source": DEMO, "world": self.world.fingerprint}
        identity = corpus.identity()
        if isinstance(corpus.settings, ReadsFiles):
            identity["files"] = [file_stat(path) for path in corpus.settings.files()]
        return identity

    @property
    def _cluster(self) -> dict[str, Any] | None:
        """The Elasticsearch cluster's identity, when an index lives there."""
        config = self.config
        return config.elasticsearch.identity() if config.uses_elasticsearch else None

    @functools.cached_property
    def token_index_inputs(self) -> TokenIndexInputs:
        """The token index: the corpus and the index backend's build settings."""
        return TokenIndexInputs(self.corpus, self._cluster, self.config.token_index)

    @property
    def token_index(self) -> StepRecord:
        """The token index build's record."""
        return self.token_index_inputs.record

    @functools.cached_property
    def vector_index_inputs(self) -> VectorIndexInputs:
        """The vector index: the corpus, the embedder (passages), chunking and the index."""
        config = self.config
        return VectorIndexInputs(
            self.corpus, self._cluster, config.embedder, config.vector_index, config.vector_chunking
        )

    @property
    def vector_index(self) -> StepRecord:
        """The vector index build's record."""
        return self.vector_index_inputs.record

    def index(self, step: str) -> StepRecord:
        """The token or the vector index build (`TOKEN_INDEX` or `VECTOR_INDEX`)."""
        if step not in (Step.TOKEN_INDEX, Step.VECTOR_INDEX):
            raise ValueError(f"not an index step: {step!r}")
        return self.token_index if step == Step.TOKEN_INDEX else self.vector_index

    def index_start(self, step: str) -> StepRecord:
        """Starting an index built in parts (creating it in build mode)."""
        return StepRecord(f"{step}_start", {}, {step: self.index(step).fingerprint})

    def index_part(self, step: str, corpus_file: str) -> StepRecord:
        """One corpus file's part of an index built in parts."""
        inputs = {step: self.index(step).fingerprint, "file": corpus_file}
        return StepRecord(f"{step}_file", {}, inputs)

    def questions(self, pool: str) -> StepRecord:
        """A pool's questions' record."""
        return self.questions_inputs(pool).record

    def questions_inputs(self, pool: str) -> QuestionsInputs:
        """A pool's questions: the source's settings and files, the limit and shard size."""
        if pool not in self._questions:
            spec = self.config.pool(pool)
            shard_size = self.config.build.shard_size
            self._questions[pool] = QuestionsInputs(spec, shard_size, self._pool_input(spec))
        return self._questions[pool]

    def _pool_input(self, pool: Pool) -> Any:
        """The pool's raw input: the demo world, its files by content, or a Hub dataset."""
        if pool.source == DEMO:
            return {"world": self.world.fingerprint}
        source = QUESTION_SOURCES.create(pool.source, pool.settings)
        if not isinstance(source, FromFiles):
            return {"dataset": pool.identity()}
        files = source.files
        return {"files": [{"path": str(path), "sha256": content_hash(path)} for path in files]}

    def pool_step(self, pool: str, step: str) -> StepRecord:
        """A shard step of `pool`, for every shard at once (a shard adds only its number)."""
        return self.shard_inputs(pool, step).record

    def shard(self, pool: str, step: str, shard: int) -> StepRecord:
        """One shard's record of a shard step."""
        return self.shard_inputs(pool, step).at(shard).record

    def shard_inputs(self, pool: str, step: str) -> ShardInputs:
        """The inputs of a shard step of `pool` (`at(shard)` gives one shard's)."""
        steps_of: dict[str, Callable[[str], ShardInputs]] = {
            Step.KEYWORDS: self.keywords,
            Step.TOKEN_SEARCH: self.token_search,
            Step.TOKEN_JUDGE: self.token_judge,
            Step.VECTOR_SEARCH: self.vector_search,
            Step.VECTOR_JUDGE: self.vector_judge,
        }
        if step not in steps_of:
            raise ValueError(f"not a shard step: {step!r}")
        return steps_of[step](pool)

    def keywords(self, pool: str) -> KeywordsInputs:
        """Keyword extraction over the pool's questions."""
        return self._inputs(Step.KEYWORDS, pool, self._keywords)

    def _keywords(self, pool: str) -> KeywordsInputs:
        return KeywordsInputs(self.config.keywords, self.questions(pool).fingerprint)

    def token_search(self, pool: str) -> TokenSearchInputs:
        """Token search: k1 and the token index, over the pool's keywords."""
        return self._inputs(Step.TOKEN_SEARCH, pool, self._token_search)

    def _token_search(self, pool: str) -> TokenSearchInputs:
        keywords = self.keywords(pool).record.fingerprint
        index = self.token_index.fingerprint
        return TokenSearchInputs(self.config.build.k1, self.config.token_index, keywords, index)

    def token_judge(self, pool: str) -> TokenJudgeInputs:
        """Token judging: the judge, its windows and early exit, over the token search."""
        return self._inputs(Step.TOKEN_JUDGE, pool, self._token_judge)

    def _token_judge(self, pool: str) -> TokenJudgeInputs:
        config = self.config
        judge_all = config.boundary.judge_all_candidates
        return TokenJudgeInputs(config.judge, config.judging, judge_all, self.token_search(pool))

    def vector_search(self, pool: str) -> VectorSearchInputs:
        """Vector search: k2, the embedder and the vector index, over the token decisions."""
        return self._inputs(Step.VECTOR_SEARCH, pool, self._vector_search)

    def _vector_search(self, pool: str) -> VectorSearchInputs:
        config = self.config
        on_demand = config.vector_index.backend == CANDIDATES
        return VectorSearchInputs(
            config.build.k2,
            config.embedder,
            config.vector_index,
            self.token_judge(pool).record.fingerprint,
            self.vector_index.fingerprint,
            self.token_index.fingerprint if on_demand else None,
        )

    def vector_judge(self, pool: str) -> VectorJudgeInputs:
        """Vector judging: the judge, over the vector candidates."""
        return self._inputs(Step.VECTOR_JUDGE, pool, self._vector_judge)

    def _vector_judge(self, pool: str) -> VectorJudgeInputs:
        return VectorJudgeInputs(self.config.judge, self.vector_search(pool).record.fingerprint)

    def _inputs(self, step: str, pool: str, make: Callable[[str], Inputs]) -> Inputs:
        """`make(pool)`, made once per step and pool."""
        if (step, pool) not in self._shard_inputs:
            self._shard_inputs[step, pool] = make(pool)
        return cast(Inputs, self._shard_inputs[step, pool])

    def partition(self, pool: str) -> StepRecord:
        """A pool's partition: every shard's decisions."""
        return self._once((Step.PARTITION, pool), lambda: self._partition(pool))

    def _partition(self, pool: str) -> StepRecord:
        inputs: dict[str, Any] = {
            Step.QUESTIONS: self.questions(pool).fingerprint,
            Step.VECTOR_JUDGE: self.pool_step(pool, Step.VECTOR_JUDGE).fingerprint,
        }
        return StepRecord(Step.PARTITION, {"pool": pool}, inputs)

    @functools.cached_property
    def split_plan(self) -> SplitPlan:
        """Which pools make which splits."""
        return SplitPlan.of(self.config.splits, self.config.pool_names)

    @functools.cached_property
    def splits(self) -> StepRecord:
        """The splits: the partitions of the pools they use, and [splits]."""
        inputs = {name: self.partition(name).fingerprint for name in self.split_plan.used_pools}
        return StepRecord(Step.SPLITS, {"splits": self.config.splits.identity()}, inputs)

    @functools.cached_property
    def training_index(self) -> StepRecord | None:
        """The training stream's anchor index, for a `[training_order]` that keeps one.

        Keyed by the stream alone (its files by path, size and time, and the settings that
        decide the index), not by the build: every build over the same stream reuses it.
        """
        choice = self.config.training_order
        if choice is None or not isinstance(choice.settings, IndexedOrderSettings):
            return None
        order = {"backend": choice.backend, **choice.settings.index_identity()}
        stream = {"stream": files_stat(choice.settings.files())}
        return StepRecord(Step.TRAINING_INDEX, {"training_order": order}, stream)

    def boundary(self, pool: str) -> StepRecord:
        """A pool's boundary over training time: its partition, dated by the training order."""
        return self._once((Step.BOUNDARY, pool), lambda: self._boundary(pool))

    def _boundary(self, pool: str) -> StepRecord:
        choice = self.config.training_order
        if choice is None:
            raise ConfigError("the boundary step needs a [training_order] section")
        settings = {
            "training_order": choice.identity(),
            "checkpoints": list(self.config.boundary.steps()),
        }
        inputs: dict[str, Any] = {
            Step.PARTITION: self.partition(pool).fingerprint,
            Step.TOKEN_INDEX: self.token_index.fingerprint,
        }
        if isinstance(choice.settings, OrderSettings):
            inputs["training_order"] = choice.settings.inputs()
        if self.training_index is not None:
            inputs[Step.TRAINING_INDEX] = self.training_index.fingerprint
        return StepRecord(Step.BOUNDARY, settings, inputs)

    def _boundaries(self) -> dict[str, str]:
        """The used pools' boundary fingerprints, when a training order is configured."""
        if self.config.training_order is None:
            return {}
        pools = self.split_plan.used_pools
        return {f"{Step.BOUNDARY}.{pool}": self.boundary(pool).fingerprint for pool in pools}

    @functools.cached_property
    def hub_folder(self) -> StepRecord:
        """The Hub-ready folder: the splits (and boundaries) and what the card says."""
        settings = {"hub": self.config.hub.identity()}
        inputs = {Step.SPLITS: self.splits.fingerprint, **self._boundaries()}
        return StepRecord(Step.HUB_FOLDER, settings, inputs)

    @functools.cached_property
    def report(self) -> StepRecord:
        """The build report: the splits (and boundaries)."""
        inputs = {Step.SPLITS: self.splits.fingerprint, **self._boundaries()}
        return StepRecord(Step.REPORT, {}, inputs)

    def cost_preview(self, pool: str) -> StepRecord:
        """PreviewCost: the corpus and its sample, the keywords, the judge's windows and prompt,
        k1 and k2."""
        return self.cost_preview_inputs(pool).record

    def cost_preview_inputs(self, pool: str) -> PreviewInputs:
        """PreviewCost's inputs (see `cost_preview`)."""
        config, build = self.config, self.config.build
        return PreviewInputs(
            config.judge, config.judging, config.boundary.judge_all_candidates,
            build.k1, build.k2, build.cost_sample, build.cost_seed,
            config.token_index, config.embedder, config.corpus,
            self.questions(pool).fingerprint,
            self.pool_step(pool, Step.KEYWORDS).fingerprint,
            self.corpus,
        )  # fmt: skip

    @functools.cached_property
    def annotation_export(self) -> StepRecord:
        """The annotation sample: the pool's partition and the sampling settings."""
        annotation = self.config.annotation
        settings = {"annotation": annotation.identity()}
        inputs: dict[str, Any] = {
            Step.PARTITION: self.partition(annotation.pool).fingerprint,
            Step.TOKEN_INDEX: self.token_index.fingerprint,
        }
        return StepRecord(Step.ANNOTATION_EXPORT, settings, inputs)

    def annotation_agreement(self, completed: list[str]) -> StepRecord:
        """The agreement report: the export and the completed annotation files."""
        settings = {"annotation": self.config.annotation.identity()}
        inputs: dict[str, Any] = {
            Step.ANNOTATION_EXPORT: self.annotation_export.fingerprint,
            "completed": [file_stat(path) for path in completed],
        }
        return StepRecord(Step.ANNOTATION_AGREEMENT, settings, inputs)

    @functools.cached_property
    def annotation_push(self) -> StepRecord:
        """The Label Studio projects: the export, the project prefix and the labelling config."""
        settings = {"labelstudio": self.config.labelstudio.identity()}
        inputs: dict[str, Any] = {Step.ANNOTATION_EXPORT: self.annotation_export.fingerprint}
        return StepRecord(Step.ANNOTATION_PUSH, settings, inputs)

    @functools.cached_property
    def annotation_pull(self) -> StepRecord:
        """A pull from Label Studio (it runs whenever asked: people's work is not an input)."""
        settings = {"labelstudio": self.config.labelstudio.identity()}
        inputs: dict[str, Any] = {Step.ANNOTATION_PUSH: self.annotation_push.fingerprint}
        return StepRecord(Step.ANNOTATION_PULL, settings, inputs)

    def predictions(self, backend: str, split: str) -> StepRecord:
        """A model's predictions on a split: the answerer's settings (knobs out), the splits."""
        key = (Step.PREDICTIONS, backend, split)
        return self._once(key, lambda: self._predictions(backend, split))

    def _predictions(self, backend: str, split: str) -> StepRecord:
        made = self.split_plan.splits
        if split not in made:
            raise ConfigError(
                f"split {split!r} is not made by this configuration (it makes "
                f"{', '.join(made)}; train and validation need [splits] train_pool)"
            )
        settings = {"answerer": self.config.answerer(backend).identity(), "split": split}
        return StepRecord(Step.PREDICTIONS, settings, {Step.SPLITS: self.splits.fingerprint})

    def evaluate(self, backend: str, split: str) -> StepRecord:
        """The scores of those predictions: [evaluate], and the embedder when it reads refusals."""
        key = (Step.EVALUATE, backend, split)
        return self._once(key, lambda: self._evaluate(backend, split))

    def _evaluate(self, backend: str, split: str) -> StepRecord:
        evaluate = self.config.evaluate
        settings: dict[str, Any] = {"evaluate": evaluate.identity()}
        if evaluate.embedding:
            settings["embedder"] = self.config.embedder.identity()
        inputs: dict[str, Any] = {Step.PREDICTIONS: self.predictions(backend, split).fingerprint}
        return StepRecord(Step.EVALUATE, settings, inputs)
