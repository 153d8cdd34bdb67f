"""The two steps of the boundary over training time, as the Luigi tasks call them.

`build_training_index` runs the training order's one pass over its stream (its anchor index,
kept beside the runs and reused by every build over the same stream); `pool_boundary` dates
a pool's answerable questions and writes its split as of each checkpoint. Each writes its
stats file last, with the step's provenance.
"""

from __future__ import annotations

from collections.abc import Sequence

from tipqa.boundary.build import relevant_evidence, write_boundary
from tipqa.core.fingerprint import StepRecord
from tipqa.core.jsonl import iter_records, read_records
from tipqa.core.layout import BoundaryLayout, ShardLayout, TrainingIndexLayout
from tipqa.core.records import (
    Evidence,
    Judgment,
    Keywords,
    LabeledQuestion,
    Question,
    VectorInstance,
)
from tipqa.core.stats import StepStats
from tipqa.core.steps import Step
from tipqa.dataset.partition import label_questions
from tipqa.indexes.token_index.base import FetchDocuments
from tipqa.stages.windows import WindowSettings
from tipqa.training_order.base import BuildsIndex, TrainingOrder


def build_training_index(
    order: BuildsIndex, out: TrainingIndexLayout, record: StepRecord
) -> StepStats:
    """Index the training stream (only the ranges not indexed yet); stats written last."""
    stats = StepStats(Step.TRAINING_INDEX, provenance=record.provenance())
    built = order.build_index()
    stats.info.update(built.info)
    stats.merge(built)
    stats.write(out.stats)
    return stats


def shard_evidence(
    questions: list[Question],
    rows: Sequence[LabeledQuestion],
    shard: ShardLayout,
    fetch: FetchDocuments,
    windows: WindowSettings,
) -> dict[str, list[Evidence]]:
    """The relevant evidence of one shard's answerable questions, from its stage records."""
    answerable = {row.id for row in rows if row.label == "answerable"}
    keywords = {k.question_id: k for k in read_records(shard.keywords, Keywords)}
    return relevant_evidence(
        questions,
        answerable,
        keywords,
        iter_records(shard.token_judgments, Judgment),
        iter_records(shard.instances, VectorInstance),
        fetch,
        windows,
    )


def pool_boundary(
    shards: list[tuple[list[Question], ShardLayout]],
    fetch: FetchDocuments,
    windows: WindowSettings,
    order: TrainingOrder,
    checkpoints: Sequence[int],
    out: BoundaryLayout,
    record: StepRecord,
) -> StepStats:
    """Date a pool's answerable questions and write its split as of every checkpoint.

    The rows are the partition's (every shard's final decisions, in question order); the
    evidence is every relevant window or chunk the stages judged (`relevant_evidence`), so
    the token judge windows are cut again exactly as judged (`windows`).
    """
    rows: list[LabeledQuestion] = []
    evidence: dict[str, list[Evidence]] = {}
    for questions, shard in shards:
        labeled = label_questions(questions, shard)
        rows.extend(labeled)
        evidence.update(shard_evidence(questions, labeled, shard, fetch, windows))
    return write_boundary(rows, evidence, order, fetch, checkpoints, out, record)
