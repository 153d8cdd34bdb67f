"""How far the labels can be trusted: a pool's audit, and its questions counted verbatim."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import luigi

from pipelines.base import OfTheRun, StepTarget, StepTask
from pipelines.gpus import on_gpu, step_gpus
from pipelines.indexes import BuildTokenIndex, BuildVectorIndex
from pipelines.inputs import PrepareQuestions
from pipelines.partition import Partition
from tipqa.audit.pool import read_the_current_partition
from tipqa.builder.audit import audit, verbatim
from tipqa.builder.step_inputs import AuditInputs, VerbatimInputs
from tipqa.core.layout import PoolLayout


class AuditTarget(StepTarget):
    """An audit's stats file: it exists when it records the expected fingerprint and the audit
    read the pool's partition as it is now (`tipqa.audit.pool.read_the_current_partition`)."""

    def __init__(
        self, path: Path, fingerprint: str, outputs: Sequence[Path], pool: PoolLayout
    ) -> None:
        super().__init__(path, fingerprint, outputs)
        self.pool = pool

    def exists(self) -> bool:
        """True when the fingerprint matches and the partition is the one the audit read."""
        return super().exists() and read_the_current_partition(self.pool)


class Audit(StepTask):
    """Search a sample of the pool's unanswerable and discarded questions where the build did
    not, judge what it never judged, and write `audit.json` (`[audit]`; `sample = 0`: off)."""

    pool = luigi.Parameter()
    accept_undetermined = luigi.BoolParameter(
        significant=False,
        description="finish even when audited questions are undetermined (a judgment failed); "
        "given to every pool's audit as --Audit-accept-undetermined",
    )

    def requires(self) -> list[luigi.Task]:
        return [Partition(pool=self.pool), BuildTokenIndex(), BuildVectorIndex()]

    def inputs(self) -> AuditInputs:
        return self.plan.audit(self.pool)

    def stats_path(self) -> Path:
        return self.layout.pool(self.pool).audit_stats

    def outputs(self) -> list[Path]:
        pool = self.layout.pool(self.pool)
        return [pool.audit, pool.audit_judgments]

    def output(self) -> StepTarget:
        return AuditTarget(
            self.stats_path(),
            self.record().fingerprint,
            self.outputs(),
            self.layout.pool(self.pool),
        )

    @property
    def resources(self) -> dict[str, int]:  # type: ignore[override]
        """The GPUs of the judge's engine, as the judging steps take them."""
        return step_gpus(lambda: self.inputs().llm)

    def run(self) -> None:
        inputs = self.inputs()
        with on_gpu(inputs.llm, self.layout):
            audit(inputs, self.layout, accept_undetermined=self.accept_undetermined)


class CountVerbatim(StepTask):
    """Count the documents that contain each of the pool's questions verbatim."""

    pool = luigi.Parameter()

    def requires(self) -> list[luigi.Task]:
        return [PrepareQuestions(pool=self.pool), BuildTokenIndex()]

    def inputs(self) -> VerbatimInputs:
        return self.plan.verbatim(self.pool)

    def stats_path(self) -> Path:
        return self.layout.pool(self.pool).verbatim_stats

    def outputs(self) -> list[Path]:
        return [self.layout.pool(self.pool).verbatim]

    def run(self) -> None:
        verbatim(self.inputs(), self.layout)


def audit_tasks(task: OfTheRun, pools: list[str]) -> list[luigi.Task]:
    """The audits of `pools` when `task`'s run audits them, else none."""
    return [Audit(pool=pool) for pool in pools] if task.plan.audited else []
