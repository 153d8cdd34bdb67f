"""How far the labels can be trusted: a pool's audit, and its questions counted verbatim."""

from __future__ import annotations

from pathlib import Path

import luigi

from pipelines.base import Step
from pipelines.config import current
from pipelines.gpus import GPU, configured_gpus, engine_gpus, on_gpu
from pipelines.indexes import BuildTokenIndex, BuildVectorIndex
from pipelines.inputs import PrepareQuestions
from pipelines.partition import Partition
from tipqa.build import steps
from tipqa.build.assemble import auditing, token_index
from tipqa.build.inputs import shard_count
from tipqa.core.fingerprint import StepRecord


class Audit(Step):
    """Search a sample of the pool's unanswerable and discarded questions where the build did
    not, judge what it never judged, and write `audit.json` (`[audit]`; `sample = 0`: off)."""

    pool = luigi.Parameter()

    def requires(self) -> list[luigi.Task]:
        return [Partition(pool=self.pool), BuildTokenIndex(), BuildVectorIndex()]

    def record(self) -> StepRecord:
        return self.plan.audit(self.pool)

    def stats_path(self) -> Path:
        return self.layout.pool(self.pool).audit_stats

    @property
    def resources(self) -> dict[str, int]:  # type: ignore[override]
        """The judge's GPUs, as the judging steps take them (`pipelines.shard_steps`)."""
        gpus = engine_gpus(self.plan.audit_inputs(self.pool).judge)
        return {GPU: gpus} if gpus and configured_gpus() is not None else {}

    def run(self) -> None:
        inputs = self.plan.audit_inputs(self.pool)
        pool = self.layout.pool(self.pool)
        with on_gpu(self.config, inputs.judge):
            steps.audit(inputs, auditing(inputs, self.config, self.plan), pool, shard_count(pool))


class CountVerbatim(Step):
    """Count the documents that contain each of the pool's questions verbatim."""

    pool = luigi.Parameter()

    def requires(self) -> list[luigi.Task]:
        return [PrepareQuestions(pool=self.pool), BuildTokenIndex()]

    def record(self) -> StepRecord:
        return self.plan.verbatim(self.pool)

    def stats_path(self) -> Path:
        return self.layout.pool(self.pool).verbatim_stats

    def run(self) -> None:
        index = token_index(self.config, self.plan)
        steps.verbatim(self.plan.verbatim_inputs(self.pool), index, self.layout.pool(self.pool))


def audit_tasks(pools: list[str]) -> list[luigi.Task]:
    """The audits of `pools`, when the audit is on."""
    return [Audit(pool=pool) for pool in pools] if current().audit.on else []
