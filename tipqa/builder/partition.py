"""Partition: a pool's shard decisions collected into its label files, with how they were made."""

from __future__ import annotations

from tipqa.builder.inputs import pool_shards, shard_count
from tipqa.builder.step_inputs import PartitionInputs
from tipqa.core.layout import RunLayout
from tipqa.core.stats import StepStats
from tipqa.dataset.partition import write_partition
from tipqa.dataset.provenance import pool_provenance


def partition_pool(inputs: PartitionInputs, layout: RunLayout) -> StepStats:
    """Write the pool's partition from every shard's decisions (each shard's steps done)."""
    pool = layout.pool(inputs.pool)
    count = shard_count(pool)
    build = pool_provenance(layout, inputs.pool, count)
    return write_partition(pool_shards(pool, count), pool.partition_files, inputs.record, build)
