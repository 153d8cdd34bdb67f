"""What each step of a build reads, declared once: one frozen record per step (the plan builds
them; the step receives its record and makes its backends from it and the run's layout).

A record holds the settings that decide the step's output (`settings()`), the fingerprints of
what it reads (`upstream()`), and what the step needs to run that decides nothing (where a
cluster is, whether LLM answers are cached); its `record` is the step's `StepRecord`. A shard
step's pool record has no shard; `at(shard)` gives one shard's (its inputs also name the shard).
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field
from typing import Any, Self

from tipqa.annotation.labelstudio_server import LabelStudioSettings
from tipqa.annotation.settings import AnnotationSettings
from tipqa.audit.pool import AuditRun
from tipqa.audit.settings import AuditSettings
from tipqa.config import Choice, VectorChunkingSettings
from tipqa.config.pools import Pool
from tipqa.core.errors import ConfigError
from tipqa.core.fingerprint import StepInputs, StepRecord, file_stat
from tipqa.core.steps import Step
from tipqa.core.text import word_count
from tipqa.dataset.splits import SplitPlan, SplitSettings
from tipqa.evaluate.score import SCORER_VERSION
from tipqa.evaluate.settings import EvaluateSettings
from tipqa.hub.croissant import CROISSANT_WRITER
from tipqa.hub.settings import HubSettings
from tipqa.indexes.embedders.base import KnowsSequenceLength
from tipqa.indexes.es.client import EsConnection
from tipqa.llm.judges.base import Prompted
from tipqa.llm.prompts import load_template
from tipqa.sources.demo.world import DemoSettings
from tipqa.stages.windows import WindowSettings, WindowStepSettings
from tipqa.training_order.base import IndexedOrderSettings


@dataclass(frozen=True)
class WorldInputs(StepInputs):
    """The demo world: its settings, and k1 (it sizes the discarded cases)."""

    step = Step.WORLD
    demo: DemoSettings
    k1: int

    def settings(self) -> dict[str, Any]:
        return {"demo": self.demo.identity(), "k1": self.k1}


@dataclass(frozen=True)
class QuestionsInputs(StepInputs):
    """A pool's questions: the pool's settings and raw input (`source`), and the shard size."""

    step = Step.QUESTIONS
    pool: Pool
    shard_size: int
    source: Any

    def settings(self) -> dict[str, Any]:
        return {"pool": self.pool.identity(), "shard_size": self.shard_size}

    def upstream(self) -> dict[str, Any]:
        return {"source": self.source}


@dataclass(frozen=True)
class IndexInputs(StepInputs):
    """An index build's corpus: its reader and identity (`corpus`), and the Elasticsearch
    cluster's identity when an index of the build lives there; `cluster` is where to connect."""

    reader: Choice
    corpus: dict[str, Any]
    elasticsearch: dict[str, Any] | None
    cluster: EsConnection

    @property
    def backend(self) -> Choice:
        """The index's backend and its settings."""
        raise NotImplementedError

    def upstream(self) -> dict[str, Any]:
        cluster = {} if self.elasticsearch is None else {"elasticsearch": self.elasticsearch}
        return {"corpus": self.corpus, **cluster}


@dataclass(frozen=True)
class TokenIndexInputs(IndexInputs):
    """The token index: the index backend's build settings, over the corpus."""

    step = Step.TOKEN_INDEX
    token_index: Choice

    @property
    def backend(self) -> Choice:
        return self.token_index

    def settings(self) -> dict[str, Any]:
        return {"token_index": self.token_index.build_identity()}


@dataclass(frozen=True)
class VectorIndexInputs(IndexInputs):
    """The vector index: the embedder (passages), the index and the chunking, over the corpus."""

    step = Step.VECTOR_INDEX
    embedder: Choice
    vector_index: Choice
    vector_chunking: VectorChunkingSettings

    @property
    def backend(self) -> Choice:
        return self.vector_index

    def settings(self) -> dict[str, Any]:
        return {
            "embedder": self.embedder.build_identity(),
            "vector_index": self.vector_index.build_identity(),
            "chunking": self.vector_chunking.identity(),
        }


