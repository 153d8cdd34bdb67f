"""The knowledge boundary over training time: the training stream's index, and each pool's
split as of every checkpoint. They run only when `[training_order]` is configured."""

from __future__ import annotations

from pathlib import Path

import luigi

from pipelines.base import StepTask
from pipelines.config import current
from pipelines.indexes import BuildTokenIndex
from pipelines.partition import Partition
from tipqa.boundary.steps import build_training_index, pool_boundary
from tipqa.build.assemble import token_index, training_index_place, training_order
from tipqa.build.components import window_settings
from tipqa.build.inputs import pool_shards, shard_count
from tipqa.core.errors import ConfigError
from tipqa.core.fingerprint import StepRecord
from tipqa.training_order.base import BuildsIndex


def boundary_tasks(pools: list[str]) -> list[luigi.Task]:
    """The pools' Boundary tasks when a training order is configured, else none."""
    return [Boundary(pool=pool) for pool in pools] if current().training_order else []


class BuildTrainingIndex(StepTask):
    """The one streaming pass over the training stream (resumable; reused by every build)."""

    def record(self) -> StepRecord:
        record = self.plan.training_index
        if record is None:
            raise ConfigError("this [training_order] backend keeps no index of a training stream")
        return record

    def stats_path(self) -> Path:
        return training_index_place(self.config, self.plan).stats

    def run(self) -> None:
        order = training_order(self.config, self.plan)
        if not isinstance(order, BuildsIndex):
            raise ConfigError(f"training order {self.config.training_order} builds no index")
        build_training_index(order, training_index_place(self.config, self.plan), self.record())


class Boundary(StepTask):
    """Date a pool's answerable questions; write its split as of every checkpoint."""

    pool = luigi.Parameter()

    def requires(self) -> list[luigi.Task]:
        index = [BuildTrainingIndex()] if self.plan.training_index is not None else []
        return [Partition(pool=self.pool), BuildTokenIndex(), *index]

    def record(self) -> StepRecord:
        return self.plan.boundary(self.pool)

    def stats_path(self) -> Path:
        return self.layout.pool(self.pool).boundary.stats

    def run(self) -> None:
        config = self.config
        pool = self.layout.pool(self.pool)
        pool_boundary(
            pool_shards(pool, shard_count(pool)),
            token_index(config, self.plan).get,
            window_settings(config.judging, config.judge),
            training_order(config, self.plan),
            config.boundary.steps(),
            pool.boundary,
            self.record(),
        )
