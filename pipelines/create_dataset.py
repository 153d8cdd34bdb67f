"""CreateDataset, the entry point of a build: every step's outputs, then the build's summary."""

from __future__ import annotations

import os
import socket

import luigi

from pipelines.audit import audit_tasks
from pipelines.base import OfTheRun
from pipelines.boundary import boundary_tasks
from pipelines.indexes import BuildTokenIndex
from pipelines.partition import Partition
from pipelines.publish import BuildHubFolder, BuildReport
from pipelines.summary import announce
from tipqa.builder.summary import finish_build


class CreateDataset(OfTheRun):
    """Build the whole benchmark: `luigi --module pipelines CreateDataset --local-scheduler`.

    Every pool's partition (and, with a `[training_order]`, its split as of each checkpoint;
    with `[audit] sample` above 0, its audit), the splits, the Hub-ready folder and the
    report; then a summary
    of what was built (printed, and in `<run>/summary.md`). It runs every time, so the
    summary is printed every time; the steps behind it rerun only when their settings or
    inputs changed. Publishing is a separate task (PublishDataset). A build that leaves
    questions undetermined fails (a non-zero exit) unless `--accept-undetermined` is given.

    Each `luigi` command is a client of its own (`client`, its host and process id), so with
    several clients on one central scheduler every client runs its own CreateDataset once the
    steps (each run once, by whichever client) are done: each prints the summary and exits 0
    only when the build finished (`pipelines/exit_codes.py`).
    """

    retry_count = 1
    client = luigi.Parameter(
        default=f"{socket.gethostname()}-{os.getpid()}",
        description="this client's name (default: host and process id); each client's "
        "CreateDataset is a task of its own",
    )
    accept_undetermined = luigi.BoolParameter(
        significant=False,
        description="finish with a zero exit code even when questions are undetermined",
    )

    def requires(self) -> list[luigi.Task]:
        """Every output of the build, the token index too (the explorer reads it): a build
        that failed may have removed it after the steps that read it had finished."""
        names = self.plan.pool_names
        pools = [Partition(pool=name) for name in names]
        return [
            *pools,
            *boundary_tasks(self, names),
            *audit_tasks(self, names),
            BuildHubFolder(),
            BuildReport(),
            BuildTokenIndex(),
        ]

    def complete(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"{self.task_family}()"

    def run(self) -> None:
        finish_build(
            self.layout,
            self.plan.pool_names,
            os.environ.get("LUIGI_CONFIG_PATH"),
            announce,
            boundary=self.plan.training_order is not None,
            audited=self.plan.audited,
            accept_undetermined=self.accept_undetermined,
        )