@dataclass(frozen=True)
class IndexPartInputs(StepInputs):
    """A step of an index built in parts: one corpus file (`file`), or the start (None)."""

    index: TokenIndexInputs | VectorIndexInputs
    file: str | None = None

    def upstream(self) -> dict[str, Any]:
        part = {} if self.file is None else {"file": self.file}
        return {self.index.step: self.index.fingerprint, **part}

    @functools.cached_property
    def record(self) -> StepRecord:
        """`token_index_start`, `token_index_file`, ... (steps of the index step's own)."""
        kind = "start" if self.file is None else "file"
        return StepRecord(f"{self.index.step}_{kind}", self.settings(), self.upstream())


@dataclass(frozen=True)
class ShardInputs(StepInputs):
    """A shard step's inputs: a pool's (`shard` None), or one shard's."""

    pool: str = field(kw_only=True)
    shard: int | None = field(default=None, kw_only=True)

    def at(self, shard: int) -> Self:
        """The same inputs for one shard of the pool."""
        return dataclasses.replace(self, shard=shard)

    @functools.cached_property
    def record(self) -> StepRecord:
        """The step's record; one shard's also names the shard among its inputs."""
        shard = {} if self.shard is None else {"shard": self.shard}
        return StepRecord(self.step, self.settings(), {**self.upstream(), **shard})


@dataclass(frozen=True)
class AsksLLM(StepInputs):
    """A step that may ask an LLM (`llm`), its answers cached under the run or not."""

    llm_cache: bool = field(default=True, kw_only=True)

    @property
    def llm(self) -> Choice:
        """The seam whose backend the step asks."""
        raise NotImplementedError


@dataclass(frozen=True)
class KeywordsInputs(ShardInputs, AsksLLM):
    """Keyword extraction: the extractor, over the pool's questions."""

    step = Step.KEYWORDS
    keywords: Choice
    questions: str

    @property
    def llm(self) -> Choice:
        return self.keywords

    def settings(self) -> dict[str, Any]:
        return {"keywords": self.keywords.identity()}

    def upstream(self) -> dict[str, Any]:
        return {Step.QUESTIONS: self.questions}


@dataclass(frozen=True)
class TokenSearchInputs(ShardInputs):
    """Token search: k1 and the token index's search settings, over the keywords."""

    step = Step.TOKEN_SEARCH
    k1: int
    index: TokenIndexInputs
    keywords: str

    def settings(self) -> dict[str, Any]:
        return {"k1": self.k1, "token_index": self.index.token_index.identity()}

    def upstream(self) -> dict[str, Any]:
        return {Step.KEYWORDS: self.keywords, Step.TOKEN_INDEX: self.index.fingerprint}


def judge_all_setting(judge_all: bool) -> dict[str, Any]:
    """`[boundary] judge_all_candidates`, only when on (so builds without it keep theirs)."""
    return {"judge_all_candidates": True} if judge_all else {}


def confirm_setting(confirm: Choice | None) -> dict[str, Any]:
    """`[judge.confirm]`, only when set (so builds without it keep their fingerprints)."""
    return {"confirm": confirm.identity()} if confirm is not None else {}


