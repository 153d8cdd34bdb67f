"""The build plan: what every step's output is made from, and so its fingerprint.

`Plan(config)` gives, for each step, its inputs record (`tipqa.builder.step_inputs`): the settings
that decide the step's output, the fingerprints of what it reads, and what it needs to run; its
`record` (a `StepRecord`, written into the step's stats file as provenance) and `fingerprint`
follow. Computing a plan reads no data and loads no model: raw inputs are known by file path,
size and modification time (corpus files) or by content hash (question files, which are
small). This module is the one table of "which setting affects which step", and the one reader
of the configuration for the steps.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar, cast

from tipqa.annotation.importing import all_completed
from tipqa.annotation.items import annotator_names
from tipqa.builder.step_inputs import (
    AgreementInputs,
    AnnotationExportInputs,
    AuditInputs,
    BoundaryInputs,
    Dating,
    EvaluateInputs,
    HubInputs,
    IndexPartInputs,
    KeywordsInputs,
    PartitionInputs,
    PredictionsInputs,
    PreviewInputs,
    PullInputs,
    PushInputs,
    QuestionsInputs,
    ReportInputs,
    ShardInputs,
    SplitsInputs,
    TokenIndexInputs,
    TokenJudgeInputs,
    TokenSearchInputs,
    TrainingIndexInputs,
    VectorIndexInputs,
    VectorJudgeInputs,
    VectorSearchInputs,
    VerbatimInputs,
    WorldInputs,
)
from tipqa.config import Choice, Config
from tipqa.config.pools import POOL_PREFIX, Pool
from tipqa.core.errors import ConfigError, InputError
from tipqa.core.fingerprint import StepInputs, content_hash, file_stat, files_stat
from tipqa.core.layout import RunLayout
from tipqa.core.steps import Step
from tipqa.dataset.splits import SplitPlan
from tipqa.indexes.vector_index.base import CANDIDATES
from tipqa.sources.corpus.base import ReadsFiles
from tipqa.sources.demo.world import DEMO
from tipqa.sources.hf_datasets import LocalDataset
from tipqa.sources.questions.base import QUESTION_SOURCES, FromFiles
from tipqa.training_order.base import IndexedOrderSettings, OrderSettings

Inputs = TypeVar("Inputs", bound=StepInputs)
VALIDATION = "validation"
"""The split whose confidences fit the temperatures of `[evaluate] temperature_scaling`."""


INDEX_BUILDS = "BuildTokenIndex and BuildVectorIndex"


@contextmanager
def reading(setting: str, step: str) -> Iterator[None]:
    """An InputError about a step's input files said with the setting that names them, the
    step that reads them, and where a relative path starts from."""
    try:
        yield
    except InputError as exc:
        raise InputError(
            f"{setting}{exc} (read by {step}; a relative path is relative to the working "
            f"folder, {Path.cwd()})"
        ) from None


def _checked(inputs: Inputs) -> Inputs:
    """`inputs`, its record made at once: a bad setting is the plan's error, not the step's."""
    _ = inputs.record
    return inputs


class Plan:
    """Every step's inputs record for one configuration (each made once)."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self._memo: dict[tuple[str, ...], StepInputs] = {}

    def _once(self, key: tuple[str, ...], make: Callable[[], Inputs]) -> Inputs:
        """The record `make()` makes, made once per key (the step and what it is of)."""
        if key not in self._memo:
            self._memo[key] = _checked(make())
        return cast(Inputs, self._memo[key])

    @property
    def layout(self) -> RunLayout:
        """The run's output tree."""
        return self.config.layout()

    @property
    def pool_names(self) -> list[str]:
        """The configured question pools, in order."""
        return self.config.pool_names

    @property
    def uses_demo(self) -> bool:
        """True when the corpus or a pool comes from the demo world (built first)."""
        return self.config.uses_demo

    @property
    def world(self) -> WorldInputs:
        """The demo world: its settings, and k1 (it sizes the discarded cases)."""
        return self._once((Step.WORLD,), self._world)

    def _world(self) -> WorldInputs:
        return WorldInputs(self.config.demo, self.config.build.k1)

    @functools.cached_property
    def corpus(self) -> dict[str, Any]:
        """The corpus as an input: the reader's settings and its files (or the demo world)."""
        corpus = self.config.corpus
        if corpus.backend == DEMO:
            return {"source": DEMO, "world": self.world.fingerprint}
        identity = corpus.identity()
        if isinstance(corpus.settings, ReadsFiles):
            with reading("", INDEX_BUILDS):
                identity["files"] = [file_stat(path) for path in corpus.settings.files()]
        if isinstance(corpus.settings, LocalDataset) and (local := corpus.settings.local_files()):
            identity["files"] = files_stat(local)
        return identity

    @property
    def _cluster(self) -> dict[str, Any] | None:
        """The Elasticsearch cluster's identity, when an index lives there."""
        config = self.config
        return config.elasticsearch.identity() if config.uses_elasticsearch else None

    @property
    def token_index(self) -> TokenIndexInputs:
        """The token index: the corpus and the index backend's build settings."""
        return self._once((Step.TOKEN_INDEX,), self._token_index)

    def _token_index(self) -> TokenIndexInputs:
        config = self.config
        return TokenIndexInputs(
            config.corpus, self.corpus, self._cluster, config.elasticsearch, config.token_index
        )

    @property
    def vector_index(self) -> VectorIndexInputs:
        """The vector index: the corpus, the embedder (passages), chunking and the index."""
        return self._once((Step.VECTOR_INDEX,), self._vector_index)

    def _vector_index(self) -> VectorIndexInputs:
        config = self.config
        return VectorIndexInputs(
            config.corpus, self.corpus, self._cluster, config.elasticsearch,
            config.embedder, config.vector_index, config.vector_chunking,
        )  # fmt: skip

    def index(self, step: str) -> TokenIndexInputs | VectorIndexInputs:
        """The token or the vector index build (`Step.TOKEN_INDEX` or `Step.VECTOR_INDEX`)."""
        if step not in (Step.TOKEN_INDEX, Step.VECTOR_INDEX):
            raise ValueError(f"not an index step: {step!r}")
        return self.token_index if step == Step.TOKEN_INDEX else self.vector_index

    def index_start(self, step: str) -> IndexPartInputs:
        """Starting an index built in parts (creating it in build mode)."""
        return IndexPartInputs(self.index(step))

    def index_part(self, step: str, corpus_file: str) -> IndexPartInputs:
        """One corpus file's part of an index built in parts."""
        return IndexPartInputs(self.index(step), corpus_file)

    def questions(self, pool: str) -> QuestionsInputs:
        """A pool's questions: the source's settings and files, the limit and shard size."""
        return self._once((Step.QUESTIONS, pool), lambda: self._questions(self.config.pool(pool)))

    def _questions(self, pool: Pool) -> QuestionsInputs:
        return QuestionsInputs(pool, self.config.build.shard_size, self._pool_input(pool))

    def _pool_input(self, pool: Pool) -> Any:
        """The pool's raw input: the demo world, its files by content, or a Hub dataset (a
        local dataset folder's files by path, size and time)."""
        if pool.source == DEMO:
            if self.config.corpus.backend != DEMO:
                raise ConfigError(
                    f"pool {pool.name!r} is the demo's questions, about the demo's own corpus, "
                    f"but [corpus] source = {self.config.corpus.backend}: give your questions "
                    f"in a [pool.NAME] section (docs/getting-started.md)"
                )
            return {"world": self.world.fingerprint}
        with reading(f"[{POOL_PREFIX}{pool.name}] paths: ", f"PrepareQuestions(pool={pool.name})"):
            source = QUESTION_SOURCES.create(pool.source, pool.settings)
        found: dict[str, Any] = {}
        if isinstance(source, FromFiles):
            hashed = [{"path": str(path), "sha256": content_hash(path)} for path in source.files]
            found["files"] = hashed
        else:
            found["dataset"] = pool.identity()
        if isinstance(pool.settings, LocalDataset) and (local := pool.settings.local_files()):
            found["dataset_files"] = files_stat(local)
        return found

    def pool_step(self, pool: str, step: str) -> ShardInputs:
        """A shard step of `pool`, for every shard at once (`at(shard)` gives one shard's)."""
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

    def shard(self, pool: str, step: str, shard: int) -> ShardInputs:
        """One shard's inputs of a shard step."""
        return self.pool_step(pool, step).at(shard)

    @property
    def _llm_cache(self) -> bool:
        """Whether LLM answers are cached under the run (`[build] llm_cache`)."""
        return self.config.build.llm_cache

    def keywords(self, pool: str) -> KeywordsInputs:
        """Keyword extraction over the pool's questions."""
        return self._once((Step.KEYWORDS, pool), lambda: self._keywords(pool))

    def _keywords(self, pool: str) -> KeywordsInputs:
        questions = self.questions(pool).fingerprint
        cache = self._llm_cache
        return KeywordsInputs(self.config.keywords, questions, pool=pool, llm_cache=cache)

    def token_search(self, pool: str) -> TokenSearchInputs:
        """Token search: k1 and the token index, over the pool's keywords."""
        return self._once((Step.TOKEN_SEARCH, pool), lambda: self._token_search(pool))

    def _token_search(self, pool: str) -> TokenSearchInputs:
        keywords = self.keywords(pool).fingerprint
        return TokenSearchInputs(self.config.build.k1, self.token_index, keywords, pool=pool)

    def token_judge(self, pool: str) -> TokenJudgeInputs:
        """Token judging: the judge, its windows and early exit, over the token search."""
        return self._once((Step.TOKEN_JUDGE, pool), lambda: self._token_judge(pool))

    def _token_judge(self, pool: str) -> TokenJudgeInputs:
        config = self.config
        return TokenJudgeInputs(
            config.judge, config.judging, config.boundary.judge_all_candidates,
            self.token_search(pool), pool=pool, llm_cache=self._llm_cache,
            confirm=config.confirm_judge,
        )  # fmt: skip

    def vector_search(self, pool: str) -> VectorSearchInputs:
        """Vector search: k2, the embedder and the vector index, over the token decisions."""
        return self._once((Step.VECTOR_SEARCH, pool), lambda: self._vector_search(pool))

    def _vector_search(self, pool: str) -> VectorSearchInputs:
        config = self.config
        on_demand = config.vector_index.backend == CANDIDATES
        judged = self.token_judge(pool).fingerprint
        tokens = self.token_index if on_demand else None
        return VectorSearchInputs(config.build.k2, self.vector_index, judged, tokens, pool=pool)

    def vector_judge(self, pool: str) -> VectorJudgeInputs:
        """Vector judging: the judge, over the vector candidates."""
        return self._once((Step.VECTOR_JUDGE, pool), lambda: self._vector_judge(pool))

    def _vector_judge(self, pool: str) -> VectorJudgeInputs:
        search = self.vector_search(pool).fingerprint
        judge, cache = self.config.judge, self._llm_cache
        return VectorJudgeInputs(
            judge, search, self.token_index, pool=pool, llm_cache=cache,
            confirm=self.config.confirm_judge,
        )  # fmt: skip

    def partition(self, pool: str) -> PartitionInputs:
        """A pool's partition: every shard's decisions."""
        return self._once((Step.PARTITION, pool), lambda: self._partition(pool))

    def _partition(self, pool: str) -> PartitionInputs:
        questions = self.questions(pool).fingerprint
        return PartitionInputs(pool, questions, self.vector_judge(pool).fingerprint)

    @functools.cached_property
    def split_plan(self) -> SplitPlan:
        """Which pools make which splits (with their verbatim counts, and the audit applied)."""
        audit = self.config.audit
        return SplitPlan.of(
            self.config.splits,
            self.config.pool_names,
            verbatim=audit.verbatim,
            apply_audit=audit.on and audit.apply,
        )

    @property
    def splits(self) -> SplitsInputs:
        """The splits: the partitions of the pools they use, and [splits]."""
        return self._once((Step.SPLITS,), self._splits)

    def _splits(self) -> SplitsInputs:
        plan, pools = self.split_plan, self.split_plan.used_pools
        partitions = {name: self.partition(name).fingerprint for name in pools}
        verbatim = (
            {name: self.verbatim(name).fingerprint for name in pools} if plan.verbatim else {}
        )
        audits = self._audits_of(pools) if plan.apply_audit else {}
        return SplitsInputs(self.config.splits, plan, partitions, verbatim, audits)

    def audit(self, pool: str) -> AuditInputs:
        """The audit of a pool's unanswerable and discarded labels: [audit], the judge and its
        windows, k1, k2, the searches, over the partition and both indexes."""
        return self._once((Step.AUDIT, pool), lambda: self._audit(pool))

    def _audit(self, pool: str) -> AuditInputs:
        config = self.config
        return AuditInputs(
            pool, config.audit, config.judge, config.judging, config.build.k1, config.build.k2,
            self.partition(pool).fingerprint, self.token_index, self.vector_index,
            llm_cache=self._llm_cache,
        )  # fmt: skip

    @property
    def audited(self) -> bool:
        """True when the pools are audited (`[audit] sample` above 0)."""
        return self.config.audit.on

    def _audits_of(self, pools: list[str]) -> dict[str, str]:
        """The audits' fingerprints of `pools`, by pool (none when the audit is off)."""
        if not self.audited:
            return {}
        return {pool: self.audit(pool).fingerprint for pool in pools}

    def verbatim(self, pool: str) -> VerbatimInputs:
        """The verbatim count of a pool's questions in the token index."""
        return self._once((Step.VERBATIM, pool), lambda: self._verbatim(pool))

    def _verbatim(self, pool: str) -> VerbatimInputs:
        return VerbatimInputs(pool, self.questions(pool).fingerprint, self.token_index)

    @functools.cached_property
    def annotation_completed(self) -> list[Path] | None:
        """Every annotator's completed file of `[annotation]`, None while one is missing."""
        settings = self.config.annotation
        names = annotator_names(settings.annotators)
        return all_completed(Path(settings.completed_dir), names)

    @functools.cached_property
    def training_order(self) -> Choice | None:
        """The training order, when the boundary over training time is built (decided here)."""
        return self.config.training_order

    @functools.cached_property
    def training_index(self) -> TrainingIndexInputs | None:
        """The training stream's anchor index, for a `[training_order]` that keeps one."""
        choice = self.training_order
        if choice is None or not isinstance(choice.settings, IndexedOrderSettings):
            return None
        with reading("[training_order] path: ", "BuildTrainingIndex"):
            stream = files_stat(choice.settings.files())
        return self._once((Step.TRAINING_INDEX,), lambda: TrainingIndexInputs(choice, stream))

    def boundary(self, pool: str) -> BoundaryInputs:
        """A pool's boundary over training time: its partition, dated by the training order."""
        return self._once((Step.BOUNDARY, pool), lambda: self._boundary(pool))

    def _boundary(self, pool: str) -> BoundaryInputs:
        choice = self.training_order
        if choice is None:
            raise ConfigError("the boundary step needs a [training_order] section")
        order = None
        if isinstance(choice.settings, OrderSettings):
            with reading("[training_order] paths: ", f"Boundary(pool={pool})"):
                order = choice.settings.inputs()
        return BoundaryInputs(
            pool, choice, self.config.boundary.steps(), self.partition(pool).fingerprint,
            self.token_index, order, self.training_index, self.token_judge(pool),
        )  # fmt: skip

    @functools.cached_property
    def dating(self) -> Dating | None:
        """The boundary over training time for the steps after the splits, when it is built."""
        choice = self.training_order
        if choice is None:
            return None
        pools = self.split_plan.used_pools
        boundaries = {f"{Step.BOUNDARY}.{pool}": self.boundary(pool).fingerprint for pool in pools}
        return Dating(choice, self.config.boundary.steps(), boundaries)

    @property
    def hub_folder(self) -> HubInputs:
        """The Hub-ready folder: the splits (and boundaries) and what the card says: the
        audits of the splits' pools, and the judge's agreement with people once annotated."""
        return self._once((Step.HUB_FOLDER,), self._hub_folder)

    def _hub_folder(self) -> HubInputs:
        audits = self._audits_of(self.split_plan.used_pools)
        completed = self.annotation_completed
        agreement = (
            None if completed is None else self.annotation_agreement(list(map(str, completed)))
        )
        return HubInputs(
            self.splits.fingerprint,
            self.dating,
            self.token_index,
            audits,
            self.config.hub,
            agreement,
        )

    @property
    def report(self) -> ReportInputs:
        """The build report: the splits (and boundaries), and the audits of their pools."""
        return self._once((Step.REPORT,), self._report)

    def _report(self) -> ReportInputs:
        audits = self._audits_of(self.split_plan.used_pools)
        return ReportInputs(self.splits.fingerprint, self.dating, self.token_index, audits)

    def cost_preview(self, pool: str) -> PreviewInputs:
        """PreviewCost: the corpus and its sample, the keywords, the judge's windows and prompt,
        k1 and k2."""
        return self._once((Step.COST_PREVIEW, pool), lambda: self._cost_preview(pool))

    def _cost_preview(self, pool: str) -> PreviewInputs:
        config, build = self.config, self.config.build
        return PreviewInputs(
            pool, config.judge, config.judging, config.boundary.judge_all_candidates,
            build.k1, build.k2, build.cost_sample, build.cost_seed,
            config.token_index, config.embedder, config.corpus,
            self.questions(pool).fingerprint, self.keywords(pool).fingerprint, self.corpus,
            confirm=config.confirm_judge,
        )  # fmt: skip

    @property
    def annotation_export(self) -> AnnotationExportInputs:
        """The annotation sample: the pool's partition and the sampling settings."""
        return self._once((Step.ANNOTATION_EXPORT,), self._annotation_export)

    def _annotation_export(self) -> AnnotationExportInputs:
        annotation = self.config.annotation
        partition = self.partition(annotation.pool).fingerprint
        return AnnotationExportInputs(annotation, partition, self.token_index)

    def annotation_agreement(self, completed: list[str]) -> AgreementInputs:
        """The agreement report: the export and the completed annotation files (as they are
        now: not kept, since a pull rewrites them)."""
        export = self.annotation_export
        return _checked(AgreementInputs(export.annotation, export.fingerprint, tuple(completed)))

    @property
    def annotation_push(self) -> PushInputs:
        """The Label Studio projects: the export, the project prefix and the labelling config."""
        return self._once((Step.ANNOTATION_PUSH,), self._annotation_push)

    def _annotation_push(self) -> PushInputs:
        export = self.annotation_export
        return PushInputs(self.config.labelstudio, export.annotation, export.fingerprint)

    @property
    def annotation_pull(self) -> PullInputs:
        """A pull from Label Studio (it runs whenever asked: people's work is not an input)."""
        return self._once((Step.ANNOTATION_PULL,), self._annotation_pull)

    def _annotation_pull(self) -> PullInputs:
        return PullInputs(self.annotation_push)

    def predictions(self, backend: str, split: str) -> PredictionsInputs:
        """A model's predictions on a split: the answerer's settings (knobs out), the splits."""
        key = (Step.PREDICTIONS, backend, split)
        return self._once(key, lambda: self._predictions(backend, split))

    def _predictions(self, backend: str, split: str) -> PredictionsInputs:
        made = self.split_plan.splits
        if split not in made:
            raise ConfigError(
                f"split {split!r} is not made by this configuration (it makes "
                f"{', '.join(made)}; train and validation need [splits] train_pool)"
            )
        answerer, splits = self.config.answerer(backend), self.splits.fingerprint
        return PredictionsInputs(answerer, split, splits, llm_cache=self._llm_cache)

    def evaluate(self, backend: str, split: str) -> EvaluateInputs:
        """The scores of those predictions: [evaluate], the embedder when it reads refusals,
        and with temperature scaling the validation split's evaluation it fits on."""
        key = (Step.EVALUATE, backend, split)
        return self._once(key, lambda: self._evaluate(backend, split))

    def _evaluate(self, backend: str, split: str) -> EvaluateInputs:
        evaluate = self.config.evaluate
        embedder = self.config.embedder if evaluate.embedding else None
        scaled = evaluate.temperature_scaling and split != VALIDATION
        fit_on = self.evaluate(backend, VALIDATION) if scaled else None
        return EvaluateInputs(evaluate, embedder, self.predictions(backend, split), fit_on)
