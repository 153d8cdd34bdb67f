"""The knowledge boundary over training time: the training stream's index, and each pool's
split as of every checkpoint. They run only when `[training_order]` is configured."""

from __future__ import annotations

from pathlib import Path

import luigi

from pipelines.base import Step
from pipelines.dataset import Partition
from pipelines.indexes import BuildTokenIndex, token_index
from tipqa import steps
from tipqa.boundary.hub import BoundaryHub
from tipqa.boundary.steps import build_training_index, pool_boundary
from tipqa.components import window_settings
from tipqa.config import Config
from tipqa.errors import ConfigError
from tipqa.fingerprint import StepRecord
from tipqa.inputs import shard_count
from tipqa.layout import TrainingIndexLayout
from tipqa.plan import Plan
from tipqa.training_order.base import TRAINING_ORDERS, BuildsIndex, TrainingOrder


def training_index_place(config: Config, plan: Plan) -> TrainingIndexLayout:
    """Where the stream's anchor index lives: `index_dir`, else one folder per stream."""
    record = plan.training_index
    if config.training_order is None or record is None:
        raise ConfigError("this [training_order] backend keeps no index of a training stream")
    folder = getattr(config.training_order.settings, "index_dir", "")
    if folder:
        return TrainingIndexLayout(Path(folder))
    return config.layout().training_index(record.fingerprint[:16])


def training_order(config: Config, plan: Plan) -> TrainingOrder:
    """The configured training order (given its index's place when it keeps one)."""
    choice = config.training_order
    if choice is None:
        raise ConfigError("no [training_order] section: the boundary steps do not run")
    runtime: dict[str, Path] = {}
    if plan.training_index is not None:
        runtime["index_dir"] = training_index_place(config, plan).root
    return TRAINING_ORDERS.create(choice.backend, choice.settings, **runtime)


def boundary_tasks(pools: list[str]) -> list[luigi.Task]:
    """The pools' Boundary tasks when a training order is configured, else none."""
    from pipelines.config import current

    return [Boundary(pool=pool) for pool in pools] if current().training_order else []


def hub_extension(config: Config) -> BoundaryHub | None:
    """The Hub folder's boundary configurations and card section, when configured."""
    if config.training_order is None:
        return None
    order = config.training_order.to_dict()
    return BoundaryHub(config.layout(), config.boundary.steps(), order, config.hub.repo_id)


class BuildTrainingIndex(Step):
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


class Boundary(Step):
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
            steps.pool_shards(pool, shard_count(pool)),
            token_index(config, self.plan).get,
            window_settings(config.windows, config.judge),
            training_order(config, self.plan),
            config.boundary.steps(),
            pool.boundary,
            self.record(),
        )