@dataclass(frozen=True)
class TokenJudgeInputs(ShardInputs, AsksLLM):
    """Token judging: the judge, its windows and early exit, over the token search (its k1 and
    its index, whose documents are judged)."""

    step = Step.TOKEN_JUDGE
    judge: Choice
    judging: WindowStepSettings
    judge_all: bool
    search: TokenSearchInputs
    confirm: Choice | None = field(default=None, kw_only=True)

    @property
    def llm(self) -> Choice:
        return self.judge

    @property
    def k1(self) -> int:
        """The candidates judged per question: the token search's k1."""
        return self.search.k1

    @property
    def documents(self) -> TokenIndexInputs:
        """The index the judged documents come from."""
        return self.search.index

    def window_limits(self) -> WindowSettings:
        """The judge-window limits (`max_words` from the judge's context when unset)."""
        return self.judging.resolve_for(self.judge.settings)

    def settings(self) -> dict[str, Any]:
        identity = {"judge": self.judge.identity(), "windows": self.judging.identity()}
        return {**identity, **judge_all_setting(self.judge_all), **confirm_setting(self.confirm)}

    def upstream(self) -> dict[str, Any]:
        return {Step.TOKEN_SEARCH: self.search.fingerprint}


@dataclass(frozen=True)
class VectorSearchInputs(ShardInputs):
    """Vector search: k2, the embedder and the vector index, over the token decisions.

    `tokens` is the token index when the vector stage embeds the token candidates on demand
    (`[vector_index] backend = candidates`), else None.
    """

    step = Step.VECTOR_SEARCH
    k2: int
    index: VectorIndexInputs
    judged: str
    tokens: TokenIndexInputs | None

    def settings(self) -> dict[str, Any]:
        return {
            "k2": self.k2,
            "embedder": self.index.embedder.identity(),
            "vector_index": self.index.vector_index.identity(),
        }

    def upstream(self) -> dict[str, Any]:
        found: dict[str, Any] = {
            Step.TOKEN_JUDGE: self.judged,
            Step.VECTOR_INDEX: self.index.fingerprint,
        }
        if self.tokens is not None:
            found[Step.TOKEN_INDEX] = self.tokens.fingerprint
        return found


@dataclass(frozen=True)
class VectorJudgeInputs(ShardInputs, AsksLLM):
    """Vector judging: the judge, over the vector candidates; `documents` is the token index,
    read only to say where each chunk is in its document."""

    step = Step.VECTOR_JUDGE
    judge: Choice
    search: str
    documents: TokenIndexInputs
    confirm: Choice | None = field(default=None, kw_only=True)

    @property
    def llm(self) -> Choice:
        return self.judge

    def settings(self) -> dict[str, Any]:
        return {"judge": self.judge.identity(), **confirm_setting(self.confirm)}

    def upstream(self) -> dict[str, Any]:
        return {Step.VECTOR_SEARCH: self.search}


@dataclass(frozen=True)
class PreviewInputs(StepInputs):
    """PreviewCost: the judge and its windows, k1 and k2, the corpus sample (share and seed),
    the token index and embedder, over a pool's questions and keywords and the corpus."""

    step = Step.COST_PREVIEW
    pool: str
    judge: Choice
    judging: WindowStepSettings
    judge_all: bool
    k1: int
    k2: int
    share: float
    seed: int
    token_index: Choice
    embedder: Choice
    reader: Choice
    questions: str
    keywords: str
    corpus: dict[str, Any]
    confirm: Choice | None = field(default=None, kw_only=True)

    def settings(self) -> dict[str, Any]:
        return {
            **confirm_setting(self.confirm),
            "judge": self.judge.identity(),
            "windows": self.judging.identity(),
            "k1": self.k1,
            "k2": self.k2,
            "cost_sample": self.share,
            "cost_seed": self.seed,
            "token_index": self.token_index.identity(),
            "embedder": self.embedder.identity(),
            **judge_all_setting(self.judge_all),
        }

    def upstream(self) -> dict[str, Any]:
        return {Step.QUESTIONS: self.questions, Step.KEYWORDS: self.keywords, "corpus": self.corpus}

    def window_limits(self) -> WindowSettings:
        """The judge-window limits (`max_words` from the judge's context when unset)."""
        return self.judging.resolve_for(self.judge.settings)

    def prompt_words(self) -> int:
        """The words of the judge's prompt template (0 for a judge without a prompt)."""
        settings = self.judge.settings
        return (
            word_count(load_template(settings.prompt).text) if isinstance(settings, Prompted) else 0
        )

    def chunk_tokens(self) -> int:
        """The embedder's chunk size in tokens (ConfigError when it cannot tell)."""
        settings = self.embedder.settings
        if not isinstance(settings, KnowsSequenceLength):
            raise ConfigError(f"embedder {self.embedder.backend!r} cannot tell its chunk size")
        return settings.max_seq_length()


