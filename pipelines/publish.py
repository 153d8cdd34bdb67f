"""The benchmark's splits, its Hub-ready folder and report, and the upload to the Hub."""

from __future__ import annotations

from pathlib import Path

import luigi

from pipelines.config import Section, build, questions
from pipelines.dataset import Partition
from tipqa.hub.folder import build_hub_folder
from tipqa.hub.publish import is_published, publish, record_path
from tipqa.report import write_report
from tipqa.splits import SplitProtocol, SplitsLayout, make_splits


class splits(Section):
    """[splits]: which pool feeds which split (the paper: test from dev, the rest from train)."""

    test_pool = luigi.Parameter(default="dev", description="pool of the test split")
    train_pool = luigi.Parameter(
        default="train", description="pool of train and validation; absent or empty: test only"
    )
    validation_per_label = luigi.IntParameter(
        default=1000, description="validation questions per label (balanced)"
    )
    seed = luigi.IntParameter(default=0, description="seed of the validation sample")

    def protocol(self) -> SplitProtocol:
        """The split protocol for the configured pools."""
        return SplitProtocol.configured(
            self.test_pool,
            self.train_pool,
            self.validation_per_label,
            self.seed,
            questions().pools,
        )


class hub(Section):
    """[hub]: the Hub-ready folder, its card, and where PublishDataset uploads it."""

    repo_id = luigi.Parameter(default="", description="owner/name of the dataset repository")
    private = luigi.BoolParameter(default=True, parsing=luigi.BoolParameter.EXPLICIT_PARSING)
    dry_run = luigi.BoolParameter(default=False, description="list what would be uploaded")
    folder = luigi.Parameter(default="", description="Hub-ready folder (default: <run>/hub)")
    endpoint = luigi.Parameter(default="", description="Hub URL (default: HF_ENDPOINT or the Hub)")
    revision = luigi.Parameter(default="main")
    pretty_name = luigi.Parameter(default="", description="the card's title")
    language = luigi.Parameter(default="en")
    license = luigi.Parameter(default="", description="the card's license id (empty: none)")
    rows_per_file = luigi.IntParameter(default=100_000, description="rows per Parquet file")

    def path(self) -> Path:
        """The Hub-ready folder."""
        return Path(self.folder) if self.folder else build().layout().root / "hub"


class MakeSplits(luigi.Task):
    """Train / validation / test from the configured pools' partitions."""

    def requires(self) -> list[luigi.Task]:
        protocol = splits().protocol()
        pools = [protocol.test_pool, protocol.train_pool]
        return [Partition(pool=name) for name in pools if name is not None]

    def output(self) -> luigi.LocalTarget:
        return luigi.LocalTarget(SplitsLayout(build().layout().splits).stats)

    def run(self) -> None:
        protocol = splits().protocol()
        layout = build().layout()
        train = layout.pool(protocol.train_pool).partition if protocol.train_pool else None
        make_splits(layout.pool(protocol.test_pool).partition, train, protocol, layout.splits)


class BuildHubFolder(luigi.Task):
    """Parquet files per configuration and split, and the dataset card."""

    def requires(self) -> luigi.Task:
        return MakeSplits()

    def output(self) -> luigi.LocalTarget:
        return luigi.LocalTarget(hub().path() / "README.md")

    def run(self) -> None:
        settings = hub().settings()
        build_hub_folder(build().layout().splits, hub().path(), settings, hub().rows_per_file)


class BuildReport(luigi.Task):
    """The build report: outcome funnel and answerability by match count (PNG and Markdown)."""

    def requires(self) -> luigi.Task:
        return MakeSplits()

    def output(self) -> luigi.LocalTarget:
        return luigi.LocalTarget(build().layout().root / "report" / "report.md")

    def run(self) -> None:
        write_report(build().layout().splits, build().layout().root / "report")


class PublishDataset(luigi.Task):
    """Upload the Hub-ready folder: `luigi --module pipelines PublishDataset --local-scheduler`.

    Complete when its record says this very folder content went to `[hub] repo_id`, so a
    rebuilt folder is published again; a dry run is never complete (it runs every time).
    """

    def requires(self) -> luigi.Task:
        return BuildHubFolder()

    def output(self) -> luigi.LocalTarget:
        folder = build().layout().root / "publish"
        return luigi.LocalTarget(record_path(folder, hub().repo_id, hub().dry_run))

    def complete(self) -> bool:
        if hub().dry_run:
            return False
        return is_published(Path(self.output().path), hub().path(), hub().repo_id)

    def run(self) -> None:
        publish(hub().path(), hub().settings(), Path(self.output().path))
