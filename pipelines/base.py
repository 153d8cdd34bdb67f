"""What every tipqa task shares: the run's plan and layout, and completion by fingerprint.

This module and `pipelines.config` are where the tasks read the configuration: through the
build plan, which gives every step its inputs record. A step's dependencies (`requires()`,
then `dynamic_requires()`) are the steps whose outputs its record lists as inputs
(tests/pipelines/test_step_inputs.py checks every task).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import luigi

from pipelines.config import plan
from tipqa.builder.plan import Plan
from tipqa.core.fingerprint import StepInputs, StepRecord
from tipqa.core.layout import RunLayout
from tipqa.core.stats import recorded_fingerprint


class StepTarget(luigi.LocalTarget):
    """A step's stats file; it exists only when it records the expected fingerprint and the
    step's main outputs (`outputs`) are there.

    A stats file written under other settings (or by another schema version) does not count,
    so the step runs again and replaces it; nor does one whose outputs were deleted by hand.
    """

    def __init__(self, path: Path, fingerprint: str, outputs: Sequence[Path] = ()) -> None:
        super().__init__(str(path))
        self.fingerprint = fingerprint
        self.outputs = tuple(outputs)

    def exists(self) -> bool:
        """True when the stats file records this target's fingerprint and every output exists
        (cheap: one small read and a few `stat` calls)."""
        if recorded_fingerprint(self.path) != self.fingerprint:
            return False
        return all(path.exists() for path in self.outputs)


class OfTheRun(luigi.Task):
    """A task of the run: it sees the run's build plan and output tree."""

    @property
    def plan(self) -> Plan:
        """The run's build plan (every step's inputs record)."""
        return plan()

    @property
    def layout(self) -> RunLayout:
        """The run's output tree."""
        return plan().layout


class StepTask(OfTheRun):
    """A task whose output is its stats file, complete when the fingerprint matches and its
    main outputs (`outputs()`) exist.

    A step that starts removes the stats file of its last run (`_forget_last_run`): what that
    file describes is about to be replaced, so a failure leaves no record that says the step
    finished. A step whose record describes what lives outside the run (`keeps_last_record`:
    the projects a push made on a Label Studio server) keeps it, since a failed run there
    leaves that true. A failure is final for the run (`retry_count = 1`: the scheduler disables the
    task at once), so clients that wait for other clients' tasks (`--worker-keep-alive`) stop
    instead of waiting for a retry; running the command again retries it.
    """

    retry_count = 1
    keeps_last_record = False

    def inputs(self) -> StepInputs:
        """This step's inputs record (from the build plan)."""
        raise NotImplementedError

    def record(self) -> StepRecord:
        """This step's settings, inputs and fingerprint."""
        return self.inputs().record

    def stats_path(self) -> Path:
        """Where this step writes its stats file."""
        raise NotImplementedError

    def outputs(self) -> list[Path]:
        """The step's main outputs, which must exist beside its stats file for it to be
        complete (none where the stats file is the output, or the output lives elsewhere)."""
        raise NotImplementedError

    def output(self) -> StepTarget:
        return StepTarget(self.stats_path(), self.record().fingerprint, self.outputs())

    def dynamic_requires(self) -> list[luigi.Task]:
        """The tasks `run` yields before its work, known once `requires()` are complete."""
        return []

    def as_input(self) -> str:
        """The fingerprint that the steps reading this step's output record for it."""
        return self.record().fingerprint


@StepTask.event_handler(luigi.Event.START)
def _forget_last_run(task: StepTask) -> None:
    """Remove the stats file of the step's last run as the step starts (see `StepTask`)."""
    if task.keeps_last_record:
        return
    task.stats_path().unlink(missing_ok=True)
