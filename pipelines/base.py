"""What every tipqa task shares: completion by fingerprint, and the run's configuration.

A step's dependencies (`requires()`, then `dynamic_requires()`) are the steps whose outputs
its plan record lists as inputs (tests/pipelines/test_step_inputs.py checks every task).
"""

from __future__ import annotations

from pathlib import Path

import luigi

from pipelines.config import current, plan
from tipqa.build.plan import Plan
from tipqa.config import Config
from tipqa.core.fingerprint import StepRecord
from tipqa.core.layout import RunLayout
from tipqa.core.stats import recorded_fingerprint


class StepTarget(luigi.LocalTarget):
    """A step's stats file; it exists only when it records the expected fingerprint.

    A stats file written under other settings (or by another schema version) does not count,
    so the step runs again and replaces it.
    """

    def __init__(self, path: Path, fingerprint: str) -> None:
        super().__init__(str(path))
        self.fingerprint = fingerprint

    def exists(self) -> bool:
        """True when the stats file records this target's fingerprint (cheap: one small read)."""
        return recorded_fingerprint(self.path) == self.fingerprint


class StepTask(luigi.Task):
    """A task whose output is its stats file, complete when the fingerprint matches.

    A failure is final for the run (`retry_count = 1`: the scheduler disables the task at once),
    so clients that wait for other clients' tasks (`--worker-keep-alive`) stop instead of
    waiting for a retry; running the command again retries it.
    """

    retry_count = 1

    def record(self) -> StepRecord:
        """This step's settings, inputs and fingerprint (from the build plan)."""
        raise NotImplementedError

    def stats_path(self) -> Path:
        """Where this step writes its stats file."""
        raise NotImplementedError

    def output(self) -> StepTarget:
        return StepTarget(self.stats_path(), self.record().fingerprint)

    def dynamic_requires(self) -> list[luigi.Task]:
        """The tasks `run` yields before its work, known once `requires()` are complete."""
        return []

    def as_input(self) -> str:
        """The fingerprint that the steps reading this step's output record for it."""
        return self.record().fingerprint

    @property
    def config(self) -> Config:
        """The run's configuration."""
        return current()

    @property
    def plan(self) -> Plan:
        """The run's build plan."""
        return plan()

    @property
    def layout(self) -> RunLayout:
        """The run's output tree."""
        return current().layout()
