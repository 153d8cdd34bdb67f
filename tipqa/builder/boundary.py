"""The boundary over training time: the training stream's index, and a pool's dated split.

`build_training_index` runs the training order's one pass over its stream (its anchor index,
kept beside the runs and reused by every build over the same stream); `pool_boundary` dates
a pool's answerable questions and writes its split as of each checkpoint. Each writes its
stats file last, with the step's provenance. The tasks call `index_training_stream` and
`date_pool`, which make their backends from the steps' records.
"""

from __future__ import annotations

from collections.abc import Sequence

from tipqa.boundary.build import shard_evidence, write_boundary
from tipqa.builder.assemble import token_index, training_index_place, training_order
from tipqa.builder.inputs import pool_shards, shard_count
from tipqa.builder.step_inputs import BoundaryInputs, TrainingIndexInputs
from tipqa.core.errors import ConfigError
from tipqa.core.fingerprint import StepRecord
from tipqa.core.layout import BoundaryLayout, RunLayout, ShardLayout, TrainingIndexLayout
from tipqa.core.records import Evidence, LabeledQuestion, Question
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


def index_training_stream(inputs: TrainingIndexInputs, layout: RunLayout) -> StepStats:
    """BuildTrainingIndex: the one streaming pass over the training stream (resumable)."""
    order = training_order(inputs.order, inputs, layout)
    if not isinstance(order, BuildsIndex):
        raise ConfigError(f"training order {inputs.order.backend!r} builds no index")
    return build_training_index(order, training_index_place(inputs, layout), inputs.record)


def date_pool(inputs: BoundaryInputs, layout: RunLayout) -> StepStats:
    """Boundary: date a pool's answerable questions; write its split as of every checkpoint."""
    pool = layout.pool(inputs.pool)
    return pool_boundary(
        pool_shards(pool, shard_count(pool)),
        token_index(inputs.index, layout).get,
        inputs.judged.window_limits(),
        training_order(inputs.order, inputs.training_index, layout),
        inputs.checkpoints,
        pool.boundary,
        inputs.record,
    )
