"""The run's inputs from configuration: the demo world, the corpus, and the question pools."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from typing import Any, ClassVar

from tipqa.config import Choice, VectorStepSettings
from tipqa.config.pools import Pool
from tipqa.core.errors import InputError
from tipqa.core.fingerprint import StepInputs
from tipqa.core.jsonl import write_records
from tipqa.core.layout import PoolLayout, RunLayout
from tipqa.core.stats import StepStats, read_stats
from tipqa.core.steps import Step
from tipqa.sources.corpus.base import CORPUS_READERS, Corpus
from tipqa.sources.demo.world import DEMO, DemoSettings, WorldSpec, write_world
from tipqa.sources.questions.base import QUESTION_SOURCES, FromFiles, QuestionSource


@dataclass(frozen=True)
class WorldInputs(StepInputs):
    """The demo world: its settings, and k1 (it sizes the discarded cases)."""

    step: ClassVar[str] = Step.WORLD
    demo: DemoSettings
    k1: int

    def settings(self) -> dict[str, Any]:
        return {"demo": self.demo.identity(), "k1": self.k1}


@dataclass(frozen=True)
class QuestionsInputs(StepInputs):
    """A pool's questions: the pool's settings and raw input (`source`), and the shard size."""

    step: ClassVar[str] = Step.QUESTIONS
    pool: Pool
    shard_size: int
    source: Any

    def settings(self) -> dict[str, Any]:
        return {"pool": self.pool.identity(), "shard_size": self.shard_size}

    def upstream(self) -> dict[str, Any]:
        return {"source": self.source}


@dataclass(frozen=True)
class IndexInputs(StepInputs):
    """An index build's corpus (and, for Elasticsearch, the cluster's identity)."""

    corpus: dict[str, Any]
    elasticsearch: dict[str, Any] | None

    def upstream(self) -> dict[str, Any]:
        cluster = {} if self.elasticsearch is None else {"elasticsearch": self.elasticsearch}
        return {"corpus": self.corpus, **cluster}


@dataclass(frozen=True)
class TokenIndexInputs(IndexInputs):
    """The token index: the index backend's build settings, over the corpus."""

    step: ClassVar[str] = Step.TOKEN_INDEX
    token_index: Choice

    def settings(self) -> dict[str, Any]:
        return {"token_index": self.token_index.build_identity()}


@dataclass(frozen=True)
class VectorIndexInputs(IndexInputs):
    """The vector index: the embedder (passages), the index and the chunking, over the corpus."""

    step: ClassVar[str] = Step.VECTOR_INDEX
    embedder: Choice
    vector_index: Choice
    chunking: VectorStepSettings

    def settings(self) -> dict[str, Any]:
        return {
            "embedder": self.embedder.build_identity(),
            "vector_index": self.vector_index.build_identity(),
            "chunking": self.chunking.identity(),
        }


def make_world(inputs: WorldInputs, layout: RunLayout) -> StepStats:
    """Write the demo world for these settings (its discarded cases sized to k1)."""
    stats = StepStats(Step.WORLD, provenance=inputs.record.provenance())
    demo = inputs.demo
    spec = WorldSpec(documents=demo.documents, seed=demo.seed, k1=inputs.k1, files=demo.files)
    for name, value in write_world(spec, layout.world.root).items():
        stats.add(name, value)
    stats.write(layout.world.stats)
    return stats


def open_corpus(choice: Choice, layout: RunLayout, *, progress: bool | None = None) -> Corpus:
    """The configured corpus reader; `demo` reads the demo world's corpus files."""
    if choice.backend == DEMO:
        settings = CORPUS_READERS.parse("files", "corpus", {"paths": [str(layout.world.corpus)]})
        return CORPUS_READERS.create("files", settings, progress=progress)
    return CORPUS_READERS.create(choice.backend, choice.settings, progress=progress)


def question_source(pool: Pool, layout: RunLayout) -> QuestionSource:
    """The configured question source of a pool; `demo` reads the demo world's questions."""
    if pool.source == DEMO:
        paths = {"paths": [str(layout.world.questions)]}
        return QUESTION_SOURCES.create(
            "tipqa-jsonl", QUESTION_SOURCES.parse("tipqa-jsonl", "", paths)
        )
    return QUESTION_SOURCES.create(pool.source, pool.settings)


def prepare_questions(inputs: QuestionsInputs, layout: RunLayout) -> StepStats:
    """Load a pool's questions; write them as one file and as one file per shard.

    Shards of an earlier preparation are removed (their questions may differ). An empty pool
    is an InputError naming the source's files.
    """
    pool, shard_size = inputs.pool, inputs.shard_size
    source = question_source(pool, layout)
    questions = source.load()
    if pool.limit is not None:
        questions = questions[: pool.limit]
    if not questions:
        files = [str(path) for path in source.files] if isinstance(source, FromFiles) else []
        raise InputError(
            f"question pool {pool.name!r} has no questions (source {pool.source!r})",
            path=", ".join(files) or None,
        )
    out = layout.pool(pool.name)
    info = {"source": pool.source}
    stats = StepStats(Step.QUESTIONS, info=info, provenance=inputs.record.provenance())
    stats.merge(source.stats)
    stats.add("written", len(questions))
    shutil.rmtree(out.shards, ignore_errors=True)
    starts = range(0, len(questions), shard_size)
    for number, start in enumerate(starts):
        write_records(out.shard(number).questions, questions[start : start + shard_size])
    stats.add("shards", len(starts))
    write_records(out.questions, questions)
    stats.write(out.questions_stats)
    return stats


def shard_count(pool: PoolLayout) -> int:
    """How many shards the pool's prepared questions make (from its stats file)."""
    stats = read_stats(pool.questions_stats, "rerun luigi --module pipelines CreateDataset")
    shards = stats.get("counts", {}).get("shards")
    if not isinstance(shards, (int, float)) or shards < 1 or shards != int(shards):
        raise InputError(
            "records no shard count: prepare the questions again", path=str(pool.questions_stats)
        )
    return int(shards)
