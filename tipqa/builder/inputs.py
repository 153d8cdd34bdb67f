"""The run's inputs: the demo world, the corpus, and the question pools and their shards."""

from __future__ import annotations

import shutil

from tipqa.builder.step_inputs import QuestionsInputs, WorldInputs
from tipqa.config import Choice
from tipqa.config.pools import Pool
from tipqa.core.errors import InputError
from tipqa.core.jsonl import read_records, write_records
from tipqa.core.layout import PoolLayout, RunLayout, ShardLayout
from tipqa.core.records import Question
from tipqa.core.stats import StepStats, read_stats
from tipqa.core.steps import Step
from tipqa.sources.corpus.base import CORPUS_READERS, Corpus
from tipqa.sources.demo.world import DEMO, WorldSpec, write_world
from tipqa.sources.questions.base import QUESTION_SOURCES, FromFiles, QuestionSource


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
    """Load a pool's questions (its first `limit`, read no further); write them as one file
    and as one file per shard.

    Shards of an earlier preparation are removed (their questions may differ). An empty pool
    is an InputError naming the source's files.
    """
    pool, shard_size = inputs.pool, inputs.shard_size
    source = question_source(pool, layout)
    questions = source.load(pool.limit)
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


def shard_questions(shard: ShardLayout) -> list[Question]:
    """The questions of one shard (written when the pool's questions were prepared)."""
    return read_records(shard.questions, Question)


def pool_shards(pool: PoolLayout, count: int) -> list[tuple[list[Question], ShardLayout]]:
    """Every shard of a pool with its questions."""
    return [(shard_questions(pool.shard(i)), pool.shard(i)) for i in range(count)]
