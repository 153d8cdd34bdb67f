"""The benchmark's splits, its Hub-ready folder and report, and the upload to the Hub."""

from __future__ import annotations

from pathlib import Path

import luigi

from pipelines.base import StepTask
from pipelines.boundary import boundary_tasks
from pipelines.config import current, plan
from pipelines.partition import Partition
from tipqa.build.assemble import hub_extension, token_index
from tipqa.build.summary import undetermined_count
from tipqa.core.errors import UndeterminedError
from tipqa.core.fingerprint import StepRecord
from tipqa.dataset.splits import make_splits
from tipqa.hub.folder import build_hub_folder
from tipqa.hub.publish import is_published, publish, record_path
from tipqa.lmeval_task.task_files import write_task_folder
from tipqa.report.build import write_report
from tipqa.report.explorer.collect import TextSource
from tipqa.report.explorer.write import write_explorer


class MakeSplits(StepTask):
    """Train / validation / test from the configured pools' partitions."""

    def requires(self) -> list[luigi.Task]:
        return [Partition(pool=name) for name in self.plan.split_plan.used_pools]

    def record(self) -> StepRecord:
        return self.plan.splits

    def stats_path(self) -> Path:
        return self.layout.splits_stats

    def run(self) -> None:
        make_splits(self.layout, self.plan.split_plan, self.record(), evaluation=write_task_folder)


class BuildHubFolder(StepTask):
    """Parquet files per configuration and split, and the dataset card."""

    def requires(self) -> list[luigi.Task]:
        return [MakeSplits(), *boundary_tasks(self.plan.split_plan.used_pools)]

    def record(self) -> StepRecord:
        return self.plan.hub_folder

    def stats_path(self) -> Path:
        return self.layout.hub_stats

    def run(self) -> None:
        config = self.config
        explorer = self.explorer if config.hub.explorer else None
        build_hub_folder(self.layout, config.hub, self.record(), hub_extension(config), explorer)

    def explorer(self, folder: Path) -> int:
        """Write the explorer page into `folder` (window texts from the token index)."""
        texts = TextSource(fetch=token_index(self.config, self.plan).get)
        return write_explorer(self.layout, texts, folder)["questions"]


class BuildReport(StepTask):
    """The build report: outcome funnel and answerability by match count (PNG and Markdown),
    and the explorer page (window texts from the token index, which the splits came from)."""

    def requires(self) -> list[luigi.Task]:
        return [MakeSplits(), *boundary_tasks(self.plan.split_plan.used_pools)]

    def record(self) -> StepRecord:
        return self.plan.report

    def stats_path(self) -> Path:
        return self.layout.report_stats

    def run(self) -> None:
        config = self.config
        checkpoints = config.boundary.steps() if config.training_order else ()
        texts = TextSource(fetch=token_index(config, self.plan).get)
        write_report(self.layout, self.record(), checkpoints, texts)


class PublishDataset(luigi.Task):
    """Upload the Hub-ready folder: `luigi --module pipelines PublishDataset --local-scheduler`.

    `--repo-id` (default: [hub] repo_id) names the dataset repository; `--dry-run` lists what
    would be uploaded. Complete when its record says this very folder content went to that
    repository, so a rebuilt folder is published again; a dry run is never complete. A build
    with undetermined questions is not published unless `--accept-undetermined` is given.
    """

    repo_id = luigi.Parameter(default="", description="owner/name (default: [hub] repo_id)")
    dry_run = luigi.BoolParameter(description="list what would be uploaded, upload nothing")
    accept_undetermined = luigi.BoolParameter(
        significant=False,
        description="publish even when questions of the splits' pools are undetermined",
    )

    def requires(self) -> luigi.Task:
        return BuildHubFolder()

    def target_repo(self) -> str:
        """The repository to publish to."""
        return self.repo_id or current().hub.repo_id

    def output(self) -> luigi.LocalTarget:
        layout = current().layout()
        return luigi.LocalTarget(record_path(layout.publish, self.target_repo(), self.dry_run))

    def complete(self) -> bool:
        if self.dry_run:
            return False
        hub = current().layout().hub
        return is_published(Path(self.output().path), hub, self.target_repo())

    def run(self) -> None:
        config = current()
        undetermined = undetermined_count(config.layout(), plan().split_plan.used_pools)
        if undetermined and not (self.accept_undetermined or self.dry_run):
            raise UndeterminedError(undetermined, str(config.layout().summary))
        record = Path(self.output().path)
        publish(config.layout().hub, config.hub, self.target_repo(), self.dry_run, record)