@dataclass(frozen=True)
class PartitionInputs(StepInputs):
    """A pool's partition: every shard's decisions, over the pool's questions."""

    step = Step.PARTITION
    pool: str
    questions: str
    judged: str

    def settings(self) -> dict[str, Any]:
        return {"pool": self.pool}

    def upstream(self) -> dict[str, Any]:
        return {Step.QUESTIONS: self.questions, Step.VECTOR_JUDGE: self.judged}


def by_step(step: Step, fingerprints: dict[str, str]) -> dict[str, str]:
    """Fingerprints by pool as inputs named `<step>.<pool>`."""
    return {f"{step}.{pool}": fingerprint for pool, fingerprint in fingerprints.items()}


@dataclass(frozen=True)
class SplitsInputs(StepInputs):
    """The splits: [splits] and how they are made (`split_plan`), over the partitions of the
    pools they use (`partitions`, by pool), their verbatim counts (`verbatim_counts`, by pool,
    with `[audit] verbatim`), and their audits when the audit's findings are applied (`audits`,
    by pool; empty otherwise)."""

    step = Step.SPLITS
    splits: SplitSettings
    split_plan: SplitPlan
    partitions: dict[str, str]
    verbatim_counts: dict[str, str]
    audits: dict[str, str]

    def settings(self) -> dict[str, Any]:
        plan = self.split_plan
        audit = {"verbatim": plan.verbatim, "apply": plan.apply_audit}
        return {"splits": self.splits.identity(), "audit": audit}

    def upstream(self) -> dict[str, Any]:
        verbatim = by_step(Step.VERBATIM, self.verbatim_counts)
        return {**self.partitions, **verbatim, **by_step(Step.AUDIT, self.audits)}


@dataclass(frozen=True)
class TrainingIndexInputs(StepInputs):
    """The training stream's anchor index: the order's index settings over its stream files.

    Keyed by the stream alone, not by the build: every build over the same stream reuses it.
    """

    step = Step.TRAINING_INDEX
    order: Choice
    stream: list[dict[str, Any]]

    @property
    def indexed(self) -> IndexedOrderSettings:
        """The order's settings, of an order that keeps an index of its stream."""
        if not isinstance(self.order.settings, IndexedOrderSettings):
            raise ConfigError(f"training order {self.order.backend!r} keeps no stream index")
        return self.order.settings

    def settings(self) -> dict[str, Any]:
        identity = {"backend": self.order.backend, **self.indexed.index_identity()}
        return {"training_order": identity}

    def upstream(self) -> dict[str, Any]:
        return {"stream": self.stream}


@dataclass(frozen=True)
class BoundaryInputs(StepInputs):
    """A pool's boundary over training time: its partition dated by the training order.

    `judged` is the pool's token judging, whose windows the evidence is cut again as.
    """

    step = Step.BOUNDARY
    pool: str
    order: Choice
    checkpoints: tuple[int, ...]
    partition: str
    index: TokenIndexInputs
    order_files: dict[str, Any] | None
    training_index: TrainingIndexInputs | None
    judged: TokenJudgeInputs

    def settings(self) -> dict[str, Any]:
        return {"training_order": self.order.identity(), "checkpoints": list(self.checkpoints)}

    def upstream(self) -> dict[str, Any]:
        found: dict[str, Any] = {
            Step.PARTITION: self.partition,
            Step.TOKEN_INDEX: self.index.fingerprint,
        }
        if self.order_files is not None:
            found["training_order"] = self.order_files
        if self.training_index is not None:
            found[Step.TRAINING_INDEX] = self.training_index.fingerprint
        return found


