"""The boundary over training time: the training stream's index, and a pool's dated split."""

from __future__ import annotations

from tipqa.boundary.steps import build_training_index, pool_boundary
from tipqa.build.assemble import token_index, training_index_place, training_order
from tipqa.build.inputs import pool_shards, shard_count
from tipqa.build.step_inputs import BoundaryInputs, TrainingIndexInputs
from tipqa.core.errors import ConfigError
from tipqa.core.layout import RunLayout
from tipqa.core.stats import StepStats
from tipqa.training_order.base import BuildsIndex


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
