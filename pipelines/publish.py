"""The benchmark's splits, its Hub-ready folder and report, and the upload to the Hub."""

from __future__ import annotations

from pathlib import Path

import luigi

from pipelines.annotation import AnnotationAgreement
from pipelines.audit import CountVerbatim, audit_tasks
from pipelines.base import OfTheRun, StepTask
from pipelines.boundary import boundary_tasks
from pipelines.indexes import BuildTokenIndex
from pipelines.partition import Partition
from tipqa.builder.publish import publish_hub_folder, write_splits
from tipqa.builder.step_inputs import HubInputs, ReportInputs, SplitsInputs
from tipqa.core.layout import SplitsLayout
from tipqa.hub.publish import is_published, record_path
from tipqa.report.build import page_is_its_own, write_build_report
from tipqa.report.hub_folder import write_hub_folder


class MakeSplits(StepTask):
    """Train / validation / test from the configured pools' partitions."""

    def requires(self) -> list[luigi.Task]:
        split_plan = self.plan.split_plan
        pools = split_plan.used_pools
        verbatim = [CountVerbatim(pool=name) for name in pools] if split_plan.verbatim else []
        audits = audit_tasks(self, pools) if split_plan.apply_audit else []
        return [*(Partition(pool=name) for name in pools), *verbatim, *audits]

    def inputs(self) -> SplitsInputs:
        return self.plan.splits

    def stats_path(self) -> Path:
        return self.layout.splits_stats

    def outputs(self) -> list[Path]:
        splits = SplitsLayout(self.layout.splits)
        names = self.inputs().split_plan.splits
        return [path for name in names for path in (splits.questions(name), splits.instances(name))]

    def run(self) -> None:
        write_splits(self.inputs(), self.layout)


def shown_tasks(task: OfTheRun) -> list[luigi.Task]:
    """What the Hub folder and the report show beside the splits: the boundaries and audits of
    the splits' pools, and the token index (the explorer's window texts come from it)."""
    pools = task.plan.split_plan.used_pools
    return [
        MakeSplits(),
        *boundary_tasks(task, pools),
        *audit_tasks(task, pools),
        BuildTokenIndex(),
    ]


class BuildHubFolder(StepTask):
    """Parquet files per configuration and split, and the dataset card (with the audits, and
    the judge's agreement with people once annotations are imported), and the explorer page,
    whose window texts come from the token index: it is required too."""

    def requires(self) -> list[luigi.Task]:
        agreement = [AnnotationAgreement()] if self.inputs().agreement is not None else []
        return [*shown_tasks(self), *agreement]

    def inputs(self) -> HubInputs:
        return self.plan.hub_folder

    def stats_path(self) -> Path:
        return self.layout.hub_stats

    def outputs(self) -> list[Path]:
        return [self.layout.hub / "README.md"]

    def run(self) -> None:
        write_hub_folder(self.inputs(), self.layout)


class BuildReport(StepTask):
    """The build report: outcome funnel and answerability by match count (PNG and Markdown),
    and the explorer page (window texts from the token index, which the splits came from).
    Complete only while the page is the one it wrote: a page written again by `tipqa explore`
    (another audit sample, another build to compare) is written again from the build's own."""

    def requires(self) -> list[luigi.Task]:
        return shown_tasks(self)

    def complete(self) -> bool:
        return super().complete() and page_is_its_own(self.layout, self.record().fingerprint)

    def inputs(self) -> ReportInputs:
        return self.plan.report

    def stats_path(self) -> Path:
        return self.layout.report_stats

    def outputs(self) -> list[Path]:
        return [self.layout.report / "report.md"]

    def run(self) -> None:
        write_build_report(self.inputs(), self.layout)


class PublishDataset(OfTheRun):
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
        return self.repo_id or self.plan.hub_folder.hub.repo_id

    def output(self) -> luigi.LocalTarget:
        return luigi.LocalTarget(record_path(self.layout.publish, self.target_repo(), self.dry_run))

    def complete(self) -> bool:
        if self.dry_run:
            return False
        return is_published(Path(self.output().path), self.layout.hub, self.target_repo())

    def run(self) -> None:
        publish_hub_folder(
            self.plan.hub_folder,
            self.layout,
            self.plan.split_plan.used_pools,
            self.target_repo(),
            dry_run=self.dry_run,
            accept_undetermined=self.accept_undetermined,
        )