@dataclass(frozen=True)
class Dating:
    """The boundary over training time, for the steps after the splits: the training order,
    its checkpoints, and the fingerprints of the pools' boundary steps (`boundary.<pool>`)."""

    order: Choice
    checkpoints: tuple[int, ...]
    boundaries: dict[str, str]


@dataclass(frozen=True)
class AfterSplitsInputs(StepInputs):
    """A step over the splits (and their pools' boundaries, when dated, and audits, when on:
    `audits` by pool), whose explorer page reads window texts from the token index (`index`)."""

    splits: str
    dating: Dating | None
    index: TokenIndexInputs
    audits: dict[str, str]

    def upstream(self) -> dict[str, Any]:
        boundaries = {} if self.dating is None else self.dating.boundaries
        return {Step.SPLITS: self.splits, **boundaries, **by_step(Step.AUDIT, self.audits)}


@dataclass(frozen=True)
class HubInputs(AfterSplitsInputs):
    """The Hub-ready folder: what [hub] says of the card, over the splits; the judge's
    agreement with people (`agreement`) once every annotator's file is in."""

    step = Step.HUB_FOLDER
    hub: HubSettings
    agreement: AgreementInputs | None

    def settings(self) -> dict[str, Any]:
        return {"hub": self.hub.identity()}

    def upstream(self) -> dict[str, Any]:
        found = {**super().upstream(), "croissant": CROISSANT_WRITER}
        if self.agreement is not None:
            found[Step.ANNOTATION_AGREEMENT] = self.agreement.fingerprint
        return found


@dataclass(frozen=True)
class ReportInputs(AfterSplitsInputs):
    """The build report, over the splits."""

    step = Step.REPORT


@dataclass(frozen=True)
class AnnotationExportInputs(StepInputs):
    """The annotation sample: [annotation], over the pool's partition and the token index."""

    step = Step.ANNOTATION_EXPORT
    annotation: AnnotationSettings
    partition: str
    index: TokenIndexInputs

    def settings(self) -> dict[str, Any]:
        return {"annotation": self.annotation.identity()}

    def upstream(self) -> dict[str, Any]:
        return {Step.PARTITION: self.partition, Step.TOKEN_INDEX: self.index.fingerprint}


@dataclass(frozen=True)
class AgreementInputs(AsksLLM):
    """The agreement report: [annotation], over the export and the completed files (by size
    and modification time); with `[audit.judge]`, that judge's agreement with people too."""

    step = Step.ANNOTATION_AGREEMENT
    annotation: AnnotationSettings
    export: str
    completed: tuple[str, ...]
    audit_judge: Choice | None = None

    @property
    def llm(self) -> Choice:
        if self.audit_judge is None:
            raise ValueError("an agreement report without [audit.judge] asks no LLM")
        return self.audit_judge

    def settings(self) -> dict[str, Any]:
        second = {} if self.audit_judge is None else {"audit_judge": self.audit_judge.identity()}
        return {"annotation": self.annotation.identity(), **second}

    def upstream(self) -> dict[str, Any]:
        completed = [file_stat(path) for path in self.completed]
        return {Step.ANNOTATION_EXPORT: self.export, "completed": completed}


@dataclass(frozen=True)
class PushInputs(StepInputs):
    """The Label Studio projects: the prefix and the labelling config, over the export."""

    step = Step.ANNOTATION_PUSH
    labelstudio: LabelStudioSettings
    annotation: AnnotationSettings
    export: str

    def settings(self) -> dict[str, Any]:
        return {"labelstudio": self.labelstudio.identity()}

    def upstream(self) -> dict[str, Any]:
        return {Step.ANNOTATION_EXPORT: self.export}


@dataclass(frozen=True)
class PullInputs(StepInputs):
    """A pull from Label Studio, after the push (people's work is not an input: it runs
    whenever asked)."""

    step = Step.ANNOTATION_PULL
    push: PushInputs

    def settings(self) -> dict[str, Any]:
        return self.push.settings()

    def upstream(self) -> dict[str, Any]:
        return {Step.ANNOTATION_PUSH: self.push.fingerprint}


@dataclass(frozen=True)
class PredictionsInputs(AsksLLM):
    """A model's predictions on a split: the answerer's settings (knobs out), over the splits."""

    step = Step.PREDICTIONS
    answerer: Choice
    split: str
    splits: str

    @property
    def llm(self) -> Choice:
        return self.answerer

    def settings(self) -> dict[str, Any]:
        return {"answerer": self.answerer.identity(), "split": self.split}

    def upstream(self) -> dict[str, Any]:
        return {Step.SPLITS: self.splits}


@dataclass(frozen=True)
class EvaluateInputs(StepInputs):
    """The scores of predictions: [evaluate], the embedder when it reads refusals, and the
    scorer's version; with temperature scaling, the evaluation of the validation split whose
    confidences it fits (`fit_on`)."""

    step = Step.EVALUATE
    evaluate: EvaluateSettings
    embedder: Choice | None
    predictions: PredictionsInputs
    fit_on: EvaluateInputs | None

    def settings(self) -> dict[str, Any]:
        embedder = {} if self.embedder is None else {"embedder": self.embedder.identity()}
        return {"evaluate": self.evaluate.identity(), **embedder}

    def upstream(self) -> dict[str, Any]:
        fit = {} if self.fit_on is None else {"fit_on": self.fit_on.fingerprint}
        return {Step.PREDICTIONS: self.predictions.fingerprint, "scorer": SCORER_VERSION, **fit}


@dataclass(frozen=True)
class AuditInputs(AsksLLM):
    """The audit of a pool: [audit] (its verbatim and apply keys aside), the judge and its
    windows, k1 and k2, the searches of the token and vector indexes, over the partition and both
    indexes; with `[audit.judge]`, the judge audit's judge and `judge_sample`."""

    step = Step.AUDIT
    pool: str
    audit: AuditSettings
    judge: Choice
    judging: WindowStepSettings
    k1: int
    k2: int
    partition: str
    tokens: TokenIndexInputs
    vectors: VectorIndexInputs
    audit_judge: Choice | None = None

    @property
    def llm(self) -> Choice:
        return self.judge

    def settings(self) -> dict[str, Any]:
        judged = self.audit_judge is not None
        second = {"audit_judge": self.audit_judge.identity()} if self.audit_judge else {}
        return {
            "audit": self.audit.audit_identity(judged),
            **second,
            "judge": self.judge.identity(),
            "windows": self.judging.identity(),
            "k1": self.k1,
            "k2": self.k2,
            "token_index": self.tokens.token_index.identity(),
            "embedder": self.vectors.embedder.identity(),
            "vector_index": self.vectors.vector_index.identity(),
        }

    def upstream(self) -> dict[str, Any]:
        return {
            Step.PARTITION: self.partition,
            Step.TOKEN_INDEX: self.tokens.fingerprint,
            Step.VECTOR_INDEX: self.vectors.fingerprint,
        }

    def audit_run(self) -> AuditRun:
        """What the audit is asked to do, its judge windows resolved as the build's."""
        limits = self.judging.resolve_for(self.judge.settings)
        return AuditRun(self.audit, self.k1, self.k2, limits, self.record)


@dataclass(frozen=True)
class VerbatimInputs(StepInputs):
    """The verbatim count of a pool: the token index's searches, over the questions and index."""

    step = Step.VERBATIM
    pool: str
    questions: str
    index: TokenIndexInputs

    def settings(self) -> dict[str, Any]:
        return {"token_index": self.index.token_index.identity()}

    def upstream(self) -> dict[str, Any]:
        return {Step.QUESTIONS: self.questions, Step.TOKEN_INDEX: self.index.fingerprint}
